#!/bin/sh
# chorus_trace on hand-written files that a glob in /tmp could gather (no
# MPI): files of two jobs are not mixed (refused, or one picked with --job),
# a second file for one rank is warned about, a FIFO, a link and (as root)
# another user's file are skipped, a malformed line is reported by file and
# line without a Python traceback, and a rank that released the
# communicator is reported as such.
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null 2>&1 || { echo "skipped: needs python3"; exit 77; }
dir=trace-files.d
rm -rf "$dir" && mkdir "$dir" || exit 99
entry() {  # rank seq count state
  echo "comm=3 rank=$1 seq=$2 coll=allreduce count=$3 type=float32 op=sum root=0 algo=ring proto=simple mem=host stream=0x0 state=$4 start_us=1 end_us=2"
}
header() {  # job rank time reason
  echo "# chorus flight recorder v2 job=$1 job_from=pmix host=h pid=1$2 uid=0 world_rank=$2 time_us=$3 reason: $4"
}
job_file() {  # job rank count-at-#4 time
  { header "$1" "$2" "$4" SIGUSR1
    echo "comm=3 rank=$2 nranks=3 depth=64"
    for s in 1 2 3; do entry "$2" $s 8 "done"; done
    entry "$2" 4 "$3" "done"
    echo "# end"; } >"$dir/trace-$1-$2.txt"
}
run() {  # expected-exit args...: runs chorus_trace, output in $dir/out
  want=$1; shift
  timeout 30 python3 "$here/chorus_trace" "$@" >"$dir/out" 2>&1
  rc=$?
  cat "$dir/out"
  [ "$rc" -eq "$want" ] || { echo "FAIL: chorus_trace exited $rc, wanted $want"; exit 1; }
  if grep -q "Traceback" "$dir/out"; then echo "FAIL: a Python traceback"; exit 1; fi
}
expect() {
  grep -qF -- "$1" "$dir/out" || { echo "FAIL: wanted the line: $1"; exit 1; }
}
# Job 111 agrees (count 8 at #4); job 222's rank 1 called count 16 there.
for r in 0 1 2; do job_file 111 $r 8 100$r; done
job_file 222 1 16 5000
run 2 "$dir/trace-*.txt"
expect "the files are of 2 jobs; not mixing them"
expect "job 222: 1 file,"
expect "job 111: 3 files,"
if grep -q "disagree" "$dir/out"; then echo "FAIL: a verdict from mixed jobs"; exit 1; fi
run 0 --job 111 "$dir/trace-*.txt"
expect "verdict: every rank finished allreduce #4; nothing in flight"
# A second file of job 111 for rank 1, written later, with count 16 at #4.
job_file 111 1 16 2000 && mv "$dir/trace-111-1.txt" "$dir/later-111-1.txt" && job_file 111 1 8 1001
run 1 --job 111 "$dir/trace-111-*.txt" "$dir/later-111-1.txt"
expect "two files for communicator 3 rank 1: $dir/trace-111-1.txt"
expect "verdict: ranks disagree at #4"
# Not regular files: skipped without blocking on the FIFO; a file named twice is read once.
mkfifo "$dir/trace-111-fifo.txt" || exit 99
ln -s "$dir/trace-111-0.txt" "$dir/trace-111-link.txt"
run 0 "$dir/trace-111-*.txt" "$dir/trace-111-0.txt"
expect "skipped $dir/trace-111-fifo.txt: a FIFO"
expect "skipped $dir/trace-111-link.txt: a symbolic link"
if grep -q "two files" "$dir/out"; then echo "FAIL: one file counted twice"; exit 1; fi
# Malformed lines: reported by line, the rest read.
{ header 333 0 1 SIGUSR1
  echo "comm=3 rank=0 nranks=2 depth=64"
  entry 0 1 8 "done"
  echo "comm=3 rank=zero seq=2 coll=allreduce"
  echo "garbage"
  entry 0 2 8 "done"
  echo "# end"; } >"$dir/bad-0.txt"
{ header 333 1 1 SIGUSR1
  echo "comm=3 rank=1 nranks=2 depth=64"
  entry 1 1 8 "done"
  entry 1 2 8 "done"; } >"$dir/bad-1.txt"
printf '\377\376 binary \000 junk\n' >"$dir/bad-2.txt"
run 0 "$dir/bad-*.txt"
expect "$dir/bad-0.txt:4: malformed line ignored"
expect "$dir/bad-0.txt:5: malformed line ignored"
expect "$dir/bad-1.txt ends before its '# end' line"
expect "skipped $dir/bad-2.txt: not a Chorus flight-recorder file"
expect "verdict: every rank finished allreduce #2; nothing in flight"
# A rank that released the communicator, as its peer's error says.
{ header 444 0 1 "MPIX_Allreduce_gpu: #4: rank 1 released the communicator before entering it (its last was #3; MPI_Comm_free or MPI_Finalize); rank 0 timed out"
  echo "comm=3 rank=0 nranks=2 depth=64"
  for s in 1 2 3; do entry 0 $s 8 "done"; done
  entry 0 4 8 failed
  echo "# end"; } >"$dir/rel-0.txt"
run 1 "$dir/rel-0.txt"
expect "verdict: rank 1 released the communicator after #3 (MPI_Comm_free or MPI_Finalize; reported by rank 0) and left no trace file; rank 0 failed in #4"
# Another user's file (root can plant one): refused unless --any-owner.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
  cp "$dir/trace-111-2.txt" "$dir/theirs-2.txt" && chown nobody "$dir/theirs-2.txt" || exit 99
  run 1 "$dir/trace-111-0.txt" "$dir/trace-111-1.txt" "$dir/theirs-2.txt"
  expect "refused $dir/theirs-2.txt: owned by uid $(id -u nobody), not by you"
  expect "rank 2 left no trace file"
  run 0 --any-owner "$dir/trace-111-0.txt" "$dir/trace-111-1.txt" "$dir/theirs-2.txt"
else
  echo "(not root: the other user's file case needs root to plant one; the rest ran)"
fi
echo "chorus_trace keeps jobs apart and reads only what it can trust"
