#!/bin/sh
# run-logging.sh: what CHORUS_DEBUG=INFO writes on a job of 2 ranks
# (test_teardown: about a thousand broadcasts per rank on 3 communicators),
# each rank to its own CHORUS_DEBUG_FILE through %r, with a misspelled
# setting in the environment (issue 33, item 9).  Checked:
#   - each rank's file is log-<rank>.txt and holds that rank's lines only;
#   - its first line names the version and a library file that exists;
#   - it stays short: set-up lines and one summary per communicator, no line
#     per call (those are TRACE);
#   - the summaries count the broadcasts the program made on each
#     communicator (2C, 420 + 2C and 2C for CHORUS_TEST_CALLS=C);
#   - each process warns once about CHORUS_TIMEOUTT, suggesting CHORUS_TIMEOUT.
. "$(dirname "$0")/launch-common.sh"
launch_prepare test_teardown
dir=$PWD/logging.d
rm -rf "$dir" && mkdir "$dir" || exit 99
calls=100
CHORUS_DEBUG=INFO CHORUS_DEBUG_FILE=$dir/log-%r.txt CHORUS_TEST_CALLS=$calls CHORUS_TIMEOUTT=5
CHORUS_TRACE_FILE=$dir/trace-%r.txt
unset CHORUS_DEBUG_SUBSYS
export CHORUS_DEBUG CHORUS_DEBUG_FILE CHORUS_TEST_CALLS CHORUS_TIMEOUTT CHORUS_TRACE_FILE
log=$dir/run.out
# shellcheck disable=SC2086,SC2154  # $flags are words; launch_prepare sets both
timeout --kill-after=10 60 "$mpirun" -np 2 $flags ./test_teardown </dev/null >"$log" 2>&1
rc=$?
grep -E "^(PASS|FAIL)" "$log"
launch_expect_passes "$log" "$rc" 2
failed=0
fail() { echo "FAIL: $*"; failed=1; }
for r in 0 1; do
  f=$dir/log-$r.txt
  [ -f "$f" ] || { fail "no log file for rank $r ($f): CHORUS_DEBUG_FILE's %r not expanded? $(ls "$dir" | tr '\n' ' ')"; continue; }
  other=$(grep -vc "\[rank $r\] CHORUS " "$f")
  [ "$other" -eq 0 ] || fail "$f has $other lines not of rank $r: $(grep -v "\[rank $r\] CHORUS " "$f" | head -2)"
  first=$(head -1 "$f")
  lib=$(echo "$first" | sed -n 's/.* CHORUS INFO Chorus [0-9][0-9.]* ([^)]*), library \([^;]*\);.*/\1/p')
  [ -n "$lib" ] || fail "the first line of $f does not name the version and library: $first"
  [ -f "$lib" ] || fail "the library named by $f's first line does not exist: $lib"
  lines=$(wc -l <"$f")
  [ "$lines" -le 40 ] || fail "$f has $lines lines for $((6 * calls + 420)) broadcasts: a line per call at INFO? $(sed -n 10,12p "$f")"
  counts=$(sed -n 's/.* CHORUS INFO comm [0-9]* released, rank [0-9]* of 2: \([0-9]*\) collectives.*/\1/p' "$f" |
    sort -n | tr '\n' ' ')
  [ "$counts" = "$((2 * calls)) $((2 * calls)) $((420 + 2 * calls)) " ] ||
    fail "$f's summaries count '$counts' broadcasts, the program made $((2 * calls)), $((2 * calls)) and $((420 + 2 * calls))"
  echo "rank $r: $lines lines, first: ${first#* CHORUS INFO }"
done
warned=$(grep -c "CHORUS WARN CHORUS_TIMEOUTT is set but is not a Chorus setting; did you mean CHORUS_TIMEOUT?" "$log")
[ "$warned" -eq 2 ] || fail "$warned warnings about CHORUS_TIMEOUTT, not one per process: $(grep WARN "$log" | head -3)"
[ "$failed" -eq 0 ] || exit 1
echo "logging: INFO is set-up and summaries, files per rank, a misspelled setting named"
