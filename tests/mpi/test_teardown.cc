// Ranks finish a communicator at different times, and nothing sent is lost.
// A broadcast root runs up to a FIFO ahead of its receivers, so when its
// loop ends it reaches MPI_Comm_free, or MPI_Finalize, while the receivers
// still have messages to read.  Across nodes, the root closing its
// connections then must not drop them (run-teardown.sh also fails on any
// CHORUS WARN line, which is how a lost message shows when the data did
// arrive in time).
//
// Also, on the way: small broadcasts followed by a large one (mixedSizes),
// the flow control's hard case across nodes.
//
// Three communicators, each with back-to-back broadcasts of values that
// change every call: one freed right after its loop, two left alive into
// MPI_Finalize (which releases them in address order, so in an order that
// may differ from rank to rank), with roots at opposite ends of world.  What each receiver got is compared with the
// root's values sent afterwards by MPI_Bcast.  One PASS or FAIL line per
// rank, printed after MPI_Finalize.
//
// CHORUS_TEST_LATE_RELEASE=S runs only lateRelease (release-late-*.test).
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "chorus.h"
#include "rank_test.h"

namespace {

// `calls` back-to-back 8-byte broadcasts from `root` on `comm`; what each
// call delivered (or sent, at the root) is kept and checked against MPI's
// broadcast of the root's record.  Empty on success, else why not.
std::string broadcastBurst(MPI_Comm comm, int root, int calls, int seed) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<long long> got(size_t(calls), -1);
  for (int i = 0; i < calls; ++i) {
    long long value = rank == root ? 1000003LL * seed + 7LL * i : -1;
    const int rc = MPIX_Bcast_gpu(&value, 1, MPI_LONG_LONG, root, comm);
    if (rc != MPI_SUCCESS) return "broadcast " + std::to_string(i) + " failed: " + errorText(rc);
    got[size_t(i)] = value;
  }
  std::vector<long long> sent(got);
  MPI_Bcast(sent.data(), calls, MPI_LONG_LONG, root, comm);
  for (int i = 0; i < calls; ++i)
    if (got[size_t(i)] != sent[size_t(i)])
      return "broadcast " + std::to_string(i) + " delivered " + std::to_string(got[size_t(i)]) + ", the root sent " +
             std::to_string(sent[size_t(i)]);
  return "";
}

// Runs of small broadcasts (inline messages, whose credits go lazily) each
// followed by a large one (full slots, fewer than the credits may lag by):
// across nodes the root then waits for a credit the receiver holds back,
// and gets it by asking.  Every large broadcast is checked against MPI's.
std::string mixedSizes(MPI_Comm comm, int root, int rounds) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const int smallRun = 20, largeCount = 1 << 16;  // 256 KiB of int
  std::vector<int> large(static_cast<size_t>(largeCount)), reference(large);
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < smallRun; ++i) {
      int value = rank == root ? round * smallRun + i : -1;
      const int rc = MPIX_Bcast_gpu(&value, 1, MPI_INT, root, comm);
      if (rc != MPI_SUCCESS) return "small broadcast failed: " + errorText(rc);
      if (value != round * smallRun + i) return "small broadcast delivered " + std::to_string(value);
    }
    for (int k = 0; k < largeCount; ++k) large[size_t(k)] = rank == root ? round * 7 + k : -1;
    reference = large;
    const int rc = MPIX_Bcast_gpu(large.data(), largeCount, MPI_INT, root, comm);
    if (rc != MPI_SUCCESS) return "large broadcast failed: " + errorText(rc);
    MPI_Bcast(reference.data(), largeCount, MPI_INT, root, comm);
    if (large != reference) return "large broadcast " + std::to_string(round) + " differs from MPI_Bcast's";
  }
  return "";
}

