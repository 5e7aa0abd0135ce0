#!/usr/bin/env bash
# demo.sh - build Chorus (scripts/setup.sh) and run the demo on 4 ranks.
# Extra arguments are passed to the demo.
set -euo pipefail

cd "$(dirname "$0")/.."

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_op=^avx  # Open MPI 4.1.4's AVX int8 sums saturate

bash scripts/setup.sh
make -C _build examples/demo
# The launcher and its flags (Open MPI or MPICH): scripts/mpirun-flags.sh.
. scripts/mpirun-flags.sh
exec "$mpirun" -np 4 $mpirun_flags _build/examples/demo "$@" </dev/null
