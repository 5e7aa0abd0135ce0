#!/bin/sh
# Communicators set up and freed in a loop while another communicator's
# kernel waits for a peer, then one whose ranks' GPUs hold different numbers
# of blocks at once (test_gpu_lifecycle.cc).  CHORUS_PROTO=auto runs both
# protocols (the freed communicator's small allreduce on LL, the other
# one's on Simple).  A teardown that waited for the device would hold each
# round until the kernels time out: 20 s, so that it fails in minutes.
# The channels must be agreed: what rank 0's 2% share of its GPU holds
# (the program says how many it expects) on every rank, said at INFO level.
out=$(CHORUS_TIMEOUT=20 CHORUS_TEST_PROTOS=auto CHORUS_DEBUG=INFO CHORUS_DEBUG_SUBSYS=CUDA \
  "$(dirname "$0")/run-gpu.sh" 2 test_gpu_lifecycle 2>&1)
rc=$?
printf '%s\n' "$out" | grep -v ' INFO '
[ "$rc" = 0 ] || exit "$rc"
for r in 0 1; do
  want=$(printf '%s\n' "$out" | sed -n "s/^rank $r: expects \([0-9][0-9]*\) channels\$/\1/p" | head -1)
  if [ -z "$want" ]; then
    echo "FAIL: rank $r did not say how many channels it expects"
    exit 1
  fi
  if ! printf '%s\n' "$out" | grep -q "rank $r: $want channels, not "; then
    echo "FAIL: rank $r did not say it runs $want channels where rank 0's GPU holds $want blocks at once"
    printf '%s\n' "$out" | grep 'channels' | head -5
    exit 1
  fi
done
echo "PASS: the channels were agreed ($want on both ranks)"
