#!/bin/sh
# The committed src/fortran/chorus.f90 must be what gen_chorus_f90.py
# writes today: an edit to the generator's table without regenerating the
# module (or a hand edit of the module) fails here, not in a user's build.
gen="$srcdir/../../src/fortran/gen_chorus_f90.py"
module="$srcdir/../../src/fortran/chorus.f90"
if ! command -v python3 >/dev/null 2>&1; then
  echo "skipped: no python3 to run $gen"
  exit 77
fi
out=$(mktemp) || exit 99
trap 'rm -f "$out"' EXIT
python3 "$gen" >"$out" || { echo "FAIL: $gen exited non-zero"; exit 1; }
if ! cmp -s "$out" "$module"; then
  echo "FAIL: $module differs from what $gen writes:"
  diff -u "$module" "$out" | head -40
  echo "regenerate it: python3 src/fortran/gen_chorus_f90.py > src/fortran/chorus.f90"
  exit 1
fi
echo "ok: $module matches $gen"
