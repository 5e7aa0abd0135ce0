# chorus_mpi.m4 - choose the MPI compiler wrappers and check MPI works.
#
# CHORUS_MPI_COMPILERS  (before AC_PROG_CC / AC_PROG_CXX)
#   Precedence: user CC/CXX > user MPICC/MPICXX > --with-mpi=DIR > PATH.
# CHORUS_CHECK_MPI      (after the compilers)
#   Checks mpi.h and MPI_Init link in C and C++, names the implementation and
#   sets MPI_CPPFLAGS (for nvcc, which cannot go through a wrapper), MPIEXEC
#   and MPIEXEC_FLAGS (for the test and perf Makefiles).

AC_DEFUN([CHORUS_MPI_COMPILERS], [
AC_ARG_WITH([mpi],
  [AS_HELP_STRING([--with-mpi=DIR],
    [use DIR/bin/mpicc and DIR/bin/mpicxx as CC and CXX
     (default: mpicc and mpicxx from PATH; MPICC/MPICXX/CC/CXX override)])],
  [], [with_mpi=yes])
AC_ARG_VAR([MPICC], [MPI C compiler wrapper, used as CC unless CC is set])
AC_ARG_VAR([MPICXX], [MPI C++ compiler wrapper, used as CXX unless CXX is set])

AS_IF([test "x$with_mpi" = xno],
  [AC_MSG_ERROR([Chorus needs MPI; --without-mpi is not supported])])

AS_IF([test "x$with_mpi" != xyes], [
  AS_IF([test -z "$MPICC"], [MPICC="$with_mpi/bin/mpicc"])
  AS_IF([test -z "$MPICXX"], [MPICXX="$with_mpi/bin/mpicxx"])
  AS_IF([test -z "$CC" && test ! -x "$MPICC"],
    [AC_MSG_ERROR([--with-mpi=$with_mpi: no executable $MPICC])])
  AS_IF([test -z "$CXX" && test ! -x "$MPICXX"],
    [AC_MSG_ERROR([--with-mpi=$with_mpi: no executable $MPICXX])])
])

AS_IF([test -z "$CC$MPICC"],
  [AC_CHECK_PROGS([MPICC], [mpicc mpicc.openmpi mpicc.mpich])])
AS_IF([test -z "$CXX$MPICXX"],
  [AC_CHECK_PROGS([MPICXX], [mpicxx mpic++ mpiCC mpicxx.openmpi mpicxx.mpich])])

AS_IF([test -z "$CC"], [CC="$MPICC"])
AS_IF([test -z "$CXX"], [CXX="$MPICXX"])
AS_IF([test -z "$CC" || test -z "$CXX"],
  [AC_MSG_ERROR([no MPI compiler wrappers found: install Open MPI or MPICH
    (e.g. apt-get install openmpi-bin libopenmpi-dev), or pass --with-mpi=DIR
    or MPICC=... MPICXX=...])])
])

AC_DEFUN([CHORUS_CHECK_MPI], [
AC_REQUIRE([AC_PROG_CC])
AC_REQUIRE([AC_PROG_CXX])

AC_LANG_PUSH([C])
AC_CHECK_HEADER([mpi.h], [],
  [AC_MSG_ERROR([mpi.h does not compile with CC=$CC; is CC an MPI wrapper?])])
AC_MSG_CHECKING([whether MPI_Init links with $CC])
AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]],
                                [[MPI_Init(0, 0); MPI_Finalize();]])],
  [AC_MSG_RESULT([yes])],
  [AC_MSG_RESULT([no])
   AC_MSG_ERROR([cannot link an MPI program with CC=$CC])])

