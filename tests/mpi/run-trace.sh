#!/bin/sh
# run-trace.sh NP: test_trace (rank 2 skips the 11th allreduce) under
# mpirun with CHORUS_TIMEOUT=3 and one trace file per rank in a fresh
# directory; then chorus_trace must read them all and blame rank 2.  Passes
# when every rank printed PASS and the verdict says
#   rank 2 never entered allreduce #11 (last entered #10, done); ranks ... failed in #11
np=$1
. "$(dirname "$0")/launch-common.sh"
launch_prepare test_trace
command -v python3 >/dev/null 2>&1 || { echo "skipped: chorus_trace needs python3"; exit 77; }
dir=trace-np$np.d
rm -rf "$dir" && mkdir "$dir" || exit 99
CHORUS_TIMEOUT=3 CHORUS_TRACE_FILE=$PWD/$dir/trace-%r.txt
export CHORUS_TIMEOUT CHORUS_TRACE_FILE
log=$dir/run.out
timeout --kill-after=10 90 "$mpirun" -np "$np" $flags ./test_trace </dev/null >"$log" 2>&1
rc=$?
grep -E "^(PASS|FAIL|rank)" "$log"
launch_expect_passes "$log" "$rc" "$np"
tool="$(cd "$(dirname "$0")/../../tools" && pwd)/chorus_trace"
python3 "$tool" "$dir/trace-*.txt" >"$dir/verdict.out"
trc=$?
cat "$dir/verdict.out"
others=$(seq 0 $((np - 1)) | grep -v '^2$' | paste -sd, -)
want="verdict: rank 2 never entered allreduce #11 (last entered #10, done); ranks $others failed in #11"
if [ "$trc" -ne 1 ] || ! grep -qF "$want" "$dir/verdict.out"; then
  echo "FAIL: chorus_trace exited $trc; wanted the line: $want"; exit 1
fi
echo "chorus_trace blames rank 2"
exit 0
