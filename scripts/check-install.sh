#!/usr/bin/env bash
# check-install.sh - install a configured and built tree into a scratch
# directory (make install DESTDIR=...) and check what landed there, so that
# every configuration CI builds is installed too (scripts/test.sh).
#
# Checks: the library, the interposer, the header, chorus.pc and the CMake
# package are there; every installed shared library finds each library it
# needs among the installed ones and the system's; a C program built with
# the staged chorus.pc (pkg-config, sysroot set to the scratch directory)
# calls MPIX_Allreduce_gpu at 2 ranks and matches MPI_Allreduce.  A
# sanitizer build skips the run only (its library wants the sanitizer's
# runtime loaded first, which a plain program does not do).
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
for f in "$libdir/libchorus_mpi.so" "$libdir/pkgconfig/chorus.pc" "$libdir/cmake/Chorus/ChorusConfig.cmake"; do
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
if ldd "$lib" | grep -q 'lib[at]san\|libubsan' || grep -q -- '-fsanitize=' "$build/Makefile"; then
  finish PASS "installed and resolved (a sanitizer build: the program run is left out)"
fi

# A program built as a user builds one, with the MPI this tree was
# configured with and the flags from the installed chorus.pc.
mpicc=$(sed -n 's/^CC = //p' "$build/Makefile")
mpiexec=$(sed -n 's/^MPIEXEC = //p' "$build/Makefile")
read -r -a mpiexec_flags <<<"$(sed -n 's/^MPIEXEC_FLAGS = //p' "$build/Makefile")"
flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage" pkg-config --cflags --libs chorus) ||
  finish FAIL "pkg-config cannot read the installed chorus.pc"
# The staged libraries are not where the linker looks for the libraries
# they need in turn (an emulated libchorus needs libchorus_cudaemu, which an
# install into the prefix would put on the linker's default path): point it
# there with -rpath-link, which adds nothing to the program.
# shellcheck disable=SC2086  # the flags are words
${mpicc:-mpicc} -o "$stage/consumer" "$here/tests/packaging/consumer.c" $flags -Wl,-rpath-link,"$libdir" ||
  finish FAIL "compiling against the install"
# The staged libraries are not where their run path says (the prefix): the
# loader is pointed at them (Open MPI passes the variable on with -x).
run=("${mpiexec:-mpiexec}" "${mpiexec_flags[@]}")
"${mpiexec:-mpiexec}" --version 2>/dev/null | grep -q 'Open MPI' && run+=(-x LD_LIBRARY_PATH)
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "${run[@]}" -np 2 "$stage/consumer" </dev/null ||
  finish FAIL "the program built against the install failed"
finish PASS "installed, resolved, and a program built against it ran"
