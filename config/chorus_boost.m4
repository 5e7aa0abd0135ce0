# chorus_boost.m4 - Boost.Test for make check.
#
# Sets BOOST_UNIT_TEST_CPPFLAGS (-DBOOST_TEST_DYN_LINK when the shared
# library is what links), BOOST_UNIT_TEST_LIBS, AM_CONDITIONAL
# HAVE_BOOST_TEST.  Without it the library still builds; make check does not.

AC_DEFUN([CHORUS_CHECK_BOOST_TEST], [
AC_ARG_VAR([BOOST_UNIT_TEST_LIBS], [linker flags for Boost.Test (default: -lboost_unit_test_framework)])
chorus_have_boost_test=no
chorus_boost_why="no (boost/test/unit_test.hpp not found; install libboost-test-dev)"
AC_LANG_PUSH([C++])
AC_CHECK_HEADER([boost/test/unit_test.hpp], [chorus_have_boost_test=maybe])
AS_IF([test "$chorus_have_boost_test" = maybe], [
  AS_IF([test -z "$BOOST_UNIT_TEST_LIBS"],
        [BOOST_UNIT_TEST_LIBS="-lboost_unit_test_framework"])
  chorus_save_LIBS=$LIBS
  LIBS="$BOOST_UNIT_TEST_LIBS $LIBS"
  chorus_boost_why="no (cannot link a test with $BOOST_UNIT_TEST_LIBS)"
  for chorus_boost_def in -DBOOST_TEST_DYN_LINK ""; do
    AC_MSG_CHECKING([whether Boost.Test links with $BOOST_UNIT_TEST_LIBS ${chorus_boost_def:-(static)}])
    chorus_save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS $chorus_boost_def"
    AC_LINK_IFELSE([AC_LANG_SOURCE([[
#define BOOST_TEST_MODULE conftest
#include <boost/test/unit_test.hpp>
BOOST_AUTO_TEST_CASE(conftest_case) { BOOST_CHECK(1 + 1 == 2); }
]])], [chorus_have_boost_test=yes])
    CPPFLAGS=$chorus_save_CPPFLAGS
    AC_MSG_RESULT([$chorus_have_boost_test])
    AS_IF([test "$chorus_have_boost_test" = yes],
          [BOOST_UNIT_TEST_CPPFLAGS=$chorus_boost_def; break])
  done
  LIBS=$chorus_save_LIBS
])
AC_LANG_POP([C++])
AS_IF([test "$chorus_have_boost_test" = yes],
  [chorus_boost_why="yes ($BOOST_UNIT_TEST_LIBS${BOOST_UNIT_TEST_CPPFLAGS:+ $BOOST_UNIT_TEST_CPPFLAGS})"],
  [chorus_have_boost_test=no; BOOST_UNIT_TEST_LIBS=; BOOST_UNIT_TEST_CPPFLAGS=])
AC_SUBST([BOOST_UNIT_TEST_CPPFLAGS])
AC_SUBST([BOOST_UNIT_TEST_LIBS])
AM_CONDITIONAL([HAVE_BOOST_TEST], [test "$chorus_have_boost_test" = yes])
])
