#!/bin/sh
# Device buffers on 2 nodes of 2 ranks (CHORUS_HOSTID per rank): staged
# through pinned host memory and carried by the host engine over UCX.  One
# protocol suffices: the kernels do not run across nodes.  CHORUS_STATS=1:
# every rank's allreduce line must count the bytes it staged (staged=, more
# than 0 here; np2.sh checks that the kernel path counts none).
out=$(CHORUS_STATS=1 CHORUS_TEST_LAYOUT=2x2 CHORUS_TEST_PROTOS=simple \
  "$(dirname "$0")/run-gpu.sh" 4 test_gpu 2>&1)
rc=$?
printf '%s\n' "$out" | grep -v '^CHORUS STATS'
[ "$rc" = 0 ] || exit "$rc"
for r in 0 1 2 3; do
  if ! printf '%s\n' "$out" | grep -q "^CHORUS STATS comm [0-9]* rank $r/4: allreduce calls=[1-9].* staged=[1-9]"; then
    echo "FAIL: rank $r's CHORUS STATS allreduce line does not count bytes staged through host memory"
    printf '%s\n' "$out" | grep "^CHORUS STATS comm [0-9]* rank $r/4: allreduce" | head -3
    exit 1
  fi
done
echo "PASS: every rank counted the bytes it staged through host memory (CHORUS_STATS staged=)"
