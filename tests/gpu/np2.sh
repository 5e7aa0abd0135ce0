#!/bin/sh
# Device buffers on 2 ranks of one node: the kernels.  CHORUS_STATS=1: no
# collective may count bytes staged through host memory (staged=0).
out=$(CHORUS_STATS=1 "$(dirname "$0")/run-gpu.sh" 2 test_gpu 2>&1)
rc=$?
printf '%s\n' "$out" | grep -v '^CHORUS STATS'
[ "$rc" = 0 ] || exit "$rc"
if ! printf '%s\n' "$out" | grep -q '^CHORUS STATS comm [0-9]* rank 1/2: allreduce calls=[1-9].* staged=0$'; then
  echo "FAIL: no CHORUS STATS allreduce line with staged=0 from rank 1"
  exit 1
fi
if printf '%s\n' "$out" | grep '^CHORUS STATS comm' | grep -v ' staged=0$'; then
  echo "FAIL: the kernel path counted bytes staged through host memory"
  exit 1
fi
echo "PASS: the kernels staged nothing through host memory (CHORUS_STATS staged=0)"
