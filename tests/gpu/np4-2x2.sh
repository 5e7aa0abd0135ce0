#!/bin/sh
# Device buffers on 2 nodes of 2 ranks (CHORUS_HOSTID per rank), over UCX
# tcp: every collective on the kernels, their links to the other node
# carried by the device proxy (transport/ucx/ucx_proxy.h), against MPI's
# result, CUDA graph capture replayed 100 times included (gpu_streams.cc).
# CHORUS_STATS=1: every rank's allreduce line must count no byte staged
# through host memory (staged=0), and CHORUS_DEBUG=INFO must show every rank
# on the kernels across nodes.  Then the oracle, CHORUS_NET_DEVICE=staged
# (sums only): the same suite staged through host memory must count the
# bytes it staged.
run() {
  out=$(CHORUS_STATS=1 CHORUS_TEST_LAYOUT=2x2 CHORUS_TEST_PROTOS=simple "$(dirname "$0")/run-gpu.sh" 4 test_gpu 2>&1)
  rc=$?
  printf '%s\n' "$out" | grep -v '^CHORUS STATS' | grep -v 'CHORUS INFO'
  [ "$rc" = 0 ] || exit "$rc"
}
# every_rank PATTERN WHAT: each rank's lines (%r: its number) match PATTERN.
every_rank() {
  for r in 0 1 2 3; do
    pattern=$(printf '%s' "$1" | sed "s/%r/$r/g")
    if ! printf '%s\n' "$out" | grep -q "$pattern"; then
      echo "FAIL: rank $r: $2"
      printf '%s\n' "$out" | grep "^CHORUS STATS comm [0-9]* rank $r/4: allreduce" | head -3
      exit 1
    fi
  done
}
CHORUS_DEBUG=INFO run
every_rank '^CHORUS STATS comm [0-9]* rank %r/4: allreduce calls=[1-9].* staged=0$' \
  "its CHORUS STATS allreduce line counts bytes staged through host memory on the kernel path"
every_rank '\[rank %r\] CHORUS INFO rank %r: device buffers cross nodes on the kernels' \
  "it did not say it runs device buffers across nodes on the kernels (CHORUS_DEBUG=INFO)"
echo "PASS: every rank ran on the kernels across nodes and staged nothing (CHORUS_STATS staged=0)"
CHORUS_NET_DEVICE=staged CHORUS_TEST_OPS=sum run
every_rank '^CHORUS STATS comm [0-9]* rank %r/4: allreduce calls=[1-9].* staged=[1-9]' \
  "its CHORUS STATS allreduce line does not count bytes staged (CHORUS_NET_DEVICE=staged)"
echo "PASS: CHORUS_NET_DEVICE=staged: every rank counted the bytes it staged through host memory"
