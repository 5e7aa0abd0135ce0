// What a hostile local user would try on the shared-memory segments
// (issue 14, item 5): read or write them (mode 0600 whatever the umask),
// pre-create a name so that Chorus maps memory the attacker controls
// (creation is exclusive: refused), or guess the next name (64 random bits).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

// Issue 33, item 4: a peer's segment is mapped at the size this rank
// computes for it; one of another size (settings that differ between ranks,
// or a process that truncated it) would SIGBUS at first touch.
BOOST_AUTO_TEST_CASE(a_segment_of_another_size_is_refused) {
  char name[64];
  shmSegmentName(name, sizeof name);
  char *mine = nullptr;
  BOOST_REQUIRE(shmMapSegment(name, 65536, true, &mine) == Status::Ok);
  char *peer = nullptr;
  BOOST_CHECK(shmMapSegment(name, 65536, false, &peer) == Status::Ok);  // the size it has: mapped
  if (peer) munmap(peer, 65536);
  peer = nullptr;
  BOOST_CHECK(shmMapSegment(name, 2 * 65536, false, &peer) == Status::SystemError);  // larger than it is
  BOOST_CHECK(peer == nullptr);
  const int fd = shm_open(name, O_RDWR, 0);
  BOOST_REQUIRE(fd >= 0);
  BOOST_REQUIRE(ftruncate(fd, 4096) == 0);  // truncated behind the owner's back
  close(fd);
  BOOST_CHECK(shmMapSegment(name, 65536, false, &peer) == Status::SystemError);
  BOOST_CHECK(peer == nullptr);
  shm_unlink(name);
  munmap(mine, 65536);
}

namespace {

bool segmentExists(const std::string &name) {
  struct stat st {};
  return stat(("/dev/shm" + name).c_str(), &st) == 0;
}

}  // namespace

// Issue 33, item 6: a process killed between creating its segment and
// unlinking it (during the communicator's set-up) leaves it behind; the
// next set-up on the machine removes it, and only it.
BOOST_AUTO_TEST_CASE(segments_of_dead_processes_are_reaped) {
  int fds[2];
  BOOST_REQUIRE(pipe(fds) == 0);
  const pid_t child = fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {  // dies holding a segment, as if killed
    char name[64] = "";
    char *base = nullptr;
    shmSegmentName(name, sizeof name);
    const bool ok = shmMapSegment(name, 8192, true, &base) == Status::Ok;
    ssize_t w = write(fds[1], ok ? name : "", sizeof name);
    (void)w;
    _exit(0);
  }
  close(fds[1]);
  char dead[64] = "";
  BOOST_REQUIRE(read(fds[0], dead, sizeof dead) == ssize_t(sizeof dead));
  close(fds[0]);
  waitpid(child, nullptr, 0);
  BOOST_REQUIRE(dead[0] == '/');
  BOOST_REQUIRE(segmentExists(dead));
  // A live process's segment (this one's) stays.
  char live[64];
  char *base = nullptr;
  shmSegmentName(live, sizeof live);
  BOOST_REQUIRE(shmMapSegment(live, 4096, true, &base) == Status::Ok);
  BOOST_CHECK_GE(shmReapDead(), 1);
  BOOST_CHECK(!segmentExists(dead));
  BOOST_CHECK(segmentExists(live));
  shm_unlink(live);
  munmap(base, 4096);
  if (segmentExists(dead)) shm_unlink(dead);
}

BOOST_AUTO_TEST_SUITE_END()
