// No hangs: with CHORUS_TIMEOUT=2 (set by timeout-np3.test), rank 0 skips one
// allreduce the other ranks call.  They must get an error naming a peer rank
// within a few seconds; then everyone frees that communicator and fresh ones
// (and the world) work.
#define BOOST_TEST_MODULE chorus_mpi_timeout
#include <boost/test/unit_test.hpp>

#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness.h"

using namespace chorus_test;

namespace {

// "rank 2", "peer 1", "rank=0"...: the word followed by a number.
bool namesPeer(const std::string &msg) {
  for (const char *word : {"rank", "peer"}) {
    for (size_t at = msg.find(word); at != std::string::npos; at = msg.find(word, at + 1)) {
      size_t i = at + std::string(word).size();
      while (i < msg.size() && (msg[i] == ' ' || msg[i] == '=' || msg[i] == ':' || msg[i] == '#')) ++i;
      if (i < msg.size() && std::isdigit(static_cast<unsigned char>(msg[i]))) return true;
    }
  }
  return false;
}

void expectWorks(MPI_Comm comm, const std::string &name) {
  Checker ck(comm, name);
  BOOST_CHECK(ck.run({Coll::Allreduce, &typeByName("MPI_INT"), &opByName("MPI_SUM"), 100000, false, 0}));
  BOOST_CHECK(ck.run({Coll::Allgather, &typeByName("MPI_FLOAT"), nullptr, 13, false, 0}));
  BOOST_CHECK(ck.run({Coll::Bcast, &typeByName("MPI_DOUBLE"), nullptr, 1021, false, ck.size() - 1}));
}

}  // namespace

BOOST_AUTO_TEST_CASE(peer_skips_allreduce) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    BOOST_TEST_MESSAGE("needs 2 ranks or more: not checked");
    return;
  }
  const char *t = std::getenv("CHORUS_TIMEOUT");
  const double timeout = t ? std::atof(t) : 300;
  BOOST_REQUIRE_MESSAGE(timeout > 0 && timeout <= 10, "run with CHORUS_TIMEOUT=2 (is " << (t ? t : "unset") << ")");

  MPI_Comm c;
  BOOST_REQUIRE_EQUAL(MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_SUCCESS);
  const int irc = MPIX_Comm_gpu_init(c, MPI_INFO_NULL);
  BOOST_REQUIRE_MESSAGE(irc == MPI_SUCCESS, "MPIX_Comm_gpu_init: " << errorString(irc));
  expectWorks(c, "dup");  // it works before the skipped call

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 0) {
    std::vector<int> in(300000, 1), out(300000, -1);
    const double t0 = MPI_Wtime();
    const int rc = MPIX_Allreduce_gpu(in.data(), out.data(), static_cast<MPI_Count>(in.size()), MPI_INT, MPI_SUM, c);
    const double waited = MPI_Wtime() - t0;
    BOOST_CHECK_MESSAGE(rc != MPI_SUCCESS, "rank " << rank << ": allreduce without rank 0 succeeded");
    const std::string msg = rc == MPI_SUCCESS ? "" : errorString(rc);
    BOOST_TEST_MESSAGE("rank " << rank << " after " << waited << " s: \"" << msg << "\"");
    BOOST_CHECK_MESSAGE(namesPeer(msg), "rank " << rank << ": error \"" << msg << "\" names no peer rank");
    BOOST_CHECK_MESSAGE(waited < timeout + 15, "rank " << rank << ": error came after " << waited << " s");
  }
  MPI_Barrier(MPI_COMM_WORLD);  // rank 0 waits here meanwhile

  BOOST_CHECK_EQUAL(MPI_Comm_free(&c), MPI_SUCCESS);
  MPI_Comm d;
  BOOST_REQUIRE_EQUAL(MPI_Comm_dup(MPI_COMM_WORLD, &d), MPI_SUCCESS);
  expectWorks(d, "fresh dup");
  expectWorks(MPI_COMM_WORLD, "world");
  MPI_Comm_free(&d);
}
