#!/bin/sh
# run-checksum.sh NP: test_checksum under mpirun with CHORUS_CHECKSUM=1
# (CHORUS_TEST_LAYOUT as for run-mpi.sh).  Passes when every rank printed
# PASS (collectives agree with MPI; the corrupted messages fail on rank 1
# naming the link) and rank 1's flight recorder holds the failure.
np=$1
. "$(dirname "$0")/launch-common.sh"
launch_prepare test_checksum
layout=${CHORUS_TEST_LAYOUT:-one}
launch_layout
rm -f checksum-np$np-$layout-trace-*.txt
# CHORUS_TIMEOUT bounds rank 0's wait in the corrupted allreduce.
CHORUS_CHECKSUM=1 CHORUS_TIMEOUT=3 CHORUS_TRACE_FILE=$PWD/checksum-np$np-$layout-trace-%r.txt
export CHORUS_CHECKSUM CHORUS_TIMEOUT CHORUS_TRACE_FILE
log=checksum-np$np-$layout.out
timeout --kill-after=10 120 "$mpirun" -np "$np" $flags $wrap ./test_checksum </dev/null >"$log" 2>&1
rc=$?
grep -E "^(PASS|FAIL|rank)" "$log"
launch_expect_passes "$log" "$rc" "$np"
# A failed collective must not split the release: every rank still comes.
if grep -q "did not release the communicator" "$log"; then
  echo "FAIL: a rank waited in vain for the others to release the communicator"; exit 1
fi
if ! grep -q "link rank 0 -> rank 1.*arrived corrupted" checksum-np$np-$layout-trace-1.txt 2>/dev/null; then
  echo "FAIL: rank 1's flight recorder does not hold the corrupted message"; exit 1
fi
echo "checksums: collectives agree with MPI; corrupted messages named on their link"
exit 0
