// allreduce_perf: every rank ends with the reduction of all send buffers.
// busbw = algbw * 2(n-1)/n: a ring moves 2(n-1)/n of the buffer per rank.
#include <chorus.h>

#include "driver.h"

namespace {
using namespace perf;

CollCounts counts(size_t bytes, size_t typeSize, int) {
  const size_t n = bytes / typeSize;
  return {n, n, n, n};
}
double busBwFactor(int n) { return 2.0 * (n - 1) / n; }
double input(const DataCtx &c, size_t i) { return c.gen->value(c.rank, i); }
double expected(const DataCtx &c, size_t i) { return c.gen->reduced(i); }

int runChorus(const CollArgs &a) {
  return MPIX_Allreduce_gpu(a.sendbuf, a.recvbuf, MPI_Count(a.count), a.type, a.op, a.comm);
}
int runMpi(const CollArgs &a) { return MPI_Allreduce(a.sendbuf, a.recvbuf, int(a.count), a.type, a.op, a.comm); }
int runInPlace(const CollArgs &a) {
  return MPIX_Allreduce_gpu(MPI_IN_PLACE, a.recvbuf, MPI_Count(a.count), a.type, a.op, a.comm);
}

const Collective kAllreduce = {"allreduce", true, false, counts, busBwFactor, input, expected, nullptr,
                               runChorus, runMpi, runInPlace};
}  // namespace

int main(int argc, char **argv) { return perf::perfMain(argc, argv, kAllreduce); }
