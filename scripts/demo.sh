#!/usr/bin/env bash
# demo.sh - build what the demo runs and run it on 4 ranks.  Extra arguments
# are passed to the demo.
#
# The demo runs on host buffers and needs none of the CUDA kernels, so it
# does not wait for the full build (scripts/setup.sh, _build, which
# scripts/test.sh and installs use): it installs the packages
# (setup.sh --deps-only), then builds the host-only library and the demo
# alone in _build_demo (--without-cuda --disable-static).
#
# Environment: CHORUS_JOBS (make parallelism, default 2).
set -euo pipefail

cd "$(dirname "$0")/.."
jobs=${CHORUS_JOBS:-2}

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_op=^avx  # Open MPI 4.1.4's AVX int8 sums saturate

bash scripts/setup.sh --deps-only
mkdir -p _build_demo
if [ ! -f _build_demo/Makefile ]; then
  (cd _build_demo && ../configure --without-cuda --disable-static --disable-fortran)
fi
make -C _build_demo/src -j"$jobs" libchorus.la
make -C _build_demo -j"$jobs" examples/demo
# The launcher and its flags (Open MPI or MPICH): scripts/mpirun-flags.sh.
. scripts/mpirun-flags.sh
exec "$mpirun" -np 4 $mpirun_flags _build_demo/examples/demo "$@" </dev/null
