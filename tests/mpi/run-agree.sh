#!/bin/sh
# run-agree.sh NAME VALUE: test_agree on 2 ranks with NAME=VALUE on rank 0
# only (an MPMD launch: "mpirun -np 1 env NAME=VALUE prog : -np 1 prog").
# Passes when both ranks printed PASS: the set-up failed on both with an
# error naming NAME and both ranks, no data moved, and MPI went on; within
# 60 s (the agreement is one exchange: a hang or a SIGBUS fails here).
#
# run-agree.sh empty-check: test_agree empty-check on 2 ranks with
# CHORUS_CHECK=1 (MPI_THREAD_MULTIPLE).
name=$1 value=${2:-}
. "$(dirname "$0")/launch-common.sh"
launch_prepare test_agree
CHORUS_TIMEOUT=20 CHORUS_TRACE_FILE=$PWD/agree-trace-%p.txt
export CHORUS_TIMEOUT CHORUS_TRACE_FILE
log=agree-$name.out
start=$(date +%s)
if [ "$name" = empty-check ]; then
  echo "$mpirun -np 2 ./test_agree empty-check (CHORUS_CHECK=1)"
  CHORUS_CHECK=1 timeout --kill-after=10 60 "$mpirun" -np 2 $flags ./test_agree empty-check </dev/null >"$log" 2>&1
else
  echo "$mpirun -np 1 env $name=$value ./test_agree settings $name : -np 1 ./test_agree settings $name"
  timeout --kill-after=10 60 "$mpirun" $flags -np 1 env "$name=$value" ./test_agree settings "$name" : \
    -np 1 ./test_agree settings "$name" </dev/null >"$log" 2>&1
fi
rc=$?
grep -E "^(PASS|FAIL|rank)" "$log"
echo "exit status $rc after $(( $(date +%s) - start )) s"
[ $rc = 124 ] || [ $rc = 137 ] && { echo "FAIL: hung"; tail -20 "$log"; exit 1; }
launch_expect_passes "$log" "$rc" 2
exit 0
