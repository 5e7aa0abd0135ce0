#!/bin/sh
# The device engine in the geometry a GPU build ships (512 threads a block,
# 16 channels), on 2 ranks: one case of each collective sized to fill every
# channel (test_gpu --geometry), checked against the reference, on both
# protocols.  On the CPU emulation, whose own geometry is 32 x 4,
# CHORUS_EMU_GEOMETRY=shipping asks for it (8192 device threads a rank);
# on a GPU it is the geometry anyway.  Passes when every case matched and
# each collective's trace line says it ran on 16 channels of 512 threads.
out=$(CHORUS_EMU_GEOMETRY=shipping CHORUS_DEBUG=TRACE CHORUS_DEBUG_SUBSYS=CUDA CHORUS_TEST_PROTOS="simple ll" \
  "$(dirname "$0")/run-gpu.sh" 2 test_gpu --geometry 2>&1)
rc=$?
printf '%s\n' "$out" | grep -v "CHORUS TRACE"
[ "$rc" = 0 ] || exit "$rc"
status=0
for coll in allreduce reduce reduce_scatter_block bcast allgather alltoall; do
  for proto in Simple LL; do
    if ! printf '%s\n' "$out" | grep -q "CHORUS TRACE.* $coll: [0-9]* B on 16 channel(s) of 512 threads, $proto protocol"; then
      echo "FAIL: no $coll on 16 channels of 512 threads with the $proto protocol"
      printf '%s\n' "$out" | grep "CHORUS TRACE.* $coll: " | head -2
      status=1
    fi
  done
done
[ $status = 0 ] && echo "PASS: every collective ran on 16 channels of 512 threads, both protocols"
exit $status
