#!/bin/sh
# Run the GPU test under mpirun with NP ranks (several ranks share a GPU when
# there are fewer GPUs than ranks), once per device protocol: Chorus reads
# CHORUS_PROTO once per process, so each protocol needs its own run.
# Exit status: 0 pass, 77 skip (no mpirun, no GPU: the test itself prints
# "skipped: no GPU"), anything else fail.
#
#   run-gpu.sh NP [PROGRAM [ARGS...]]
#   CHORUS_TEST_PROTOS="simple ll auto" (default; auto interleaves both by size) lists the protocols to run.
set -u
np=$1
prog=${2:-test_gpu}
shift
[ $# -gt 0 ] && shift
# The launcher and its flags: scripts/mpirun-flags.sh (MPIRUN_FLAGS added).
. "$(dirname "$0")/../../scripts/mpirun-flags.sh"
if [ "$mpirun_impl" = none ]; then
  echo "skipped: $mpirun not found"
  exit 77
fi
if [ ! -x "./$prog" ]; then
  echo "skipped: ./$prog not built"
  [ -n "${CHORUS_GPU_MUST_RUN:-}" ] && exit 1
  exit 77
fi
export CHORUS_TIMEOUT=${CHORUS_TIMEOUT:-120}
# A build with the CPU emulation of CUDA (src/cuda/emu) gets two ranks per
# emulated device, as on a machine with fewer GPUs than ranks; real CUDA
# ignores this.
if [ "$np" -gt 1 ]; then
  export CHORUS_EMU_DEVICES=${CHORUS_EMU_DEVICES:-$((np / 2))}
fi
# Several nodes played on this machine (../mpi/hostid-wrap.sh): device
# buffers then cross "nodes" through the device proxy, over UCX tcp.
wrap=
if [ -n "${CHORUS_TEST_LAYOUT:-}" ]; then
  wrap="$(cd "$(dirname "$0")/../mpi" && pwd)/hostid-wrap.sh"
  UCX_TLS=${UCX_TLS:-tcp}
  export CHORUS_TEST_LAYOUT UCX_TLS
fi
status=0
for proto in ${CHORUS_TEST_PROTOS:-simple ll auto}; do
  # shellcheck disable=SC2086  # the flags are words
  CHORUS_PROTO="$proto" timeout "${CHORUS_TEST_TIMEOUT:-900}" "$mpirun" $mpirun_flags ${MPIRUN_FLAGS:-} -np "$np" $wrap "./$prog" "$@" </dev/null
  rc=$?
  # No GPU: every protocol would skip alike.  The emulated build always has
  # devices (CHORUS_GPU_MUST_RUN, tests/gpu/Makefile.am): a skip is a failure.
  if [ $rc = 77 ] && [ -n "${CHORUS_GPU_MUST_RUN:-}" ]; then
    echo "FAIL: $prog -np $np skipped in a build with the CUDA emulation"
    exit 1
  fi
  [ $rc = 77 ] && exit 77
  [ $rc = 124 ] && echo "FAIL: $prog -np $np (CHORUS_PROTO=$proto) killed after ${CHORUS_TEST_TIMEOUT:-900} s"
  [ $rc != 0 ] && status=$rc
done
exit $status
