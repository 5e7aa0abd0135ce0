// broadcast_perf: the root's buffer ends on every rank (in place).
// busbw = algbw: a pipelined chain moves the buffer once through each link.
#include <chorus.h>

#include <cmath>

#include "driver.h"

namespace {
using namespace perf;

CollCounts counts(size_t bytes, size_t typeSize, int) {
  const size_t n = bytes / typeSize;
  return {n, 0, n, n};  // no send buffer: bcast works in place
}
double busBwFactor(int) { return 1.0; }
// Only the root has data; the others keep the driver's poison.
double input(const DataCtx &c, size_t i) { return c.rank == c.root ? c.gen->value(c.root, i) : NAN; }
double expected(const DataCtx &c, size_t i) { return c.gen->value(c.root, i); }

int runChorus(const CollArgs &a) { return MPIX_Bcast_gpu(a.recvbuf, MPI_Count(a.count), a.type, a.root, a.comm); }
int runMpi(const CollArgs &a) { return MPI_Bcast(a.recvbuf, int(a.count), a.type, a.root, a.comm); }

const Collective kBroadcast = {"broadcast", false, true, counts, busBwFactor, input, expected, nullptr,
                               runChorus, runMpi, nullptr};  // always in place
}  // namespace

int main(int argc, char **argv) { return perf::perfMain(argc, argv, kBroadcast); }
