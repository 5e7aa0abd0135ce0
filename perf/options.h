// Command-line flags of the perf tools (nccl-tests style).
#pragma once

#include <cstddef>
#include <string>

#include "datatypes.h"
#include "memory.h"

namespace perf {

// Without -n, the most timed calls per size (options.cc's usage, driver.cc).
constexpr int kMaxAutoIters = 2000;

struct Options {
  size_t minBytes = 8;
  size_t maxBytes = 32 << 20;
  size_t stepFactor = 2;  // geometric steps, unless stepBytes > 0
  size_t stepBytes = 0;   // arithmetic steps (-i)
  int iters = 20;         // timed calls per size: at least this many (see itersGiven)
  bool itersGiven = false;  // -n: exactly `iters`; otherwise more for short calls
  int warmup = 20;
  bool check = true;
  bool inPlace = true;  // -I: also time the MPI_IN_PLACE form, where there is one
  Type type = Type::Float32;
  Op op = Op::Sum;
  int root = 0;
  MemKind mem = MemKind::Host;
  bool mpi = false;
  // --sync: a barrier before every timed call, and only the call timed (the
  // OSU benchmarks' way); otherwise calls run back to back (nccl-tests').
  bool sync = false;
  // --own-barrier: with --sync, each library's calls follow its own barrier
  // (MPIX_Barrier_gpu before Chorus's), not MPI_Barrier before both.
  bool ownBarrier = false;
  // --null: MPI's collective in Chorus's place too (an A/A run): the ratio
  // then shows the tool's own bias and spread for identical calls.
  bool nullRun = false;
  std::string jsonPath;  // empty: no JSON
  bool help = false;
};

// Parse argv.  False on a bad flag or value, with the reason in *error.
// `nranks` bounds -r.
bool parseOptions(int argc, char **argv, int nranks, Options *opt, std::string *error);

// The usage text for `tool` (argv[0]'s base name).
std::string usage(const char *tool);

// Advance *size to the next size of the sweep; false when past -e.
bool nextSize(const Options &opt, size_t *size);

}  // namespace perf
