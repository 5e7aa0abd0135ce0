#!/bin/sh
# run-mismatch.sh NP MODE: test_mismatch MODE under mpirun (CHORUS_TEST_LAYOUT
# as for run-mpi.sh).  count and kind: mismatched calls without
# CHORUS_CHECK, named from the messages' headers on every rank within
# seconds (CHORUS_TIMEOUT=60 would fail the test's bound: no wait may give
# up instead).  skip: CHORUS_CHECK=1 and CHORUS_TIMEOUT=5, a rank skips a
# call and the others name it.  Passes when every rank printed PASS.
np=$1
mode=$2
. "$(dirname "$0")/launch-common.sh"
launch_prepare test_mismatch
layout=${CHORUS_TEST_LAYOUT:-one}
launch_layout
if [ "$mode" = skip ]; then
  CHORUS_CHECK=1 CHORUS_TIMEOUT=5
else
  CHORUS_CHECK=0 CHORUS_TIMEOUT=60
fi
export CHORUS_CHECK CHORUS_TIMEOUT
log=mismatch-np$np-$layout-$mode.out
timeout --kill-after=10 100 "$mpirun" -np "$np" $flags $wrap ./test_mismatch "$mode" </dev/null >"$log" 2>&1
rc=$?
grep -E "^(PASS|FAIL|rank)" "$log"
launch_expect_passes "$log" "$rc" "$np"
echo "mismatch ($mode): named on every rank, promptly"
exit 0
