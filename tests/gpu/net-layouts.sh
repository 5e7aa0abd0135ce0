#!/bin/sh
# Device buffers across nodes on the kernels (the device proxy over UCX
# tcp) in the layouts past 2 x 2: 2 ranks each its own node (every link
# remote; the slots in device memory as under GPUDirect RDMA,
# CHORUS_NET_GDR=1, so that full slots go by put only, where tcp would
# take active messages; the ring at every size, whose short blocks send
# empty messages), 3 nodes of 2 under CHORUS_ALGO=hierarchical (the
# node rings and the rails between them, AVG's division held back until
# the sum is whole), uneven nodes of 2, 1 and 3 ranks, and 4 ranks
# round-robin over 2 nodes under CHORUS_ALGO=tree (the node trees of
# allreduce, bcast and reduce on the device, and rings in node order,
# which there differs from rank order), and 4 nodes of 2 with the device
# links made only to the streaming algorithms' peers
# (CHORUS_NET_DEVICE_LINKS=streaming: some ranks on other nodes never
# linked, the alltoall staged through host memory, the hierarchy's rails
# and rank-order tail on the kernels, and the bcast and reduce trees, from
# every root, on the rootless trees' links).
# np4-2x2.sh runs every op; here every layout runs the sums and the pair
# types' ops, and the hierarchies AVG too (every type summed across the
# rails, the division held back), large cases at 2 MiB; the first op runs
# the in-place and enqueue variants.  CHORUS_TEST_OPS replaces every run's
# ops.
status=0
ops() { printf '%s' "${CHORUS_TEST_OPS:-$1}"; }
# Every layout's ops, said once so that the runs keep in step; the
# hierarchies add avg.
layout_ops=sum,minloc,maxloc
for run in "2 each ring 1 $(ops "$layout_ops") auto" "6 3x2 hierarchical auto $(ops "$layout_ops,avg") auto" \
  "6 2+1+3 auto auto $(ops "$layout_ops") auto" "4 mod2 tree auto $(ops "$layout_ops") auto" \
  "8 4x2 hierarchical auto $(ops "$layout_ops,avg") streaming"; do
  set -- $run
  echo "== $1 ranks, layout $2, CHORUS_ALGO=$3, CHORUS_NET_GDR=$4, ops $5, CHORUS_NET_DEVICE_LINKS=$6"
  out=$(CHORUS_DEBUG=INFO CHORUS_STATS=1 CHORUS_NET_GDR=$4 CHORUS_ALGO=$3 CHORUS_TEST_LAYOUT=$2 CHORUS_TEST_PROTOS=simple \
    CHORUS_NET_DEVICE_LINKS=$6 \
    CHORUS_TEST_OPS=$5 CHORUS_TEST_LARGE_BYTES=${CHORUS_TEST_LARGE_BYTES:-2097152} \
    "$(dirname "$0")/run-gpu.sh" "$1" test_gpu 2>&1)
  rc=$?
  printf '%s\n' "$out" | grep -v 'CHORUS INFO' | grep -v '^CHORUS STATS'
  [ $rc = 77 ] && exit 77
  [ $rc != 0 ] && status=$rc
  # Every rank's allreduces ran on the kernels (nothing staged), and the
  # forced hierarchy ran as itself, not the ring standing in for it.
  algos='[a-z_:0-9,]*'
  [ "$3" = hierarchical ] && algos='hierarchical:[0-9]*'
  r=0
  while [ $r -lt "$1" ]; do
    if ! printf '%s\n' "$out" | grep -q "^CHORUS STATS comm [0-9]* rank $r/$1: allreduce calls=[1-9].* algos=$algos staged=0$"; then
      echo "FAIL: rank $r has no CHORUS STATS allreduce line with algos=$algos staged=0:"
      printf '%s\n' "$out" | grep "^CHORUS STATS comm [0-9]* rank $r/$1: allreduce" | head -4
      status=1
    fi
    r=$((r + 1))
  done
  if [ "$6" = streaming ]; then
    # Each rank has 6 ranks on other nodes; the streaming set leaves some
    # out, and the alltoall went through host memory on every rank.
    few=$(printf '%s\n' "$out" | grep -c "CHORUS INFO rank [0-9]*: device links to [1-5] ranks on other nodes")
    if [ "$few" -lt 1 ]; then
      echo "FAIL: no rank linked fewer than its 6 ranks on other nodes under CHORUS_NET_DEVICE_LINKS=streaming"
      status=1
    fi
    staged=$(printf '%s\n' "$out" | grep -c "^CHORUS STATS comm [0-9]* rank [0-9]*/$1: alltoall calls=[1-9].* staged=[1-9][0-9]*$")
    if [ "$staged" -lt "$1" ]; then
      echo "FAIL: $staged of $1 ranks staged their alltoalls through host memory"
      status=1
    fi
    # Bcasts and reduces ran on the kernels on every rank (nothing staged),
    # trees among them.
    for coll in bcast reduce; do
      kernels=$(printf '%s\n' "$out" | grep -c "^CHORUS STATS comm 0 rank [0-9]*/$1: $coll calls=[1-9].* staged=0$")
      trees=$(printf '%s\n' "$out" | grep -c "^CHORUS STATS comm 0 rank [0-9]*/$1: $coll calls=.* algos=\(.*,\)\{0,1\}tree:[1-9]")
      if [ "$kernels" -lt "$1" ] || [ "$trees" -lt "$1" ]; then
        echo "FAIL: $kernels of $1 ranks ran every $coll on the kernels, $trees ran trees"
        status=1
      fi
    done
  fi
  # Every rank said which slots it used (CHORUS_DEBUG=INFO).
  want="slots in pinned host memory"
  [ "$4" = 1 ] && want="slots in device memory (GPUDirect RDMA)"
  said=$(printf '%s\n' "$out" | grep -c "CHORUS INFO rank [0-9]*: device buffers cross nodes on the kernels.*$want")
  if [ "$said" -lt "$1" ]; then
    echo "FAIL: $said of $1 ranks said they run across nodes with the $want"
    status=1
  fi
done
exit $status
