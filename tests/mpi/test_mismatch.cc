// Mismatched collectives (issue 33, items 1 and 2), run by run-mismatch.sh:
//
//   test_mismatch count  rank 0 reduces 8 ints, the others 1024: every rank
//                        fails with the "calls do not match" class, none
//                        returns success, all within seconds (the launcher
//                        sets CHORUS_TIMEOUT far above the bound checked).
//   test_mismatch kind   rank 0 broadcasts 8 ints, the others reduce 8:
//                        every rank that receives in the call fails in it
//                        with that class; rank 0, which only sends, fails
//                        so at the latest in its next call (a barrier),
//                        and its call never returns success with its
//                        buffer changed.
//   test_mismatch skip   CHORUS_CHECK=1: the last rank skips an allreduce,
//                        the others fail within CHORUS_TIMEOUT and a few
//                        seconds, naming it; then rank 0 skips one on a
//                        fresh communicator and the others name rank 0.
//
// Without CHORUS_CHECK the mismatch is seen in every message's header
// (transport/fifo.h), without any exchange of its own.  One PASS or FAIL
// line per rank; the launcher counts them.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "chorus.h"
#include "rank_test.h"

namespace {

int rank = 0, size = 1;
std::string failure;

void fail(const std::string &why) {
  if (failure.empty()) failure = why;
}

std::string classText(int rc) {
  int cls = 0;
  MPI_Error_class(rc, &cls);
  return errorText(cls);
}

bool isMismatch(int rc) { return rc != MPI_SUCCESS && contains(classText(rc), "calls do not match"); }

// Well under CHORUS_TIMEOUT (run-mismatch.sh sets 60 s): a mismatch ends
// because a header said so, not because a wait gave up.
constexpr double kPromptSeconds = 15;

void countMismatch(MPI_Comm c) {
  const int count = rank == 0 ? 8 : 1024;
  std::vector<int> in(1024, rank + 1), out(1024, -7);
  const double t0 = MPI_Wtime();
  const int rc = MPIX_Allreduce_gpu(in.data(), out.data(), count, MPI_INT, MPI_SUM, c);
  const double took = MPI_Wtime() - t0;
  const std::string text = rc == MPI_SUCCESS ? "success" : errorText(rc);
  printf("rank %d: count %d against %d: %.1f s: %s\n", rank, count, rank == 0 ? 1024 : 8, took, text.c_str());
  if (rc == MPI_SUCCESS) return fail("the mismatched allreduce returned success (count " + std::to_string(count) + ")");
  if (!isMismatch(rc)) fail("wrong error class for the count mismatch: " + classText(rc) + ": " + text);
  if (took > kPromptSeconds) fail("the count mismatch took " + std::to_string(took) + " s to fail");
}

void kindMismatch(MPI_Comm c) {
  std::vector<int> in(8, rank + 1), out(8, -7), buf(8, rank == 0 ? 42 : -1);
  const double t0 = MPI_Wtime();
  const int rc = rank == 0 ? MPIX_Bcast_gpu(buf.data(), 8, MPI_INT, 0, c)
                           : MPIX_Allreduce_gpu(in.data(), out.data(), 8, MPI_INT, MPI_SUM, c);
  const int next = MPIX_Barrier_gpu(c);
  const double took = MPI_Wtime() - t0;
  printf("rank %d: %s against %s: %.1f s: %s; then barrier: %s\n", rank, rank == 0 ? "bcast" : "allreduce",
         rank == 0 ? "allreduce" : "bcast", took, rc == MPI_SUCCESS ? "success" : errorText(rc).c_str(),
         next == MPI_SUCCESS ? "success" : errorText(next).c_str());
  if (took > kPromptSeconds) fail("the bcast/allreduce mismatch took " + std::to_string(took) + " s to fail");
  if (rank == 0) {
    // The root only sends: it may leave before any peer looked, but not
    // with its buffer changed, and its next call must know.
    if (rc == MPI_SUCCESS && buf[0] != 42) fail("the bcast root's buffer changed");
    if (rc != MPI_SUCCESS && !isMismatch(rc)) fail("wrong error class on the bcast root: " + classText(rc));
    if (rc == MPI_SUCCESS && !isMismatch(next))
      fail("the bcast root's next call did not report the mismatch: " +
           (next == MPI_SUCCESS ? std::string("success") : classText(next) + ": " + errorText(next)));
    return;
  }
  if (rc == MPI_SUCCESS) return fail("the allreduce against a bcast returned success");
  // (A failed call may have written part of its receive buffer: a ring
  // stores slices as they come.  Success is what must not happen.)
  if (!isMismatch(rc)) fail("wrong error class for the allreduce against a bcast: " + classText(rc) + ": " + errorText(rc));
}

// CHORUS_CHECK=1: rank `skipper` does not make the call; the others must
// fail naming it, within CHORUS_TIMEOUT (5 s) and the check's grace.
void skippedCall(int skipper) {
  MPI_Comm c = dupReturningErrors();
  std::vector<int> in(16, 1), out(16, 0);
  if (MPIX_Allreduce_gpu(in.data(), out.data(), 16, MPI_INT, MPI_SUM, c) != MPI_SUCCESS || out[0] != size)
    fail("the allreduce before the skipped one failed");
  if (rank != skipper) {
    const double t0 = MPI_Wtime();
    const int rc = MPIX_Allreduce_gpu(in.data(), out.data(), 16, MPI_INT, MPI_SUM, c);
    const double took = MPI_Wtime() - t0;
    const std::string text = rc == MPI_SUCCESS ? "success" : errorText(rc);
    printf("rank %d: rank %d skipped the call: %.1f s: %s\n", rank, skipper, took, text.c_str());
    const std::string named = "rank " + std::to_string(skipper) + " ";
    if (rc == MPI_SUCCESS) fail("the call rank " + std::to_string(skipper) + " skipped returned success");
    else if (!contains(text, named) || !contains(text, "CHORUS_CHECK"))
      fail("the error does not name the rank that skipped the call (" + named + "): " + text);
    if (took > 5 + 2 + 5) fail("the skipped call took " + std::to_string(took) + " s to fail (CHORUS_TIMEOUT=5)");
  }
  MPI_Barrier(MPI_COMM_WORLD);  // the skipper waits here meanwhile
  MPIX_Comm_gpu_free(c);
  MPI_Comm_free(&c);
}

}  // namespace

int main(int argc, char **argv) {
  initRanks(&argc, &argv, &rank, &size);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (size < 2) {
    printf("skipped: needs 2 ranks or more\n");
    MPI_Finalize();
    return 77;
  }
  if (mode == "skip") {
    skippedCall(size - 1);
    skippedCall(0);
  } else {
    MPI_Comm c = dupReturningErrors();
    // A call that matches first: the FIFOs exist and carry earlier messages.
    std::vector<int> in(64, rank + 1), out(64, 0);
    if (MPIX_Allreduce_gpu(in.data(), out.data(), 64, MPI_INT, MPI_SUM, c) != MPI_SUCCESS ||
        out[63] != size * (size + 1) / 2)
      fail("the matching allreduce before the mismatch failed or was wrong");
    if (mode == "count") countMismatch(c);
    else if (mode == "kind") kindMismatch(c);
    else fail("unknown mode '" + mode + "' (count, kind or skip)");
    MPIX_Comm_gpu_free(c);
    MPI_Comm_free(&c);
  }
  const int status = reportRank(rank, failure, "mode " + mode);
  MPI_Finalize();
  return status;
}
