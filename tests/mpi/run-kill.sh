#!/bin/sh
# run-kill.sh NP: test_kill under mpirun with the last rank killed at the
# sixth allreduce.  Passes when every survivor printed PASS (an error naming
# a rank within CHORUS_TIMEOUT), no rank printed FAIL, and the job ended
# within the outer limit.  CHORUS_TEST_LAYOUT as for run-mpi.sh.
np=$1
mpirun=${MPIEXEC:-mpirun}
command -v "$mpirun" >/dev/null 2>&1 || { echo "skipped: $mpirun not found"; exit 77; }
[ -x ./test_kill ] || { echo "skipped: ./test_kill not built"; exit 77; }
"$mpirun" --version 2>&1 </dev/null | grep -q "Open MPI\|OpenRTE" || { echo "skipped: needs Open MPI's mpirun flags"; exit 77; }
info=../../tools/chorus_info
if [ -n "${CHORUS_TEST_LAYOUT:-}" ] && [ -x "$info" ] && ! "$info" </dev/null 2>/dev/null | grep -q "UCX *: yes"; then
  echo "skipped: layout $CHORUS_TEST_LAYOUT needs the UCX transport"; exit 77
fi
if [ "$(id -u)" = 0 ]; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
CHORUS_TIMEOUT=${CHORUS_TIMEOUT:-10}
UCX_TLS=${UCX_TLS:-tcp}
# The survivors' flight recorders: here, not in /tmp.
CHORUS_TRACE_FILE=${CHORUS_TRACE_FILE:-$PWD/trace-%h-%p.txt}
export CHORUS_TIMEOUT UCX_TLS CHORUS_TEST_LAYOUT CHORUS_TRACE_FILE
wrap="$(cd "$(dirname "$0")" && pwd)/hostid-wrap.sh"
log=kill-np$np-${CHORUS_TEST_LAYOUT:-one}.out
echo "$mpirun -np $np (layout ${CHORUS_TEST_LAYOUT:-one node}, CHORUS_TIMEOUT=$CHORUS_TIMEOUT): rank $((np - 1)) is killed"
# orte_abort_on_non_zero_status 0: the survivors run on after the kill.
start=$(date +%s)
timeout --kill-after=10 120 "$mpirun" -np "$np" --oversubscribe --bind-to none \
  --mca orte_abort_on_non_zero_status 0 $([ -n "${CHORUS_TEST_LAYOUT:-}" ] && echo "$wrap") ./test_kill \
  </dev/null >"$log" 2>&1
elapsed=$(( $(date +%s) - start ))
grep -E "^(PASS|FAIL)" "$log"
# (mpirun's own status is not looked at: it reports the victim's SIGKILL.)
if [ "$elapsed" -ge 120 ]; then
  echo "FAIL: the job hung"; tail -20 "$log"; exit 1
fi
pass=$(grep -c "^PASS" "$log")
fail=$(grep -c "^FAIL" "$log")
if [ "$fail" -ne 0 ] || [ "$pass" -ne $((np - 1)) ]; then
  echo "FAIL: $pass of $((np - 1)) survivors passed"; tail -20 "$log"; exit 1
fi
leftover=$(ls /dev/shm 2>/dev/null | grep -c "^chorus-")
echo "$pass survivors got an error in time ($elapsed s in all); /dev/shm holds $leftover chorus segments"
exit 0
