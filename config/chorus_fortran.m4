# chorus_fortran.m4 - Fortran bindings (the mpi_f08-based module).
#
# --enable-fortran (default: on when an MPI Fortran wrapper is found and
# compiles `use mpi_f08`).  MPIFC defaults to the wrapper matching CC
# (DIR/bin/mpifort for --with-mpi=DIR, mpifort.mpich next to mpicc.mpich).
# FC is set to MPIFC, so automake's own Fortran rules compile with it.
# Substitutes MPIFC; AM_CONDITIONAL HAVE_FORTRAN; defines
# HAVE_ISO_FORTRAN_BINDING_H when CC has the header (strided sections).
#
# CHORUS_FORTRAN_COMPILER  (after CHORUS_MPI_COMPILERS, before LT_INIT, so
#                           that libtool configures its Fortran tag)
# CHORUS_CHECK_FORTRAN     (checks `use mpi_f08' and decides)

AC_DEFUN([CHORUS_FORTRAN_COMPILER], [
AC_ARG_ENABLE([fortran],
  [AS_HELP_STRING([--enable-fortran],
    [build the Fortran module (default: if the MPI Fortran wrapper compiles `use mpi_f08')])],
  [], [enable_fortran=auto])
AC_ARG_VAR([MPIFC], [MPI Fortran compiler wrapper (default: mpifort matching CC)])

AS_IF([test "x$enable_fortran" != xno && test -z "$MPIFC"], [
  chorus_fc_names="mpifort mpif90"
  AS_IF([test "x$with_mpi" != xyes && test "x$with_mpi" != xno],
    [chorus_fc_names="$with_mpi/bin/mpifort $with_mpi/bin/mpif90"],
    [chorus_cc_base=`basename "$(echo $CC | sed 's/ .*//')"`
     case $chorus_cc_base in
       mpicc.*) chorus_fc_suffix=`echo $chorus_cc_base | sed 's/^mpicc//'`
                chorus_fc_names="mpifort$chorus_fc_suffix mpif90$chorus_fc_suffix" ;;
     esac])
  AC_CHECK_PROGS([MPIFC], [$chorus_fc_names])
])
AS_IF([test -z "$FC" && test -n "$MPIFC"], [FC=$MPIFC])
AC_PROG_FC([mpifort mpif90])
])

AC_DEFUN([CHORUS_CHECK_FORTRAN], [
AC_REQUIRE([CHORUS_FORTRAN_COMPILER])
chorus_have_fortran=no
AS_IF([test "x$enable_fortran" = xno],
  [chorus_fortran_why="no (--disable-fortran)"],
  [test -z "$MPIFC"],
  [chorus_fortran_why="no (no MPI Fortran wrapper: mpifort/mpif90 not found)"],
  [AC_LANG_PUSH([Fortran])
   AC_MSG_CHECKING([whether $MPIFC compiles use mpi_f08])
   chorus_save_FC=$FC
   FC=$MPIFC
   AC_COMPILE_IFELSE([AC_LANG_SOURCE([[
      program conftest
      use mpi_f08
      implicit none
      type(MPI_Comm) :: c
      integer :: ierr
      c = MPI_COMM_WORLD
      call MPI_Barrier(c, ierr)
      end program conftest
]])], [chorus_have_fortran=yes],
      [chorus_fortran_why="no ($MPIFC cannot compile 'use mpi_f08')"])
   FC=$chorus_save_FC
   AC_MSG_RESULT([$chorus_have_fortran])
   AC_LANG_POP([Fortran])])

# src/fortran/sections.c reads the descriptors of strided array sections
# to copy them; without the header such sections are refused instead.
AS_IF([test "$chorus_have_fortran" = yes],
  [AC_LANG_PUSH([C])
   AC_CHECK_HEADERS([ISO_Fortran_binding.h], [],
     [chorus_fortran_sections=" (strided sections refused: $CC has no ISO_Fortran_binding.h)"])
   AC_LANG_POP([C])])

AS_IF([test "$chorus_have_fortran" = yes],
  [chorus_fortran_why="yes ($MPIFC)$chorus_fortran_sections"],
  [AS_IF([test "x$enable_fortran" = xyes],
     [AC_MSG_ERROR([--enable-fortran given but $chorus_fortran_why])])])
AC_SUBST([MPIFC])
AM_CONDITIONAL([HAVE_FORTRAN], [test "$chorus_have_fortran" = yes])
])
