#!/bin/sh
# run-trace-files.sh MODE: trace and debug files against what a hostile
# local user plants at their predictable names, a name too long, a full
# disk, and a rank that finalized (test_trace_files, 2 ranks).  Modes:
#   links    a symbolic link at rank 0's trace file, at the debug file
#            (CHORUS_DEBUG_FILE) and at the topology dump
#            (CHORUS_TOPO_DUMP_FILE), a FIFO at rank 1's trace file: nothing
#            is written through the links, nobody blocks on the FIFO, the
#            dumps fail naming the cause.
#   foreign  (root only, else skipped) files owned by nobody at both trace
#            paths, the debug path and the topology dump: left as they were.
#   long     a trace file name over 511 characters: a warning at start and a
#            failed dump, not a file at a cut name.
#   limits   a dump is mode 0600 and whole; past the file size limit it fails.
#   release  rank 1 finalizes while rank 0 waits: rank 0's error and
#            chorus_trace's verdict say that rank 1 released the communicator.
#   agreed   no launcher job id (removed before the first Chorus call): the
#            ranks agree on one, in every file's header and name.
mode=$1
. "$(dirname "$0")/launch-common.sh"
launch_prepare test_trace_files
dir=$PWD/trace-files-$mode.d
rm -rf "$dir" && mkdir "$dir" || exit 99
CHORUS_TRACE_FILE=$dir/trace-%r.txt CHORUS_TIMEOUT=3
unset CHORUS_DEBUG_FILE TEST_EXPECT_0 TEST_EXPECT_1
export CHORUS_TRACE_FILE CHORUS_TIMEOUT
secret="precious $(date +%s%N)"
plant() {  # plant FILE OWNER: a file with $secret owned by OWNER
  echo "$secret" >"$1" && chown "$2" "$1" && chmod 644 "$1" || exit 99
}
intact() {  # intact FILE OWNER WHAT
  if [ "$(cat "$1")" != "$secret" ] || [ "$(stat -c %U "$1")" != "$2" ]; then
    echo "FAIL: $3 ($1) was written or taken over: $(stat -c '%U %a' "$1"): $(head -c 200 "$1")"; exit 1
  fi
}
case $mode in
  links)
    plant "$dir/victim" "$(id -un)"
    plant "$dir/victim-log" "$(id -un)"
    plant "$dir/victim-topo" "$(id -un)"
    ln -s "$dir/victim" "$dir/trace-0.txt"
    mkfifo "$dir/trace-1.txt" || exit 99
    ln -s "$dir/victim-log" "$dir/debug.txt"
    ln -s "$dir/victim-topo" "$dir/topo.xml"
    CHORUS_DEBUG_FILE=$dir/debug.txt CHORUS_DEBUG=INFO CHORUS_TOPO_DUMP_FILE=$dir/topo.xml
    TEST_EXPECT_0="Too many levels of symbolic links" TEST_EXPECT_1="Operation not permitted"
    export CHORUS_DEBUG_FILE CHORUS_DEBUG CHORUS_TOPO_DUMP_FILE TEST_EXPECT_0 TEST_EXPECT_1
    prog=refuse ;;
  foreign)
    [ "$(id -u)" = 0 ] || { echo "skipped: planting files of another user needs root"; exit 77; }
    id nobody >/dev/null 2>&1 || { echo "skipped: no user nobody"; exit 77; }
    for f in trace-0.txt trace-1.txt debug.txt topo.xml; do plant "$dir/$f" nobody; done
    CHORUS_DEBUG_FILE=$dir/debug.txt CHORUS_DEBUG=INFO CHORUS_TOPO_DUMP_FILE=$dir/topo.xml
    TEST_EXPECT_0="Operation not permitted" TEST_EXPECT_1="Operation not permitted"
    export CHORUS_DEBUG_FILE CHORUS_DEBUG CHORUS_TOPO_DUMP_FILE TEST_EXPECT_0 TEST_EXPECT_1
    prog=refuse ;;
  long)
    # Directories that exist, so that a name cut at 511 characters could be
    # created inside one of them: the cut is what must not happen.
    long=$dir
    while [ ${#long} -lt 560 ]; do long=$long/$(printf '%050d' 0); done
    mkdir -p "$long" || exit 99
    CHORUS_TRACE_FILE=$long/trace-%r.txt
    TEST_EXPECT_0="File name too long" TEST_EXPECT_1="File name too long"
    export TEST_EXPECT_0 TEST_EXPECT_1
    prog=refuse ;;
  agreed)
    CHORUS_TRACE_FILE=$dir/trace-%j-%r.txt
    prog=agreed ;;
  limits|release) prog=$mode ;;
  *) echo "usage: run-trace-files.sh links|foreign|long|limits|release|agreed"; exit 99 ;;
