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
# Environment: MPIEXEC and MPIEXEC_FLAGS (configure's, passed by make; the
# flags are added to those scripts/mpirun-flags.sh picks), CHORUS_TEST_LAYOUT
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

# The launcher, its flags (MPIEXEC_FLAGS added) and the skips: launch-common.sh.
. "$(dirname "$0")/launch-common.sh"
launch_prepare "$prog"

CHORUS_ALGO=$algo
CHORUS_TIMEOUT=${CHORUS_TIMEOUT:-60}
# A failed collective writes its flight recorder: here, not in /tmp.
CHORUS_TRACE_FILE=${CHORUS_TRACE_FILE:-$PWD/trace-%h-%p.txt}
export CHORUS_ALGO CHORUS_TIMEOUT CHORUS_TRACE_FILE

# Several nodes played on this machine: each rank's CHORUS_HOSTID comes from
# CHORUS_TEST_LAYOUT (hostid-wrap.sh), and ranks on different "nodes" talk
# over UCX's tcp transport unless UCX_TLS says otherwise.
launch_layout

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
