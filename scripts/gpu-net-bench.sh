#!/bin/sh
# Device buffers across nodes on a lent GPU machine (issue 28): nodes played
# on one machine (CHORUS_HOSTID per rank, tests/mpi/hostid-wrap.sh), UCX
# over tcp, the kernels' links to the other "node" carried by the device
# proxy.  Runs chorus_allreduce_perf and chorus_allgather_perf on device
# buffers at 2 ranks each its own node and 4 ranks as 2 nodes of 2, and
# prints, per size, the bus bandwidth and that bandwidth per channel (the
# channel count from the CHORUS_DEBUG=INFO set-up line), then the staged
# path (CHORUS_NET_DEVICE=staged) at the largest size for comparison.
#
#   scripts/gpu-net-bench.sh BUILD_DIR [OUT_DIR]
#
# BUILD_DIR: a CUDA build (perf/ built: make -C BUILD_DIR/perf); OUT_DIR
# (default: $OUT, else .) receives one log per run.  On the GPU machine,
# first `. .gpukit/env.sh` (../shared/gpu-kit/README.md).  Over tcp on one
# machine the figures measure the proxy and the PCIe path, not a NIC.
set -u
build=${1:?usage: gpu-net-bench.sh BUILD_DIR [OUT_DIR]}
out=${2:-${OUT:-.}}
root=$(cd "$(dirname "$0")/.." && pwd)
wrap="$root/tests/mpi/hostid-wrap.sh"
. "$root/scripts/mpirun-flags.sh"
[ "$mpirun_impl" != none ] || { echo "gpu-net-bench: $mpirun not found"; exit 77; }
export UCX_TLS=${UCX_TLS:-tcp} CHORUS_TIMEOUT=${CHORUS_TIMEOUT:-120}
mkdir -p "$out"
status=0
run() {  # NP LAYOUT PROGRAM NET_DEVICE MIN MAX
  log="$out/net-$3-np$1-$2-$4.log"
  # shellcheck disable=SC2086  # the flags are words
  CHORUS_NET_DEVICE=$4 CHORUS_DEBUG=INFO CHORUS_TEST_LAYOUT=$2 timeout 600 "$mpirun" $mpirun_flags -np "$1" "$wrap" \
    "$build/perf/chorus_$3_perf" -m device -b "$5" -e "$6" -f 4 </dev/null >"$log" 2>&1
  rc=$?
  channels=$(sed -n 's/.*CUDA executor ready on GPU [0-9]*: \([0-9]*\) channels.*/\1/p' "$log" | head -1)
  echo "== $3, $1 ranks, layout $2, CHORUS_NET_DEVICE=$4 (exit $rc, ${channels:-?} channels): $log"
  # The perf tools' table: size first, bus bandwidth in the column headed busbw.
  awk -v ch="${channels:-0}" '
    /busbw/ { for (i = 1; i <= NF; ++i) if ($i ~ /busbw/) col = i - 1; next }  # (the header starts with "#")
    col && $1 ~ /^[0-9]+$/ && NF >= col {
      printf "  %12s B  bus %8.2f GB/s", $1, $col
      if (ch > 0) printf "  per channel %7.2f GB/s", $col / ch
      printf "\n"
    }' "$log"
  [ "$rc" = 0 ] || status=$rc
}
for prog in allreduce allgather; do
  run 2 each "$prog" kernels 64K 256M
  run 4 2x2 "$prog" kernels 64K 256M
  run 4 2x2 "$prog" staged 256M 256M
done
exit $status
