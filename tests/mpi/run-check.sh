#!/bin/sh
# run-check.sh NP: test_check under mpirun with CHORUS_CHECK=1 and
# CHORUS_STATS=1.  Passes when every rank printed PASS (the three mismatches
# named on every rank) and every rank's statistics count what it called:
# 3 allreduces of 80 bytes (rank 0: 40 in the mismatched one, which failed)
# and one failed bcast of 8 bytes.
np=$1
. "$(dirname "$0")/launch-common.sh"
launch_prepare test_check
CHORUS_CHECK=1 CHORUS_STATS=1 CHORUS_TIMEOUT=20 CHORUS_TRACE_FILE=$PWD/check-np$np-trace-%r.txt
export CHORUS_CHECK CHORUS_STATS CHORUS_TIMEOUT CHORUS_TRACE_FILE
log=check-np$np.out
timeout --kill-after=10 90 "$mpirun" -np "$np" $flags ./test_check </dev/null >"$log" 2>&1
rc=$?
grep -E "^(PASS|FAIL|rank|CHORUS STATS)" "$log"
launch_expect_passes "$log" "$rc" "$np"
r=0
while [ "$r" -lt "$np" ]; do
  bytes=240; [ "$r" -eq 0 ] && bytes=200
  for want in "rank $r/$np: allreduce calls=3 bytes=$bytes time=[0-9.]* s failed=1 algos=" \
              "rank $r/$np: bcast calls=1 bytes=8 time=[0-9.]* s failed=1 algos="; do
    if ! grep -q "^CHORUS STATS comm [0-9]* $want" "$log"; then
      echo "FAIL: no statistics line matching '$want'"; exit 1
    fi
  done
  r=$((r + 1))
done
echo "mismatches named on every rank; statistics counted every call"
exit 0
