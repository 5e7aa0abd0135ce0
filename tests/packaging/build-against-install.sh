#!/usr/bin/env bash
# build-against-install.sh - build small programs against a staged install
# (make install DESTDIR=STAGE) each way README.md and doc/building.md show,
# and run them at 2 ranks; each checks Chorus's allreduce against MPI's.
# Called by scripts/check-install.sh, which CI runs on each build it makes.
#
#   C        the plain mpicc line (-I -L -Wl,-rpath -lchorus);
#            pkg-config chorus, with no hwloc.pc or ucx.pc to be found;
#            pkg-config chorus-mpi (an unchanged MPI program routed to
#            Chorus).  CMake's Chorus::chorus: tests/packaging/cmake-package.sh.
#   Fortran  mpifort with the documented flags; pkg-config chorus-fortran;
#            CMake's Chorus::chorus_fortran in a Fortran-only project
#            (fortran/CMakeLists.txt) compiled by the bare Fortran compiler,
#            so that `use mpi_f08` needs the MPI::MPI_Fortran it brings.
#
# The install is used as if it were at STAGE/PREFIX (pkg-config
# --define-prefix): a program must find its Chorus libraries through the
# run path the documented flags give it, with no LD_LIBRARY_PATH; only the
# libraries' own staged dependencies (the CPU emulation of CUDA) are shown
# to the loader, which would find them in the prefix after a real install.
# A missing cmake or pkg-config is a failure, not a skip.
#
# Usage: build-against-install.sh STAGE BUILD_DIR; exits 0 when all pass.
set -uo pipefail

stage=$(cd "${1:?usage: build-against-install.sh STAGE BUILD_DIR}" && pwd)
build=$(cd "${2:?usage: build-against-install.sh STAGE BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
pass() { echo "ok: $*"; }
for tool in pkg-config cmake; do
  command -v "$tool" >/dev/null || fail "no $tool (scripts/setup.sh installs it): its way of building is untested"
done

lib=$(find "$stage" -name libchorus.so -print -quit)
[ -n "$lib" ] || fail "no libchorus.so in $stage"
libdir=$(dirname "$lib")
incdir=$(dirname "$(find "$stage" -name chorus.h -print -quit)")
scratch=$(mktemp -d "${TMPDIR:-/tmp}/chorus-consumers.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

makevar() { sed -n "s/^$1 = //p" "$build/Makefile"; }
mpicc=$(makevar CC)
mpifc=$(makevar MPIFC)
MPIEXEC=$(makevar MPIEXEC) MPIEXEC_FLAGS=$(makevar MPIEXEC_FLAGS)
export MPIEXEC MPIEXEC_FLAGS
# shellcheck source=scripts/mpirun-flags.sh
. "$here/../../scripts/mpirun-flags.sh"
[ "$mpirun_impl" != none ] || fail "no MPI launcher ($mpirun)"

# Only the staged .pc files are visible: a query must not need hwloc.pc or
# ucx.pc, which come with their -dev packages only.
pkgconf() {
  env -u PKG_CONFIG_PATH -u PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR="$libdir/pkgconfig" \
    pkg-config --define-prefix "$@"
}


# PROGRAM LIBRARY...: the program finds each staged library by its run path.
check_runpath() {
  local prog=$1 so found
  shift
  for so in "$@"; do
    found=$(env -u LD_LIBRARY_PATH ldd "$prog" | sed -n "s/^[[:space:]]*$so => \(.*\) (0x.*/\1/p; s/^[[:space:]]*$so => //p")
    [ "$found" = "$libdir/$so" ] ||
      fail "$(basename "$prog"): $so => ${found:-(not needed)}, not $libdir/$so (no run path?)"
  done
}

# PROGRAM [ENV...]: 2 ranks; the program itself compares with MPI.  A
# staged library's own dependency in the stage (libchorus for
# libchorus_mpi, libchorus_cudaemu for an emulated libchorus) is where its
# run path, the prefix, does not point: only then is the loader shown it.
run2() {
  local prog=$1 loader_env=(env -u LD_LIBRARY_PATH) deps
  shift
  # ldd's whole output first: under pipefail, grep -q leaving early could
  # kill ldd by SIGPIPE and read as "nothing missing".
  deps=$(env -u LD_LIBRARY_PATH ldd "$prog")
  if grep -q 'not found' <<<"$deps"; then
    loader_env=(env LD_LIBRARY_PATH="$libdir")
  fi
  # shellcheck disable=SC2086  # the flags are words
  "${loader_env[@]}" "$@" "$mpirun" $mpirun_flags -np 2 "$prog" </dev/null >"$prog.log" 2>&1 ||
    { cat "$prog.log"; fail "$(basename "$prog") failed at 2 ranks"; }
  grep -i 'wrong elements' "$prog.log"
}

# --- C ---------------------------------------------------------------------
# The plain line (README.md, doc/building.md).
"$mpicc" -I"$incdir" "$here/consumer.c" -L"$libdir" -Wl,-rpath,"$libdir" -lchorus -o "$scratch/c_plain" ||
  fail "C: the plain mpicc line"
check_runpath "$scratch/c_plain" libchorus.so.0
run2 "$scratch/c_plain" && pass "C, plain mpicc line"

# pkg-config chorus, which also keeps hwloc's flags for static links.
flags=$(pkgconf --cflags --libs chorus) || fail "pkg-config chorus (without hwloc.pc/ucx.pc)"
case " $flags " in *" -L$libdir "*) ;; *) fail "pkg-config chorus gave '$flags', not -L$libdir" ;; esac
static_libs=$(pkgconf --static --libs chorus)
grep -q -- -lhwloc <<<"$static_libs" || fail "pkg-config --static --libs chorus has no -lhwloc"
# shellcheck disable=SC2086
"$mpicc" "$here/consumer.c" $flags -o "$scratch/c_pc" || fail "C: mpicc with pkg-config chorus ($flags)"
check_runpath "$scratch/c_pc" libchorus.so.0
run2 "$scratch/c_pc" && pass "C, pkg-config chorus: $flags"

