# chorus_ucx.m4 - UCX (optional, inter-node transport).
#
# --with-ucx (default: auto, via pkg-config ucx).  Sets UCX_CFLAGS, UCX_LIBS,
# AM_CONDITIONAL HAVE_UCX and defines CHORUS_HAVE_UCX.

AC_DEFUN([CHORUS_CHECK_UCX], [
AC_REQUIRE([PKG_PROG_PKG_CONFIG])
AC_ARG_WITH([ucx],
  [AS_HELP_STRING([--with-ucx], [build the UCX inter-node transport (default: if pkg-config finds ucx)])],
  [], [with_ucx=auto])

chorus_have_ucx=no
AS_IF([test "x$with_ucx" = xno], [chorus_ucx_why="no (--without-ucx)"], [
  PKG_CHECK_MODULES([UCX], [ucx], [chorus_have_ucx=yes],
    [chorus_ucx_why="no (pkg-config ucx not found; install libucx-dev)"])
  AS_IF([test "$chorus_have_ucx" = yes], [
    chorus_save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS $UCX_CFLAGS"
    AC_CHECK_HEADER([ucp/api/ucp.h], [],
      [chorus_have_ucx=no; chorus_ucx_why="no (ucp/api/ucp.h does not compile)"])
    CPPFLAGS=$chorus_save_CPPFLAGS
  ])
  AS_IF([test "$chorus_have_ucx" = no && test "x$with_ucx" = xyes],
    [AC_MSG_ERROR([--with-ucx given but UCX is unusable: $chorus_ucx_why])])
])
AS_IF([test "$chorus_have_ucx" = yes], [
  chorus_ucx_version=`$PKG_CONFIG --modversion ucx 2>/dev/null`
  chorus_ucx_why="yes ${chorus_ucx_version}"
  AC_DEFINE([CHORUS_HAVE_UCX], [1], [UCX transport is built])
  CHORUS_DEFS="$CHORUS_DEFS -DCHORUS_HAVE_UCX=1"
], [
  UCX_CFLAGS=
  UCX_LIBS=
])
AM_CONDITIONAL([HAVE_UCX], [test "$chorus_have_ucx" = yes])
])
