// Issue 33, items 4 and 6, run by run-agree.sh.  One PASS or FAIL line per
// rank.
//
//   test_agree settings NAME    (NAME set differently on some rank by the
//                                launcher): the first collective fails on
//                                every rank with an error naming NAME and
//                                both ranks, at once (no SIGBUS, no wrong
//                                result), and MPI still works after it.
//   test_agree empty-check      (CHORUS_CHECK=1, MPI_THREAD_MULTIPLE): an
//                                empty MPIX_Iallreduce_gpu, then a send that
//                                the peer receives before its own call, then
//                                MPI_Wait: legal MPI, which must complete.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "chorus.h"
#include "rank_test.h"

namespace {

std::string settings(int rank, int size, const char *name) {
  MPI_Comm c = dupReturningErrors();
  // Large enough that every algorithm streams it (40,000 longs went wrong
  // with CHORUS_ALGO=direct on one rank).
  std::vector<long> in(40000, rank + 1), out(40000, -7);
  const int rc = MPIX_Allreduce_gpu(in.data(), out.data(), MPI_Count(in.size()), MPI_LONG, MPI_SUM, c);
  const std::string text = rc == MPI_SUCCESS ? "" : errorText(rc);
  printf("rank %d: %s\n", rank, text.c_str());
  std::string failure;
  if (rc == MPI_SUCCESS)
    failure = std::string("the collective succeeded although ") + name + " differs between ranks (result " +
              std::to_string(out[0]) + ", expected " + std::to_string(size * (size + 1) / 2) + ")";
  else if (!contains(text, name) || !contains(text, "on rank 0") || !contains(text, "on rank 1"))
    failure = std::string("the error does not name ") + name + " and ranks 0 and 1: " + text;
  else if (out[0] != -7)
    failure = "data moved although the set-up failed";
  // The job goes on: MPI itself is untouched.
  int one = 1, sum = 0;
  if (MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c) != MPI_SUCCESS || sum != size)
    failure += failure.empty() ? "MPI_Allreduce failed afterwards" : "; MPI_Allreduce failed afterwards";
  MPI_Comm_free(&c);
  return failure;
}

std::string emptyCheck(int rank, int size) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided != MPI_THREAD_MULTIPLE) return "MPI did not provide MPI_THREAD_MULTIPLE";
  MPI_Comm c = dupReturningErrors();
  if (MPIX_Comm_gpu_init(c, MPI_INFO_NULL) != MPI_SUCCESS) return "MPIX_Comm_gpu_init failed";
  std::string failure;
  MPI_Request req = MPI_REQUEST_NULL;
  int token = 42;
  // Rank 0 starts the empty allreduce, then sends; every other rank must
  // receive before it starts its own.
  if (rank == 0) {
    if (MPIX_Iallreduce_gpu(nullptr, nullptr, 0, MPI_INT, MPI_SUM, c, &req) != MPI_SUCCESS) failure = "Iallreduce";
    for (int p = 1; p < size; ++p) MPI_Send(&token, 1, MPI_INT, p, 7, c);
  } else {
    token = 0;
    MPI_Recv(&token, 1, MPI_INT, 0, 7, c, MPI_STATUS_IGNORE);
    if (MPIX_Iallreduce_gpu(nullptr, nullptr, 0, MPI_INT, MPI_SUM, c, &req) != MPI_SUCCESS) failure = "Iallreduce";
  }
  if (failure.empty() && MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS) failure = "MPI_Wait failed";
  if (failure.empty() && token != 42) failure = "the token did not arrive";
  // The comparison still compares: a count that differs fails on every rank
  // (in MPI_Wait, which raises through MPI_COMM_WORLD's handler).
  if (failure.empty()) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    std::vector<int> in(8, 1), out(8, 0);
    const int rc = MPIX_Iallreduce_gpu(in.data(), out.data(), rank == 0 ? 0 : 8, MPI_INT, MPI_SUM, c, &req);
    int wrc = rc;
    if (rc == MPI_SUCCESS) wrc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (wrc == MPI_SUCCESS) failure = "an empty call against full ones passed the comparison";
  }
  MPIX_Comm_gpu_free(c);
  MPI_Comm_free(&c);
  return failure;
}

}  // namespace

int main(int argc, char **argv) {
  const bool empty = argc > 1 && strcmp(argv[1], "empty-check") == 0;
  int rank = 0, size = 1;
  if (empty) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  } else {
    initRanks(&argc, &argv, &rank, &size);
  }
  std::string failure;
  if (empty)
    failure = emptyCheck(rank, size);
  else if (argc > 2 && strcmp(argv[1], "settings") == 0)
    failure = settings(rank, size, argv[2]);
  else
    failure = "usage: test_agree settings NAME | empty-check";
  const int rc = reportRank(rank, failure, empty ? "empty MPIX_Iallreduce_gpu under CHORUS_CHECK completed" : "");
  MPI_Finalize();
  return rc;
}