# pkg-config chorus-mpi: a plain MPI program whose MPI_Allreduce goes to
# Chorus (its finalize report says so).
flags=$(pkgconf --libs chorus-mpi) || fail "pkg-config chorus-mpi"
# shellcheck disable=SC2086
"$mpicc" "$here/consumer_mpi.c" $flags -o "$scratch/c_mpi" || fail "C: mpicc with pkg-config chorus-mpi ($flags)"
check_runpath "$scratch/c_mpi" libchorus_mpi.so.0
run2 "$scratch/c_mpi" CHORUS_INTERPOSE=all CHORUS_DEBUG=INFO
grep -q "MPI_Allreduce chorus=1 mpi=0" "$scratch/c_mpi.log" ||
  { grep interpose "$scratch/c_mpi.log"; fail "pkg-config chorus-mpi: MPI_Allreduce was not routed to Chorus"; }
pass "C, pkg-config chorus-mpi: $flags"

# --- Fortran ---------------------------------------------------------------
if [ ! -e "$libdir/libchorus_fortran.so" ]; then
  [ ! -e "$libdir/pkgconfig/chorus-fortran.pc" ] || fail "chorus-fortran.pc installed without libchorus_fortran"
  echo "ok: Fortran not built here (configure --disable-fortran), nor offered by pkg-config"
  exit 0
fi
[ -e "$incdir/chorus.mod" ] || fail "libchorus_fortran installed without chorus.mod next to chorus.h"
cd "$scratch" || exit 1

# The documented mpifort line (README.md, examples/README-fortran.md).
"$mpifc" -I"$incdir" "$here/consumer.f90" -L"$libdir" -Wl,-rpath,"$libdir" -lchorus_fortran -lchorus -o f_plain ||
  fail "Fortran: the documented mpifort line"
check_runpath "$scratch/f_plain" libchorus_fortran.so.0
run2 "$scratch/f_plain" && pass "Fortran, plain mpifort line"

flags=$(pkgconf --cflags --libs chorus-fortran) || fail "pkg-config chorus-fortran"
# shellcheck disable=SC2086
"$mpifc" "$here/consumer.f90" $flags -o f_pc || fail "Fortran: mpifort with pkg-config chorus-fortran ($flags)"
check_runpath "$scratch/f_pc" libchorus_fortran.so.0
run2 "$scratch/f_pc" && pass "Fortran, pkg-config chorus-fortran: $flags"

# CMake, Fortran only, with the compiler under the MPI wrapper.
fc=$("$mpifc" --showme:command 2>/dev/null || "$mpifc" -show 2>/dev/null | awk '{print $1; exit}')
[ -n "$fc" ] || fail "cannot tell the compiler under $mpifc"
FC=$fc cmake -S "$here/fortran" -B "$scratch/fbuild" -DChorus_DIR="$libdir/cmake/Chorus" >"$scratch/cmake.log" 2>&1 ||
  { cat "$scratch/cmake.log"; fail "Fortran: CMake configure of a Fortran-only project"; }
cmake --build "$scratch/fbuild" >"$scratch/cmake-build.log" 2>&1 ||
  { cat "$scratch/cmake-build.log"; fail "Fortran: CMake build with Chorus::chorus_fortran ($fc)"; }
check_runpath "$scratch/fbuild/consumer_f" libchorus_fortran.so.0
run2 "$scratch/fbuild/consumer_f" && pass "Fortran, CMake Chorus::chorus_fortran, Fortran-only project ($fc)"
exit 0
