#!/bin/sh
# run-teardown.sh NP: test_teardown under mpirun.  Passes when every rank
# printed PASS (after MPI_Finalize: every broadcast delivered what its root
# sent, MPI_Bcast being the reference) and no rank logged a CHORUS WARN line:
# a connection closed while a peer still read from it shows as one even
# when the data happened to arrive first.  CHORUS_TEST_LAYOUT as for
# run-mpi.sh.
np=$1
. "$(dirname "$0")/launch-common.sh"
launch_prepare test_teardown
launch_layout
CHORUS_TIMEOUT=${CHORUS_TIMEOUT:-60}
export CHORUS_TIMEOUT
log=teardown-np$np-${CHORUS_TEST_LAYOUT:-one}.out
timeout --kill-after=10 300 "$mpirun" -np "$np" $flags $wrap ./test_teardown </dev/null >"$log" 2>&1
rc=$?
grep -E "^(PASS|FAIL)" "$log"
launch_expect_passes "$log" "$rc" "$np"
if grep -q "CHORUS WARN" "$log"; then
  echo "FAIL: warnings logged:"; grep "CHORUS WARN" "$log" | head -10; exit 1
fi
exit 0