// One rank comes to a communicator's release `lateSeconds` after the
// others, past the release's wait (the lesser of 10 s and CHORUS_TIMEOUT):
// the others stop waiting for it and go on to MPI on another communicator.
// The release's barrier, still open, must not be on the user's
// communicator, which is gone by then: Open MPI 4.1 went on progressing it
// there once the late rank came (SIGSEGV in its pml's isend).  Each rank
// then checks an MPI_Allreduce on world and a Chorus one on a new
// communicator against the same sum computed here.
std::string lateRelease(int rank, int size, int lateSeconds) {
  MPI_Comm late;
  MPI_Comm_dup(MPI_COMM_WORLD, &late);
  MPI_Comm_set_errhandler(late, MPI_ERRORS_RETURN);
  long long value = rank + 1;
  int rc = MPIX_Allreduce_gpu(MPI_IN_PLACE, &value, 1, MPI_LONG_LONG, MPI_SUM, late);
  if (rc != MPI_SUCCESS) return "the allreduce before the late release failed: " + errorText(rc);
  const long long expected = (long long)size * (size + 1) / 2;
  if (value != expected) return "the allreduce before the late release gave " + std::to_string(value);
  if (rank == size - 1) std::this_thread::sleep_for(std::chrono::seconds(lateSeconds));
  MPI_Comm_free(&late);
  long long viaMpi = rank + 1, viaChorus = rank + 1;
  MPI_Allreduce(MPI_IN_PLACE, &viaMpi, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm after;
  MPI_Comm_dup(MPI_COMM_WORLD, &after);
  MPI_Comm_set_errhandler(after, MPI_ERRORS_RETURN);
  rc = MPIX_Allreduce_gpu(MPI_IN_PLACE, &viaChorus, 1, MPI_LONG_LONG, MPI_SUM, after);
  MPI_Comm_free(&after);
  if (rc != MPI_SUCCESS) return "the allreduce after the late release failed: " + errorText(rc);
  if (viaMpi != expected || viaChorus != expected)
    return "after the late release MPI_Allreduce gave " + std::to_string(viaMpi) + " and Chorus " +
           std::to_string(viaChorus) + ", not " + std::to_string(expected);
  return "";
}

}  // namespace

int main(int argc, char **argv) {
  int rank = 0, size = 1;
  initRanks(&argc, &argv, &rank, &size);
  const char *c = std::getenv("CHORUS_TEST_CALLS");
  const int calls = c ? std::atoi(c) : 5000;
  std::string failure;
  if (const char *late = std::getenv("CHORUS_TEST_LATE_RELEASE")) {
    failure = lateRelease(rank, size, std::atoi(late));
    MPI_Finalize();
    if (failure.empty()) printf("PASS rank %d: a release %s s late on rank %d\n", rank, late, size - 1);
    else printf("FAIL rank %d: %s\n", rank, failure.c_str());
    return failure.empty() ? 0 : 1;
  }

  MPI_Comm freed, first, second;
  MPI_Comm_dup(MPI_COMM_WORLD, &freed);
  MPI_Comm_set_errhandler(freed, MPI_ERRORS_RETURN);
  failure = broadcastBurst(freed, 0, calls, 1);
  // The comparison's MPI_Bcast leaves the ranks in step: a second burst
  // lets the root run ahead into MPI_Comm_free.
  std::vector<long long> last(1, rank);
  for (int i = 0; failure.empty() && i < calls; ++i) {
    const int rc = MPIX_Bcast_gpu(last.data(), 1, MPI_LONG_LONG, 0, freed);
    if (rc != MPI_SUCCESS) failure = "the burst before MPI_Comm_free failed: " + errorText(rc);
  }
  if (failure.empty() && last[0] != 0) failure = "the burst before MPI_Comm_free delivered " + std::to_string(last[0]);
  MPI_Comm_free(&freed);

  // Two communicators alive at MPI_Finalize: the second is world reversed.
  MPI_Comm_dup(MPI_COMM_WORLD, &first);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &second);
  MPI_Comm_set_errhandler(first, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(second, MPI_ERRORS_RETURN);
  if (failure.empty()) failure = mixedSizes(first, 0, 20);
  if (failure.empty()) failure = broadcastBurst(first, 0, calls, 2);
  if (failure.empty()) failure = broadcastBurst(second, 0, calls, 3);  // world's last rank is its root
  long long a = rank, b = rank;
  for (int i = 0; failure.empty() && i < calls; ++i) {
    const int rc1 = MPIX_Bcast_gpu(&a, 1, MPI_LONG_LONG, 0, first);
    const int rc2 = rc1 == MPI_SUCCESS ? MPIX_Bcast_gpu(&b, 1, MPI_LONG_LONG, 0, second) : rc1;
    if (rc2 != MPI_SUCCESS) failure = "the burst before MPI_Finalize failed: " + errorText(rc2);
  }
  if (failure.empty() && (a != 0 || b != size - 1))
    failure = "the burst before MPI_Finalize delivered " + std::to_string(a) + " and " + std::to_string(b);
  MPI_Finalize();
  if (failure.empty()) printf("PASS rank %d: %d x 5 back-to-back broadcasts on 3 communicators, 20 runs of small then large\n", rank, calls);
  else printf("FAIL rank %d: %s\n", rank, failure.c_str());
  return failure.empty() ? 0 : 1;
}
