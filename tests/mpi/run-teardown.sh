#!/bin/sh
# run-teardown.sh NP: test_teardown under mpirun.  Passes when every rank
# printed PASS (after MPI_Finalize: every broadcast delivered what its root
# sent, MPI_Bcast being the reference) and no rank logged a CHORUS WARN line:
# a connection closed while a peer still read from it shows as one even
# when the data happened to arrive first.  CHORUS_TEST_LAYOUT as for
# run-mpi.sh.
#
# With CHORUS_TEST_LATE_RELEASE=S the last rank frees a communicator S
# seconds after the others (test_teardown.cc, lateRelease): then every
# other rank must have logged that it stopped waiting for the release
# (proof that the path ran), and nothing else.
np=$1
. "$(dirname "$0")/launch-common.sh"
launch_prepare test_teardown
launch_layout
CHORUS_TIMEOUT=${CHORUS_TIMEOUT:-60}
export CHORUS_TIMEOUT
log=teardown-np$np-${CHORUS_TEST_LAYOUT:-one}${CHORUS_TEST_LATE_RELEASE:+-late}.out
timeout --kill-after=10 300 "$mpirun" -np "$np" $flags $wrap ./test_teardown </dev/null >"$log" 2>&1
rc=$?
grep -E "^(PASS|FAIL)" "$log"
launch_expect_passes "$log" "$rc" "$np"
gaveUp="did not release the communicator within"
if [ -n "${CHORUS_TEST_LATE_RELEASE:-}" ]; then
  waited=$(grep "CHORUS WARN" "$log" | grep -c "$gaveUp")
  if [ "$waited" -ne $((np - 1)) ]; then
    echo "FAIL: $waited of the $((np - 1)) early ranks said they stopped waiting for the late one"; exit 1
  fi
fi
warnings=$(grep "CHORUS WARN" "$log")
[ -z "${CHORUS_TEST_LATE_RELEASE:-}" ] || warnings=$(printf '%s\n' "$warnings" | grep -v "$gaveUp")
if [ -n "$warnings" ]; then
  echo "FAIL: warnings logged:"; printf '%s\n' "$warnings" | head -10; exit 1
fi
exit 0
