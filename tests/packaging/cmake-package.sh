#!/bin/sh
# Install Chorus into a scratch directory (DESTDIR), build a program with
# CMake's find_package(Chorus) against it, run it at 2 ranks: its allreduce
# must match MPI's.  Also asks for a version the install cannot satisfy,
# which must fail.  Skips (77) only without cmake.
set -u
command -v cmake >/dev/null 2>&1 || { echo "skipped: no cmake"; exit 77; }
top_builddir=${top_builddir:-$(cd ../.. && pwd)}
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/chorus-cmake.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# Not the outer make's flags (make check runs this): a plain install.
MAKEFLAGS= MAKELEVEL= make -C "$top_builddir" install DESTDIR="$scratch/root" >"$scratch/install.log" 2>&1 ||
  { tail -20 "$scratch/install.log"; echo "FAIL: make install"; exit 1; }
config=$(find "$scratch/root" -name ChorusConfig.cmake | head -n 1)
[ -n "$config" ] || { echo "FAIL: no ChorusConfig.cmake installed"; exit 1; }
chorus_dir=$(dirname "$config")
echo "installed: $chorus_dir"
CC=${MPICC:-mpicc} cmake -S "$here" -B "$scratch/build" -DChorus_DIR="$chorus_dir" >"$scratch/cmake.log" 2>&1 ||
  { cat "$scratch/cmake.log"; echo "FAIL: cmake configure"; exit 1; }
cmake --build "$scratch/build" >"$scratch/build.log" 2>&1 || { cat "$scratch/build.log"; echo "FAIL: build"; exit 1; }
flags="--oversubscribe --mca op ^avx"
[ "$(id -u)" = 0 ] && flags="$flags --allow-run-as-root"
# shellcheck disable=SC2086
mpirun $flags -np 2 "$scratch/build/consumer" </dev/null || { echo "FAIL: the consumer's allreduce"; exit 1; }
# A request for a newer version must not be satisfied by this one.
sed 's/find_package(Chorus 0.1 REQUIRED)/find_package(Chorus 99.0 REQUIRED)/' "$here/CMakeLists.txt" >"$scratch/CMakeLists.txt"
cp "$here/consumer.c" "$scratch/"
if CC=${MPICC:-mpicc} cmake -S "$scratch" -B "$scratch/build99" -DChorus_DIR="$chorus_dir" >"$scratch/cmake99.log" 2>&1; then
  echo "FAIL: find_package(Chorus 99.0) accepted version $(grep -o 'PACKAGE_VERSION "[^"]*"' "$chorus_dir/ChorusConfigVersion.cmake")"
  exit 1
fi
echo "PASS"
