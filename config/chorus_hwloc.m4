# chorus_hwloc.m4 - hwloc (required): HWLOC_CFLAGS, HWLOC_LIBS.

AC_DEFUN([CHORUS_CHECK_HWLOC], [
AC_REQUIRE([PKG_PROG_PKG_CONFIG])
PKG_CHECK_MODULES([HWLOC], [hwloc >= 2.0], [],
  [AC_MSG_ERROR([hwloc >= 2.0 is required (pkg-config: $HWLOC_PKG_ERRORS);
    install libhwloc-dev or set PKG_CONFIG_PATH, or set HWLOC_CFLAGS/HWLOC_LIBS])])
chorus_save_CPPFLAGS=$CPPFLAGS
CPPFLAGS="$CPPFLAGS $HWLOC_CFLAGS"
AC_CHECK_HEADER([hwloc.h], [],
  [AC_MSG_ERROR([hwloc.h does not compile with HWLOC_CFLAGS=$HWLOC_CFLAGS])])
CPPFLAGS=$chorus_save_CPPFLAGS
chorus_hwloc_version=`$PKG_CONFIG --modversion hwloc 2>/dev/null`
chorus_hwloc_version="yes ${chorus_hwloc_version:-(version from HWLOC_CFLAGS/HWLOC_LIBS)}"
])
