// barrier_perf: MPIX_Barrier_gpu against MPI_Barrier.  A barrier moves no
// data, so every size of the sweep is the same call: one row, size 0.
#include <chorus.h>

#include <cmath>

#include "driver.h"

namespace {
using namespace perf;

// One receive element so the driver's buffers exist; nothing is checked.
CollCounts counts(size_t, size_t, int) { return {0, 0, 1, 0}; }
double busBwFactor(int) { return 0; }
double input(const DataCtx &, size_t) { return NAN; }
double expected(const DataCtx &, size_t) { return NAN; }
bool checksRank(const DataCtx &) { return false; }

int runChorus(const CollArgs &a) { return MPIX_Barrier_gpu(a.comm); }
int runMpi(const CollArgs &a) { return MPI_Barrier(a.comm); }

const Collective kBarrier = {"barrier", false, false, counts, busBwFactor, input, expected, checksRank,
                             runChorus, runMpi, nullptr};
}  // namespace

int main(int argc, char **argv) { return perf::perfMain(argc, argv, kBarrier); }
