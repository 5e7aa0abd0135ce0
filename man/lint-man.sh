#!/bin/sh
# lint-man.sh [PAGE...] - lint the Chorus man pages; exit 0 when clean.
#
# Uses MAN_LINT from configure when set (mandoc -Tlint -Wwarning, or groff
# -man -ww -z), else mandoc or groff from PATH; exits 77 (skipped) when
# neither exists.  Any diagnostic fails the page.  Without arguments, lints
# every page under this script's folder.
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$MAN_LINT" ]; then
  if command -v mandoc >/dev/null 2>&1; then
    MAN_LINT="mandoc -Tlint -Wwarning"
  elif command -v groff >/dev/null 2>&1; then
    MAN_LINT="groff -man -ww -z"
  else
    echo "skipped: neither mandoc nor groff is installed"
    exit 77
  fi
fi
if [ $# -eq 0 ]; then
  set -- "$here"/man1/*.1 "$here"/man3/*.3 "$here"/man7/*.7
fi
status=0
for page in "$@"; do
  out=$($MAN_LINT "$page" 2>&1)
  if [ $? -ne 0 ] || [ -n "$out" ]; then
    echo "FAIL $page"
    [ -n "$out" ] && echo "$out"
    status=1
  else
    echo "ok   $page"
  fi
done
exit $status
