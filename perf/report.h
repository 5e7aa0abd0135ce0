// What the perf tools print (rank 0 only): header, one table row per size,
// footer, and the JSON report.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "options.h"

namespace perf {

// One library's calls at one size, each time the slowest rank's.
struct Timing {
  int iters = 0;                // timed calls
  long long warmupCalls = 0;    // untimed calls before them
  double meanUs = 0;            // per call, over all timed calls
  double minUs = 0, maxUs = 0;  // per call in the fastest and the slowest batch
};

// The results of one size, already reduced over ranks.
struct SizeResult {
  size_t bytes;          // reported size
  size_t count;          // elements behind it
  int iters;             // timed calls per library (-n, or the automatic count)
  Timing chorus;
  double timeUs;         // chorus.meanUs
  double algBw, busBw;   // GB/s (1e9 bytes/s)
  long long wrong;       // wrong elements over all ranks; -1: not checked
  bool inPlaceRan;       // the collective has an MPI_IN_PLACE form
  Timing inPlace;
  double inPlaceAlgBw, inPlaceBusBw;
  bool mpiRan;
  Timing mpi;
  double mpiTimeUs, mpiAlgBw, mpiBusBw;
  const char *mpiNote;   // why MPI was skipped at this size, or nullptr
};

// The run as a whole.
struct RunInfo {
  std::string tool;         // allreduce_perf
  std::string collective;   // allreduce
  std::vector<std::string> argv;
  bool usesOp, usesRoot;
  bool hasInPlace;          // the collective has an MPI_IN_PLACE form
  Options opt;
  int nranks;
  std::vector<std::string> rankHosts;   // per rank
  std::vector<std::string> rankWhere;   // per rank: "host" or the GPU
  std::vector<long> rankPids;
  std::string chorusVersion;
  std::string mpiVersion;               // first line of MPI_Get_library_version
  std::string mpiNote;                  // why --mpi is skipped altogether
  // Memory after the sweep, largest over ranks (bytes): peak resident set,
  // resident shared memory, and the tool's own buffers and host staging
  // (so that what Chorus and MPI add is the difference).
  long long peakRss = 0, shmRss = 0, toolBytes = 0;
};

std::string commandLine(const std::vector<std::string> &argv);
void printHeader(FILE *out, const RunInfo &run);
void printRow(FILE *out, const RunInfo &run, const SizeResult &r);
void printFooter(FILE *out, const RunInfo &run, const std::vector<SizeResult> &results);
// False if writing failed.
bool writeJson(FILE *out, const RunInfo &run, const std::vector<SizeResult> &results);

}  // namespace perf