# Implementation, from the macros mpi.h defines.
chorus_mpi_impl=unknown
AC_MSG_CHECKING([which MPI implementation])
AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#ifndef OPEN_MPI
#error not Open MPI
#endif]], [])], [chorus_mpi_impl="Open MPI"])
AS_IF([test "$chorus_mpi_impl" = "Open MPI"], [
  AC_COMPUTE_INT([chorus_ompi_major], [OMPI_MAJOR_VERSION], [[#include <mpi.h>]])
  AC_COMPUTE_INT([chorus_ompi_minor], [OMPI_MINOR_VERSION], [[#include <mpi.h>]])
  AC_COMPUTE_INT([chorus_ompi_release], [OMPI_RELEASE_VERSION], [[#include <mpi.h>]])
  chorus_mpi_impl="Open MPI $chorus_ompi_major.$chorus_ompi_minor.$chorus_ompi_release"
], [
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#ifndef MPICH_VERSION
#error not MPICH
#endif]], [])], [
    AC_LANG_CONFTEST([AC_LANG_SOURCE([[#include <mpi.h>
chorus_mpich_version MPICH_VERSION]])])
    chorus_mpich_version=`$CC -E $CPPFLAGS conftest.$ac_ext 2>/dev/null |
      sed -n 's/^chorus_mpich_version *"\(.*\)".*/\1/p'`
    chorus_mpi_impl="MPICH ${chorus_mpich_version:-(version unknown)}"
    rm -f conftest.$ac_ext])
])
AC_COMPUTE_INT([chorus_mpi_version], [MPI_VERSION], [[#include <mpi.h>]],
               [chorus_mpi_version=0])
AC_COMPUTE_INT([chorus_mpi_subversion], [MPI_SUBVERSION], [[#include <mpi.h>]],
               [chorus_mpi_subversion=0])
chorus_mpi_impl="$chorus_mpi_impl (MPI-$chorus_mpi_version.$chorus_mpi_subversion)"
AC_MSG_RESULT([$chorus_mpi_impl])
AS_IF([test "$chorus_mpi_version" -lt 3],
  [AC_MSG_ERROR([MPI-3 or later is needed (MPI_Count, MPI_Comm_split_type)])])
AC_LANG_POP([C])

AC_LANG_PUSH([C++])
AC_MSG_CHECKING([whether MPI_Init links with $CXX])
AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]],
                                [[MPI_Init(0, 0); MPI_Finalize();]])],
  [AC_MSG_RESULT([yes])],
  [AC_MSG_RESULT([no])
   AC_MSG_ERROR([cannot link an MPI program with CXX=$CXX; is CXX an MPI wrapper?])])
AC_LANG_POP([C++])

# MPI's include flags, for compilers that cannot go through the wrapper
# (nvcc).  Open MPI: --showme:compile; MPICH: -compile_info; else -show.
AC_ARG_VAR([MPI_CPPFLAGS], [preprocessor flags to find mpi.h without the wrapper (default: asked from the wrapper)])
AC_MSG_CHECKING([for MPI preprocessor flags])
AS_IF([test -z "$MPI_CPPFLAGS"], [
  chorus_mpi_show=`$CXX --showme:compile 2>/dev/null` ||
    chorus_mpi_show=`$CXX -compile_info 2>/dev/null` ||
    chorus_mpi_show=`$CXX -show 2>/dev/null` || chorus_mpi_show=
  for chorus_tok in $chorus_mpi_show; do
    case $chorus_tok in
      -I*|-D*) MPI_CPPFLAGS="$MPI_CPPFLAGS $chorus_tok" ;;
    esac
  done
  MPI_CPPFLAGS=`echo $MPI_CPPFLAGS`
])
AC_MSG_RESULT([${MPI_CPPFLAGS:-none needed}])

# The launcher next to the wrapper, so tests run with the MPI they link.
chorus_mpi_bindir=
chorus_cc_word=`echo $CC | sed 's/ .*//'`
chorus_cc_path=`command -v "$chorus_cc_word" 2>/dev/null`
AS_IF([test -n "$chorus_cc_path"],
  [chorus_mpi_bindir=`dirname "$chorus_cc_path"`])
AC_ARG_VAR([MPIEXEC], [MPI launcher used by make check and perf (default: mpiexec next to CC)])
AS_IF([test -z "$MPIEXEC"], [
  case $chorus_cc_word in
    *.mpich) chorus_exec_names="mpiexec.mpich mpirun.mpich mpiexec" ;;
    *.openmpi) chorus_exec_names="mpiexec.openmpi mpirun.openmpi mpiexec" ;;
    *) chorus_exec_names="mpiexec mpirun" ;;
  esac
  AC_PATH_PROGS([MPIEXEC], [$chorus_exec_names], [],
                [$chorus_mpi_bindir$PATH_SEPARATOR$PATH])
])
AS_IF([test -z "$MPIEXEC"],
  [AC_MSG_WARN([no mpiexec found: multi-rank tests cannot run])])

# No default launcher flags here: scripts/mpirun-flags.sh, which every test
# and perf launcher sources, picks them for the launcher it finds (Open
# MPI's and MPICH's differ); MPIEXEC_FLAGS only adds to them.
AC_ARG_VAR([MPIEXEC_FLAGS], [extra launcher flags for make check and perf, after those scripts/mpirun-flags.sh picks])
])
