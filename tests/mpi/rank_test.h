// What the small multi-rank test programs share (test_check, test_checksum,
// test_kill, test_nonblocking, ...): they print one PASS or FAIL line per
// rank, which their run-*.sh script counts, instead of using Boost.Test,
// because a test that breaks a communicator on purpose cannot trust
// collective assertions afterwards.  Header-only: these programs do not
// link the Boost-based harness (harness.h).
#pragma once

#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "chorus.h"

// An error's text as MPI_Error_string gives it (Chorus registers its own).
inline std::string errorText(int rc) {
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  return std::string(msg, size_t(len));
}

// The text of an error's class ("arrived corrupted", "mismatch"...).
inline std::string errorClassText(int rc) {
  int cls = 0;
  MPI_Error_class(rc, &cls);
  return errorText(cls);
}

inline bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// MPI_Init, then this rank and the world's size.
inline void initRanks(int *argc, char ***argv, int *rank, int *size) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

// A duplicate of the world whose errors come back as return codes (the
// tests assert on them; the default handler would abort the job).
inline MPI_Comm dupReturningErrors() {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  return c;
}

// This rank's one line, "PASS rank R: what" or "FAIL rank R: failure"
// (":" and `what` left out when `what` is empty), flushed before the job
// can end; returns the exit status.
inline int reportRank(int rank, const std::string &failure, const std::string &what) {
  const std::string &text = failure.empty() ? what : failure;
  printf("%s rank %d%s%s\n", failure.empty() ? "PASS" : "FAIL", rank, text.empty() ? "" : ": ", text.c_str());
  fflush(stdout);
  return failure.empty() ? 0 : 1;
}

// Every collective on `n` ints per rank, checked against MPI's own on the
// same inputs; the first difference goes to *failure (if still empty).
inline void checkCollectivesAgainstMpi(MPI_Comm c, int n, int rank, int size, std::string *failure) {
  const auto fail = [failure](const std::string &why) {
    if (failure->empty()) *failure = why;
  };
  const std::string at = " (" + std::to_string(n) + " ints)";
  std::vector<int> in(size_t(n) * size), out(in.size(), -1), ref(in.size(), -2);
  for (size_t i = 0; i < in.size(); ++i) in[i] = int(i * 7919 + size_t(rank) * 104729) ^ 0x5a5a;
  int rc = MPIX_Allreduce_gpu(in.data(), out.data(), n, MPI_INT, MPI_SUM, c);
  MPI_Allreduce(in.data(), ref.data(), n, MPI_INT, MPI_SUM, c);
  if (rc != MPI_SUCCESS || std::vector<int>(out.begin(), out.begin() + n) != std::vector<int>(ref.begin(), ref.begin() + n))
    fail("allreduce differs from MPI" + at + (rc ? ": " + errorText(rc) : ""));
  std::vector<int> b(in.begin(), in.begin() + n), bref = b;
  rc = MPIX_Bcast_gpu(b.data(), n, MPI_INT, size - 1, c);
  MPI_Bcast(bref.data(), n, MPI_INT, size - 1, c);
  if (rc != MPI_SUCCESS || b != bref) fail("bcast differs from MPI" + at + (rc ? ": " + errorText(rc) : ""));
  rc = MPIX_Allgather_gpu(in.data(), n, MPI_INT, out.data(), n, MPI_INT, c);
  MPI_Allgather(in.data(), n, MPI_INT, ref.data(), n, MPI_INT, c);
  if (rc != MPI_SUCCESS || out != ref) fail("allgather differs from MPI" + at + (rc ? ": " + errorText(rc) : ""));
  rc = MPIX_Reduce_scatter_block_gpu(in.data(), out.data(), n, MPI_INT, MPI_SUM, c);
  MPI_Reduce_scatter_block(in.data(), ref.data(), n, MPI_INT, MPI_SUM, c);
  if (rc != MPI_SUCCESS || std::vector<int>(out.begin(), out.begin() + n) != std::vector<int>(ref.begin(), ref.begin() + n))
    fail("reduce_scatter_block differs from MPI" + at + (rc ? ": " + errorText(rc) : ""));
  rc = MPIX_Alltoall_gpu(in.data(), n, MPI_INT, out.data(), n, MPI_INT, c);
  MPI_Alltoall(in.data(), n, MPI_INT, ref.data(), n, MPI_INT, c);
  if (rc != MPI_SUCCESS || out != ref) fail("alltoall differs from MPI" + at + (rc ? ": " + errorText(rc) : ""));
}
