#!/usr/bin/env bash
# check-install.sh - install a configured and built tree into a scratch
# directory (make install DESTDIR=...) and check what landed there, so that
# every configuration CI builds is installed too (scripts/test.sh).
#
# Checks: the library, the interposer, the header, the .pc files and the
# CMake package are there; every installed shared library finds each library
# it needs among the installed ones and the system's; C and Fortran programs
# built against the stage each documented way (tests/packaging/
# build-against-install.sh) match MPI_Allreduce at 2 ranks.  A sanitizer
# build skips the programs only (its library wants the sanitizer's runtime
# loaded first, which a plain program does not do).
#
# Usage: check-install.sh BUILD_DIR
# Writes BUILD_DIR/install-check.log and BUILD_DIR/install-check.trs, one
# Automake test result that scripts/count-results.sh counts; exits 0 on PASS.
set -uo pipefail

build=$(cd "${1:?usage: check-install.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
log=$build/install-check.log
stage=$build/_install_stage
rm -rf "$stage"
exec 3>&1 >"$log" 2>&1

finish() {  # RESULT MESSAGE
  echo "$1: $2"
  printf ':test-result: %s\n:global-test-result: %s\n:recheck: %s\n:copy-in-global-log: %s\n' \
    "$1" "$1" "$([ "$1" = PASS ] && echo no || echo yes)" "$([ "$1" = PASS ] && echo no || echo yes)" \
    >"$build/install-check.trs"
  echo "install-check ($build): $1: $2" >&3
  [ "$1" = PASS ] && rm -rf "$stage"
  [ "$1" = PASS ]
  exit
}

# A plain install, whatever make flags called this script.
MAKEFLAGS='' MAKELEVEL='' make -C "$build" -j"${CHORUS_JOBS:-2}" install DESTDIR="$stage" || finish FAIL "make install"

lib=$(find "$stage" -name libchorus.so -print -quit)
[ -n "$lib" ] || finish FAIL "no libchorus.so installed"
libdir=$(dirname "$lib")
for f in "$libdir/libchorus_mpi.so" "$libdir/pkgconfig/chorus.pc" "$libdir/pkgconfig/chorus-mpi.pc" \
  "$libdir/cmake/Chorus/ChorusConfig.cmake"; do
  [ -e "$f" ] || finish FAIL "${f#"$stage"} not installed"
done
header=$(find "$stage" -name chorus.h -print -quit)
[ -n "$header" ] || finish FAIL "no chorus.h installed"
# The CPU emulation of CUDA is a library of its own, which libchorus needs.
if grep -q '^CUDA_LIBS = .*libchorus_cudaemu' "$build/Makefile"; then
  [ -e "$libdir/libchorus_cudaemu.so" ] || finish FAIL "an emulated build without libchorus_cudaemu.so installed"
fi
echo "installed in $stage:"
(cd "$stage" && find . -type f | sort)

# Every installed shared library resolves, among the staged ones first.
for so in "$libdir"/*.so; do
  missing=$(LD_LIBRARY_PATH="$libdir" ldd "$so" | grep 'not found')
  [ -z "$missing" ] || finish FAIL "${so#"$stage"} needs $missing"
done

# (A sanitized shared library names no sanitizer runtime among its needs:
# GCC links that into programs only.  The build's flags say it.)
lib_deps=$(ldd "$lib")  # whole, not cut short by grep -q under pipefail
if grep -q 'lib[at]san\|libubsan' <<<"$lib_deps" || grep -q -- '-fsanitize=' "$build/Makefile"; then
  finish PASS "installed and resolved (a sanitizer build: the program run is left out)"
fi

# Programs built as a user builds them (plain flags, pkg-config, CMake;
# C and Fortran) against the staged install, run at 2 ranks.
bash "$here/tests/packaging/build-against-install.sh" "$stage" "$build" ||
  finish FAIL "a program built against the install (tests/packaging/build-against-install.sh)"
finish PASS "installed, resolved, and programs built against it ran"
