#!/bin/sh
# Install Chorus into a scratch directory (DESTDIR), build two programs with
# CMake's find_package(Chorus) against it and run them at 2 ranks: one
# calls MPIX_Allreduce_gpu (Chorus::chorus), the other plain MPI_Allreduce
# linked with Chorus::chorus_mpi; both must match MPI's own allreduce.  Also asks for a version the install cannot satisfy,
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
# The launcher and its flags: scripts/mpirun-flags.sh.
. "$here/../../scripts/mpirun-flags.sh"
# shellcheck disable=SC2086
"$mpirun" $mpirun_flags -np 2 "$scratch/build/consumer" </dev/null || { echo "FAIL: the consumer's allreduce"; exit 1; }
# The interposition target: a plain MPI program whose MPI_Allreduce must go
# to Chorus (the finalize report says so) and be right.
# The staged libchorus_mpi.so finds libchorus.so through its own run path,
# the configured prefix, which a DESTDIR install does not fill: point the
# loader at the staged copy.
libdir=$(cd "$chorus_dir/../.." && pwd)
# (Both launchers hand their environment to ranks on this machine.)
# shellcheck disable=SC2086
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" CHORUS_INTERPOSE=all CHORUS_DEBUG=INFO \
  "$mpirun" $mpirun_flags -np 2 \
    "$scratch/build/consumer_mpi" </dev/null >"$scratch/interpose.log" 2>&1 ||
  { cat "$scratch/interpose.log"; echo "FAIL: the interposed allreduce"; exit 1; }
grep "wrong elements" "$scratch/interpose.log"
if ! grep -q "MPI_Allreduce chorus=1 mpi=0" "$scratch/interpose.log"; then
  grep "interpose" "$scratch/interpose.log"
  echo "FAIL: Chorus::chorus_mpi did not route MPI_Allreduce to Chorus"
  exit 1
fi
# A request for a newer version must not be satisfied by this one.
sed 's/find_package(Chorus 0.1 REQUIRED)/find_package(Chorus 99.0 REQUIRED)/' "$here/CMakeLists.txt" >"$scratch/CMakeLists.txt"
cp "$here/consumer.c" "$here/consumer_mpi.c" "$scratch/"
if CC=${MPICC:-mpicc} cmake -S "$scratch" -B "$scratch/build99" -DChorus_DIR="$chorus_dir" >"$scratch/cmake99.log" 2>&1; then
  echo "FAIL: find_package(Chorus 99.0) accepted version $(grep -o 'PACKAGE_VERSION "[^"]*"' "$chorus_dir/ChorusConfigVersion.cmake")"
  exit 1
fi
echo "PASS"