esac
log=$dir/run.out
# shellcheck disable=SC2086,SC2154  # $flags are words; launch_prepare sets both
timeout --kill-after=10 60 "$mpirun" -np 2 $flags ./test_trace_files "$prog" </dev/null >"$log" 2>&1
rc=$?
grep -E "^(PASS|FAIL|rank)" "$log"
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || { echo "FAIL: the job hung"; tail -20 "$log"; exit 1; }
if [ "$mode" = release ]; then
  # Rank 1 has nothing to fail: only rank 0 prints its verdict and writes a file.
  launch_expect_passes "$log" "$rc" 2
  tool="$(cd "$(dirname "$0")/../../tools" && pwd)/chorus_trace"
  command -v python3 >/dev/null 2>&1 || { echo "skipped: chorus_trace needs python3"; exit 77; }
  python3 "$tool" "$dir/trace-*.txt" >"$dir/verdict.out" 2>&1
  cat "$dir/verdict.out"
  want="rank 1 released the communicator after #3 (MPI_Comm_free or MPI_Finalize; reported by rank 0)"
  grep -qF "$want" "$dir/verdict.out" || { echo "FAIL: chorus_trace does not say: $want"; exit 1; }
  echo "rank 1 is reported as having released the communicator"; exit 0
fi
launch_expect_passes "$log" "$rc" 2
case $mode in
  links)
    intact "$dir/victim" "$(id -un)" "the target of the trace file's link"
    intact "$dir/victim-log" "$(id -un)" "the target of the debug file's link"
    intact "$dir/victim-topo" "$(id -un)" "the target of the topology dump's link"
    [ -L "$dir/trace-0.txt" ] && [ -L "$dir/debug.txt" ] && [ -p "$dir/trace-1.txt" ] && [ -L "$dir/topo.xml" ] ||
      { echo "FAIL: a planted link or FIFO was replaced"; exit 1; }
    grep -q "CHORUS WARN.*CHORUS_DEBUG_FILE = $dir/debug.txt: cannot write .*symbolic link" "$log" ||
      { echo "FAIL: no warning that the debug file is a link"; exit 1; }
    grep -q "CHORUS WARN.*CHORUS_TOPO_DUMP_FILE=$dir/topo.xml: cannot write the topology: .*symbolic link" "$log" ||
      { echo "FAIL: no warning that the topology dump is a link"; exit 1; } ;;
  foreign)
    for f in trace-0.txt trace-1.txt debug.txt topo.xml; do intact "$dir/$f" nobody "$f, owned by nobody"; done
    grep -q "CHORUS WARN.*CHORUS_DEBUG_FILE = $dir/debug.txt: cannot write" "$log" ||
      { echo "FAIL: no warning that the debug file is not ours"; exit 1; } ;;
  agreed)
    command -v python3 >/dev/null 2>&1 || { echo "skipped: chorus_trace needs python3"; exit 77; }
    python3 "$(dirname "$0")/../../tools/chorus_trace" "$dir/trace-*.txt" >"$dir/verdict.out" 2>&1
    trc=$?
    cat "$dir/verdict.out"
    [ "$trc" -eq 0 ] && grep -q "^job [0-9a-f]\{12\}: 2 files$" "$dir/verdict.out" ||
      { echo "FAIL: chorus_trace did not read both files as one job (exit $trc)"; exit 1; } ;;
  long)
    grep -q "CHORUS WARN.*CHORUS_TRACE_FILE expands to a name of [0-9]* characters, longer than 511" "$log" ||
      { echo "FAIL: no warning at start about the long name"; exit 1; }
    if find "$dir" -type f ! -name run.out | grep -q .; then
      echo "FAIL: a file was written at a cut name: $(find "$dir" -type f ! -name run.out | head -1)"; exit 1
    fi ;;
esac
echo "trace files: $mode passed"
