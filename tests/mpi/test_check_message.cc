// CHORUS_CHECK=1 (set by check-message-np2.test): a count mismatch deep
// into a run, where the calls' descriptions are long (call #2001, counts
// of seven digits), must still name the field that differs and both
// values within what MPI_Error_string returns (MPI_MAX_ERROR_STRING-1
// characters).  One PASS or FAIL line per rank.
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
  // 2000 matching calls first, as a solver makes before it goes wrong.
  double one = 1, sum = 0;
  for (int i = 0; i < 2000 && failure.empty(); ++i) {
    const int rc = MPIX_Allreduce_gpu(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, c);
    if (rc != MPI_SUCCESS || sum != size) failure = "call " + std::to_string(i + 1) + " failed or was wrong";
  }
  // Call #2001: rank 0 passes 1048576 doubles per block, the others 1048577.
  const int mine = rank == 0 ? 1048576 : 1048577;
  std::vector<double> in(size_t(1048577) * size, 1.0), out(1048577, -7);
  const int rc = MPIX_Reduce_scatter_block_gpu(in.data(), out.data(), mine, MPI_DOUBLE, MPI_SUM, c);
  const std::string text = rc == MPI_SUCCESS ? "" : errorText(rc);
  printf("rank %d: %zu characters: %s\n", rank, text.size(), text.c_str());
  if (failure.empty() && rc == MPI_SUCCESS) failure = "the count mismatch was not detected";
  for (const char *part : {"count", "1048576", "1048577"})
    if (failure.empty() && !contains(text, part))
      failure = std::string("MPI_Error_string's text lacks '") + part + "': " + text;
  const int status = reportRank(rank, failure, "the differing field and both values within MPI_MAX_ERROR_STRING");
  MPI_Comm_free(&c);
  MPI_Finalize();
  return status;
}
