// reduce_scatter_perf: block r of the reduction of all send buffers ends on
// rank r (MPI_Reduce_scatter_block).  Size is the send buffer, n blocks.
// busbw = algbw * (n-1)/n: each rank sends the n-1 blocks it does not keep.
#include <chorus.h>

#include "driver.h"

namespace {
using namespace perf;

CollCounts counts(size_t bytes, size_t typeSize, int nranks) {
  const size_t c = bytes / (typeSize * size_t(nranks));
  return {c, c * nranks, c, c * nranks};
}
double busBwFactor(int n) { return double(n - 1) / n; }
double input(const DataCtx &c, size_t i) { return c.gen->value(c.rank, i); }
double expected(const DataCtx &c, size_t j) { return c.gen->reduced(c.rank * c.counts.count + j); }

int runChorus(const CollArgs &a) {
  return MPIX_Reduce_scatter_block_gpu(a.sendbuf, a.recvbuf, MPI_Count(a.count), a.type, a.op, a.comm);
}
int runMpi(const CollArgs &a) {
  return MPI_Reduce_scatter_block(a.sendbuf, a.recvbuf, int(a.count), a.type, a.op, a.comm);
}

// recvbuf holds all n blocks here; block `rank` is reduced in place.
int runInPlace(const CollArgs &a) {
  return MPIX_Reduce_scatter_block_gpu(MPI_IN_PLACE, a.recvbuf, MPI_Count(a.count), a.type, a.op, a.comm);
}

const Collective kReduceScatter = {"reduce_scatter", true, false, counts, busBwFactor, input, expected, nullptr,
                                   runChorus, runMpi, runInPlace};
}  // namespace

int main(int argc, char **argv) { return perf::perfMain(argc, argv, kReduceScatter); }
