// What a hostile local user would try on the shared-memory segments
// (issue 14, item 5): read or write them (mode 0600 whatever the umask),
// pre-create a name so that Chorus maps memory the attacker controls
// (creation is exclusive: refused), or guess the next name (64 random bits).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstring>
#include <string>

#include "transport/shm/shm.h"

using namespace chorus;

namespace {

// The random field of a name: what follows its last '-'.
std::string randomField(const char *name) {
  const char *dash = strrchr(name, '-');
  return dash ? std::string(dash + 1) : std::string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shm_segments)

BOOST_AUTO_TEST_CASE(created_0600_whatever_the_umask) {
  char name[64];
  shmSegmentName(name, sizeof name);
  const mode_t old = umask(0);  // a permissive umask must not widen the mode
  char *base = nullptr;
  const Status s = shmMapSegment(name, 4096, true, &base);
  umask(old);
  BOOST_REQUIRE(s == Status::Ok);
  struct stat st {};
  const int fd = shm_open(name, O_RDONLY, 0);
  BOOST_REQUIRE(fd >= 0);
  BOOST_REQUIRE(fstat(fd, &st) == 0);
  close(fd);
  shm_unlink(name);
  munmap(base, 4096);
  BOOST_CHECK_EQUAL(st.st_mode & 07777, mode_t(0600));
  BOOST_CHECK_EQUAL(st.st_uid, geteuid());
  BOOST_CHECK_EQUAL(st.st_size, 4096);
}

BOOST_AUTO_TEST_CASE(a_pre_created_name_is_refused_and_left_alone) {
  char name[64];
  shmSegmentName(name, sizeof name);
  // The attacker's segment: world-writable, with content.
  const int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0666);
  BOOST_REQUIRE(fd >= 0);
  BOOST_REQUIRE(ftruncate(fd, 100) == 0);
  char *base = nullptr;
  const Status s = shmMapSegment(name, 8192, true, &base);
  struct stat st {};
  BOOST_REQUIRE(fstat(fd, &st) == 0);
  close(fd);
  shm_unlink(name);
  BOOST_CHECK(s == Status::SystemError);
  BOOST_CHECK(base == nullptr);
  BOOST_CHECK_EQUAL(st.st_size, 100);  // not resized, so never used
}

BOOST_AUTO_TEST_CASE(names_are_unguessable) {
  char a[64], b[64];
  shmSegmentName(a, sizeof a);
  shmSegmentName(b, sizeof b);
  const std::string ra = randomField(a), rb = randomField(b);
  BOOST_CHECK_EQUAL(ra.size(), 16u);
  BOOST_CHECK_EQUAL(ra.find_first_not_of("0123456789abcdef"), std::string::npos);
  BOOST_CHECK_NE(ra, rb);
  // Not a counter: the two nonces differ in many bits, not one or two.
  const int differing = __builtin_popcountll(std::stoull(ra, nullptr, 16) ^ std::stoull(rb, nullptr, 16));
  BOOST_CHECK_GT(differing, 8);
  BOOST_CHECK_EQUAL(std::string(a).rfind("/chorus-" + std::to_string(getpid()) + "-", 0), 0u);
}

BOOST_AUTO_TEST_SUITE_END()
