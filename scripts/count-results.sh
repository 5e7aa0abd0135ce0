#!/usr/bin/env bash
# count-results.sh - sum the automake test results (*.trs) under a build tree.
#
# Usage: count-results.sh [BUILD_DIR...]   (default: _build next to scripts/)
# Prints one line "N passed, N failed, N skipped".  PASS and XFAIL count as
# passed; FAIL, ERROR and XPASS as failed; SKIP as skipped.
# Exit status: 0 if nothing failed and at least one test ran, 1 otherwise.
set -euo pipefail

if [ $# -eq 0 ]; then
  set -- "$(dirname "$0")/../_build"
fi

passed=0 failed=0 skipped=0
while IFS= read -r -d '' trs; do
  while read -r key result _; do
    [ "$key" = ":test-result:" ] || continue
    case $result in
      PASS|XFAIL) passed=$((passed + 1)) ;;
      FAIL|ERROR|XPASS) failed=$((failed + 1)) ;;
      SKIP) skipped=$((skipped + 1)) ;;
    esac
  done < "$trs"
done < <(find "$@" -name '*.trs' -type f -print0 2>/dev/null)

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ $((passed + failed + skipped)) -gt 0 ]
