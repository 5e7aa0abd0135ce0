#!/bin/sh
# Device buffers across nodes on the kernels (the device proxy over UCX
# tcp) in the layouts past 2 x 2: 2 ranks each its own node (every link
# remote; the slots in device memory as under GPUDirect RDMA,
# CHORUS_NET_GDR=1, so that full slots go by put only, where tcp would
# take active messages; the ring at every size, whose short blocks send
# empty messages), 3 nodes of 2, uneven nodes of 2, 1 and
# 3 ranks, and 4 ranks round-robin over 2 nodes under CHORUS_ALGO=tree
# (the node trees of allreduce, bcast and reduce on the device, and rings
# in node order, which there differs from rank order).  The sums and the
# pair types' ops, large cases at 2 MiB: np4-2x2.sh runs every op.
status=0
for run in "2 each ring 1" "6 3x2 auto auto" "6 2+1+3 auto auto" "4 mod2 tree auto"; do
  set -- $run
  echo "== $1 ranks, layout $2, CHORUS_ALGO=$3, CHORUS_NET_GDR=$4"
  out=$(CHORUS_DEBUG=INFO CHORUS_NET_GDR=$4 CHORUS_ALGO=$3 CHORUS_TEST_LAYOUT=$2 CHORUS_TEST_PROTOS=simple \
    CHORUS_TEST_OPS=${CHORUS_TEST_OPS:-sum,minloc,maxloc} CHORUS_TEST_LARGE_BYTES=${CHORUS_TEST_LARGE_BYTES:-2097152} \
    "$(dirname "$0")/run-gpu.sh" "$1" test_gpu 2>&1)
  rc=$?
  printf '%s\n' "$out" | grep -v 'CHORUS INFO'
  [ $rc = 77 ] && exit 77
  [ $rc != 0 ] && status=$rc
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
