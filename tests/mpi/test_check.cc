// CHORUS_CHECK=1 and CHORUS_STATS=1 (set by check-np3.test through
// run-check.sh): a count mismatch (allreduce), a root mismatch (bcast) and
// an empty call against real ones (alltoall) must fail on every rank,
// before any data moves, with an error naming this rank's call and another
// rank's; the communicator works again afterwards.
// At MPIX_Comm_gpu_free the statistics lines go to stderr, where
// run-check.sh counts them.  One PASS or FAIL line per rank.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "chorus.h"
#include "rank_test.h"

int main(int argc, char **argv) {
  int rank = 0, size = 1;
  initRanks(&argc, &argv, &rank, &size);
  MPI_Comm c = dupReturningErrors();
  std::string failure;
  auto expectSum = [&](const char *what) {
    std::vector<int> in(20, rank + 1), out(20, 0);
    const int rc = MPIX_Allreduce_gpu(in.data(), out.data(), 20, MPI_INT, MPI_SUM, c);
    if (failure.empty() && (rc != MPI_SUCCESS || out[19] != size * (size + 1) / 2))
      failure = std::string(what) + ": allreduce failed or was wrong: " + (rc ? errorText(rc) : "");
  };
  expectSum("before the mismatches");

  // Count mismatch: rank 0 reduces 10 ints, the others 20.
  {
    std::vector<int> in(20, 1), out(20, -7);
    const int count = rank == 0 ? 10 : 20;
    const int rc = MPIX_Allreduce_gpu(in.data(), out.data(), count, MPI_INT, MPI_SUM, c);
    const std::string text = rc == MPI_SUCCESS ? "" : errorText(rc);
    printf("rank %d: count mismatch: %s\n", rank, text.c_str());
    const std::string other = rank == 0 ? "rank 1 called allreduce #2 (count 20 " : "rank 0 called allreduce #2 (count 10 ";
    const std::string own = "rank " + std::to_string(rank) + " called allreduce #2 (count " + (rank == 0 ? "10 " : "20 ");
    if (failure.empty() && rc == MPI_SUCCESS) failure = "the count mismatch was not detected";
    else if (failure.empty() && (!contains(text, own) || !contains(text, other)))
      failure = "the count mismatch error does not name both calls: " + text;
    else if (failure.empty() && out[0] != -7)
      failure = "data moved although the calls differed";
  }
  // Root mismatch: rank 1 believes it is the root, the others say rank 0.
  {
    double value = rank;
    const int root = rank == 1 ? 1 : 0;
    const int rc = MPIX_Bcast_gpu(&value, 1, MPI_DOUBLE, root, c);
    const std::string text = rc == MPI_SUCCESS ? "" : errorText(rc);
    printf("rank %d: root mismatch: %s\n", rank, text.c_str());
    const std::string own = "rank " + std::to_string(rank) + " called bcast #3 (count 1 of float64, 8 B each, root " +
                            std::to_string(root) + ")";
    const std::string other = rank == 1 ? "root 0)" : "rank 1 called bcast #3 (count 1 of float64, 8 B each, root 1)";
    if (failure.empty() && rc == MPI_SUCCESS) failure = "the root mismatch was not detected";
    else if (failure.empty() && (!contains(text, own) || !contains(text, other)))
      failure = "the root mismatch error does not name both calls: " + text;
  }
  // An empty call against real ones: rank 0 passes 0 ints per peer, the
  // others 2.  Rank 0 must not return at once, which would leave the others
  // waiting in the check until CHORUS_TIMEOUT and then failing with a
  // timeout: every rank fails with the mismatch, naming both calls.
  {
    std::vector<int> in(size_t(2 * size), 1), out(size_t(2 * size), -7);
    const int per = rank == 0 ? 0 : 2;
    const int rc = MPIX_Alltoall_gpu(in.data(), per, MPI_INT, out.data(), per, MPI_INT, c);
    const std::string text = rc == MPI_SUCCESS ? "" : errorText(rc);
    printf("rank %d: empty against real: %s\n", rank, text.c_str());
    const std::string own = "rank " + std::to_string(rank) + " called alltoall #4 (count " + (rank == 0 ? "0 " : "2 ");
    const std::string other = rank == 0 ? "called alltoall #4 (count 2 " : "rank 0 called alltoall #4 (count 0 ";
    if (failure.empty() && rc == MPI_SUCCESS) failure = "the empty call against real ones was not detected";
    else if (failure.empty() && (!contains(text, own) || !contains(text, other)))
      failure = "the empty-call mismatch error does not name both calls: " + text;
  }
  expectSum("after the mismatches");
  const int status =
      reportRank(rank, failure, "the three mismatches named on this rank, the communicator works after them");
  MPIX_Comm_gpu_free(c);  // prints the statistics: 3 allreduces (1 failed), 1 bcast (failed)
  MPI_Comm_free(&c);
  MPI_Finalize();
  return status;
}
