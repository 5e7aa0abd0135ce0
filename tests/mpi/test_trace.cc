// The flight recorder after a stall: rank 2 skips the 11th allreduce the
// others call (np >= 3, CHORUS_TIMEOUT=3 and CHORUS_TRACE_FILE=DIR/trace-%r.txt
// set by run-trace.sh).  The others must fail in time with an error naming
// rank 2 as the one that never entered; every failing rank writes its
// trace file by itself, rank 2 writes its own on SIGUSR1.  Each rank then
// reads its file back: collectives #1..#10 done, #11 failed (with the peer
// it waited for) or, on rank 2, absent; rank 2 also asks for its file with
// MPIX_Comm_gpu_trace_dump first.  run-trace.sh then asks
// chorus_trace for its verdict.  One PASS or FAIL line per rank.
#include <mpi.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "chorus.h"
#include "rank_test.h"

namespace {

constexpr int kStalled = 2;
constexpr int kGoodCalls = 10;

// seq -> the entry's line, for the communicator `comm` in `path`.
std::map<int, std::string> readEntries(const std::string &path, int comm) {
  std::map<int, std::string> entries;
  std::ifstream in(path);
  const std::string prefix = "comm=" + std::to_string(comm) + " ";
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find(" seq=");
    if (line.compare(0, prefix.size(), prefix) != 0 || at == std::string::npos) continue;
    entries[std::atoi(line.c_str() + at + 5)] = line;
  }
  return entries;
}

// Why the file was last written: the text after "reason: " on its first line.
std::string reasonOf(const std::string &path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const size_t at = line.find(" reason: ");
  return at == std::string::npos ? "" : line.substr(at + 9);
}

bool has(const std::string &line, const std::string &field) {
  return (" " + line + " ").find(" " + field + " ") != std::string::npos;
}

// The communicator number in the file: the one whose entries are allreduces
// of one int (the test's).
int commOf(const std::string &path) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.find(" seq=1 coll=allreduce count=1 type=int32") != std::string::npos) return std::atoi(line.c_str() + 5);
  return -1;
}

}  // namespace

int main(int argc, char **argv) {
  int rank = 0, size = 1;
  initRanks(&argc, &argv, &rank, &size);
  const char *pattern = std::getenv("CHORUS_TRACE_FILE");
  const char *t = std::getenv("CHORUS_TIMEOUT");
  const double timeout = t ? std::atof(t) : 300;
  std::string failure;
  if (size <= kStalled || !pattern || timeout > 10) {
    if (rank == 0) printf("FAIL rank 0: needs 3 ranks or more, CHORUS_TRACE_FILE and CHORUS_TIMEOUT <= 10\n");
    MPI_Finalize();
    return 1;
  }
  std::string path = pattern;
  path.replace(path.find("%r"), 2, std::to_string(rank));

  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  int one = 1, sum = 0;
  for (int i = 0; i < kGoodCalls; ++i) {
    const int rc = MPIX_Allreduce_gpu(&one, &sum, 1, MPI_INT, MPI_SUM, c);
    if (rc != MPI_SUCCESS || sum != size) failure = "allreduce #" + std::to_string(i + 1) + " failed or was wrong";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == kStalled) {
    const int rc = MPIX_Comm_gpu_trace_dump(c);
    if (rc != MPI_SUCCESS || reasonOf(path) != "MPIX_Comm_gpu_trace_dump")
      failure = "MPIX_Comm_gpu_trace_dump did not write " + path;
    raise(SIGUSR1);  // what a person would do to a hung rank: kill -USR1 <pid>
    if (failure.empty() && reasonOf(path) != "SIGUSR1") failure = "SIGUSR1 did not write " + path;
  } else {
    const double t0 = MPI_Wtime();
    const int rc = MPIX_Allreduce_gpu(&one, &sum, 1, MPI_INT, MPI_SUM, c);
    const double waited = MPI_Wtime() - t0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
    const std::string text(msg, size_t(len));
    printf("rank %d: allreduce #11 after %.1f s: %s\n", rank, waited, text.c_str());
    if (rc == MPI_SUCCESS) failure = "allreduce #11 succeeded without rank 2";
    else if (text.find("rank 2 never entered it (its last was #10)") == std::string::npos)
      failure = "the error does not say that rank 2 never entered #11";
    else if (waited > timeout + 10)
      failure = "the error came after " + std::to_string(waited) + " s";
  }
  MPI_Barrier(MPI_COMM_WORLD);

  const int comm = commOf(path);
  const std::map<int, std::string> entries = readEntries(path, comm);
  for (int seq = 1; seq <= kGoodCalls && failure.empty(); ++seq) {
    auto it = entries.find(seq);
    if (it == entries.end()) failure = path + " lacks collective #" + std::to_string(seq);
    else if (!has(it->second, "state=done") || !has(it->second, "coll=allreduce") || !has(it->second, "op=sum"))
      failure = "entry #" + std::to_string(seq) + " is not a finished allreduce: " + it->second;
  }
  if (failure.empty()) {
    auto it = entries.find(kGoodCalls + 1);
    if (rank == kStalled && it != entries.end()) failure = "the stalled rank recorded #11: " + it->second;
    if (rank != kStalled && it == entries.end()) failure = path + " lacks collective #11";
    if (rank != kStalled && it != entries.end() &&
        (!has(it->second, "state=failed") || it->second.find(" wait_rank=") == std::string::npos))
      failure = "#11 is not recorded as failed with the peer waited for: " + it->second;
    if (entries.size() != size_t(rank == kStalled ? kGoodCalls : kGoodCalls + 1))
      failure = "unexpected number of entries: " + std::to_string(entries.size());
  }
  printf("%s rank %d: %s\n", failure.empty() ? "PASS" : "FAIL", rank,
         failure.empty() ? "trace file holds #1-#10 done and #11 as expected" : failure.c_str());
  fflush(stdout);
  MPI_Comm_free(&c);
  MPI_Finalize();
  return failure.empty() ? 0 : 1;
}
