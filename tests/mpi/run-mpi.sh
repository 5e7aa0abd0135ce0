#!/bin/sh
# Run one multi-rank test binary under mpirun: one Automake test.
#
#   run-mpi.sh NP ALGO PROGRAM [ARGS...]
#
# NP ranks (oversubscribing the cores if needed), CHORUS_ALGO=ALGO, PROGRAM
# from the current (build) directory.  Exit status: 0 pass, 77 skip (no
# mpirun, or PROGRAM not built), anything else fail; the whole run is killed
# after CHORUS_TEST_TIMEOUT seconds (600).
#
# Environment: MPIEXEC and MPIEXEC_FLAGS (configure's, passed by make; when
# MPIEXEC_FLAGS is empty the flags are chosen here), CHORUS_TEST_LAYOUT
# (several nodes on this machine, see hostid-wrap.sh), CHORUS_TIMEOUT
# (default 60 here, so that a hung collective fails with an error naming the
# peer well before the outer timeout), any other CHORUS_* setting.
set -u

if [ $# -lt 3 ]; then
  echo "usage: $0 NP ALGO PROGRAM [ARGS...]" >&2
  exit 99
fi
np=$1
algo=$2
prog=$3
shift 3

mpirun=${MPIEXEC:-mpirun}
if ! command -v "$mpirun" >/dev/null 2>&1; then
  echo "skipped: $mpirun not found"
  exit 77
fi
if [ ! -x "./$prog" ]; then
  echo "skipped: ./$prog not built (Boost.Test missing?)"
  exit 77
fi

# Open MPI needs flags MPICH does not know: more ranks than cores, no binding,
# and no AVX op component (4.1.4's AVX int8 sums saturate instead of wrapping,
# which would make MPI, not Chorus, wrong).  Running as root needs consent.
flags=${MPIEXEC_FLAGS:-}
if "$mpirun" --version 2>&1 </dev/null | grep -q "Open MPI\|OpenRTE"; then
  [ -n "$flags" ] || flags="--oversubscribe --bind-to none --mca op ^avx"
  if [ "$(id -u)" = 0 ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
  fi
fi

CHORUS_ALGO=$algo
CHORUS_TIMEOUT=${CHORUS_TIMEOUT:-60}
# A failed collective writes its flight recorder: here, not in /tmp.
CHORUS_TRACE_FILE=${CHORUS_TRACE_FILE:-$PWD/trace-%h-%p.txt}
export CHORUS_ALGO CHORUS_TIMEOUT CHORUS_TRACE_FILE

# Several nodes played on this machine: each rank's CHORUS_HOSTID comes from
# CHORUS_TEST_LAYOUT (hostid-wrap.sh), and ranks on different "nodes" talk
# over UCX's tcp transport unless UCX_TLS says otherwise.
wrap=
if [ -n "${CHORUS_TEST_LAYOUT:-}" ]; then
  info=../../tools/chorus_info
  if [ -x "$info" ] && ! "$info" </dev/null 2>/dev/null | grep -q "UCX *: yes"; then
    echo "skipped: layout $CHORUS_TEST_LAYOUT needs the UCX transport, and this build has none"
    exit 77
  fi
  wrap="$(cd "$(dirname "$0")" && pwd)/hostid-wrap.sh"
  UCX_TLS=${UCX_TLS:-tcp}
  export CHORUS_TEST_LAYOUT UCX_TLS
fi

echo "$mpirun -np $np $flags $wrap ./$prog $* (CHORUS_ALGO=$CHORUS_ALGO CHORUS_TIMEOUT=$CHORUS_TIMEOUT${CHORUS_TEST_LAYOUT:+ CHORUS_TEST_LAYOUT=$CHORUS_TEST_LAYOUT UCX_TLS=$UCX_TLS})"
start=$(date +%s)
# shellcheck disable=SC2086
timeout --kill-after=10 "${CHORUS_TEST_TIMEOUT:-600}" \
  "$mpirun" -np "$np" $flags $wrap "./$prog" "$@" </dev/null
rc=$?
echo "exit status $rc after $(( $(date +%s) - start )) s"
if [ $rc = 124 ] || [ $rc = 137 ]; then
  echo "FAIL: timed out after ${CHORUS_TEST_TIMEOUT:-600} s"
  exit 1
fi
# 77 from a program would read as "skipped"; only this script skips.
[ $rc = 77 ] && exit 1
exit $rc
