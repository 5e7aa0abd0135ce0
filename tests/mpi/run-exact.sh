#!/bin/sh
# run-exact.sh NP ALGO SEED: test_exact in the exact mode (issue 30), first
# as the reference run (3 ranks, one node, the planner's algorithms,
# permutation 1, the mode from MPIX_Comm_gpu_init's hint), then on NP ranks
# with CHORUS_REPRODUCIBLE=exact, CHORUS_ALGO=ALGO and permutation SEED
# (CHORUS_TEST_LAYOUT as for run-mpi.sh).  Passes when
# every rank of both runs matched the exact reference and both runs'
# results have the same bits (their digests).
np=$1
algo=$2
seed=$3
. "$(dirname "$0")/launch-common.sh"
launch_prepare test_exact
layout=${CHORUS_TEST_LAYOUT:-one}
ref=exact-reference-$np-$layout-$algo.out
env -u CHORUS_TEST_LAYOUT -u CHORUS_REPRODUCIBLE TEST_PERM_SEED=1 CHORUS_ALGO=auto \
  timeout --kill-after=10 200 "$mpirun" -np 3 $flags ./test_exact </dev/null >"$ref" 2>&1
rc=$?
launch_expect_passes "$ref" "$rc" 3
launch_layout
log=exact-np$np-$layout-$algo.out
TEST_PERM_SEED=$seed CHORUS_ALGO=$algo CHORUS_REPRODUCIBLE=exact \
  timeout --kill-after=10 300 "$mpirun" -np "$np" $flags $wrap ./test_exact </dev/null >"$log" 2>&1
rc=$?
grep -E "^(PASS|FAIL|digest)" "$log"
launch_expect_passes "$log" "$rc" "$np"
want=$(grep "^digest" "$ref")
got=$(grep "^digest" "$log")
if [ -z "$want" ] || [ "$want" != "$got" ]; then
  echo "FAIL: the results' bits differ from the 3-rank run: '$got' against '$want'"; exit 1
fi
echo "exact sums: the reference's values and the 3-rank run's bits, $np ranks, $layout, CHORUS_ALGO=$algo"
exit 0
