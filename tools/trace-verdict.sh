#!/bin/sh
# chorus_trace on hand-written trace files (no MPI): a count mismatch at
# #5 between ranks 0 and 1 must be found, a rank without a file reported,
# and a healthy set of files must give exit status 0.
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null 2>&1 || { echo "skipped: needs python3"; exit 77; }
dir=trace-verdict.d
rm -rf "$dir" && mkdir "$dir" || exit 99
entry() {  # rank seq count state
  echo "comm=3 rank=$1 seq=$2 coll=allreduce count=$3 type=float32 op=sum root=0 algo=ring proto=simple mem=host stream=0x0 state=$4 start_us=1 end_us=2"
}
for r in 0 1 2; do
  {
    echo "# chorus flight recorder v1 host=h pid=1$r world_rank=$r time_us=3 reason: SIGUSR1"
    echo "comm=3 rank=$r nranks=3 depth=64"
    for s in 1 2 3 4; do entry $r $s 100 done; done
    entry $r 5 "$([ $r -eq 1 ] && echo 200 || echo 100)" done
  } >"$dir/ok-$r.txt"
done
python3 "$here/chorus_trace" "$dir"/ok-0.txt "$dir"/ok-1.txt "$dir"/ok-2.txt >"$dir/out" 2>&1
rc=$?
cat "$dir/out"
want="verdict: ranks disagree at #5: ranks 0,2 called allreduce #5 count=100 type=float32 op=sum; rank 1 called allreduce #5 count=200 type=float32 op=sum"
[ "$rc" -eq 1 ] && grep -qF "$want" "$dir/out" || { echo "FAIL: wanted exit 1 and: $want"; exit 1; }
# Rank 1's file alone is missing, the rest agree: it is reported, and nothing else.
python3 "$here/chorus_trace" "$dir/ok-0.txt" "$dir/ok-2.txt" >"$dir/out" 2>&1
rc=$?
cat "$dir/out"
want="verdict: rank 1 left no trace file (dead, or never asked to write one); ranks 0,2 finished #5"
[ "$rc" -eq 1 ] && grep -qF "$want" "$dir/out" || { echo "FAIL: wanted exit 1 and: $want"; exit 1; }
# All alike and done: exit 0.
sed 's/count=200/count=100/' "$dir/ok-1.txt" >"$dir/same-1.txt"
python3 "$here/chorus_trace" "$dir/ok-0.txt" "$dir/same-1.txt" "$dir/ok-2.txt" >"$dir/out" 2>&1
rc=$?
cat "$dir/out"
[ "$rc" -eq 0 ] && grep -qF "verdict: every rank finished allreduce #5; nothing in flight" "$dir/out" ||
  { echo "FAIL: wanted exit 0 and a clean verdict"; exit 1; }
echo "chorus_trace finds the mismatch, the missing rank, and a clean run"
