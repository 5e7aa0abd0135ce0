// The one translation unit that defines the unit-test module (and its main).
// Every other tests/unit/*.cc file only includes <boost/test/unit_test.hpp>
// and adds its suites.  BOOST_TEST_DYN_LINK comes from the build
// (BOOST_UNIT_TEST_CPPFLAGS, found by configure); when building by hand
// against the shared Boost.Test library, pass -DBOOST_TEST_DYN_LINK.
#define BOOST_TEST_MODULE chorus_unit
#include <boost/test/unit_test.hpp>
