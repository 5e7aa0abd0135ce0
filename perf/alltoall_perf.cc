// alltoall_perf: block p of rank r's send buffer ends as block r of rank p's
// receive buffer.  Size is one rank's send buffer, n blocks.
// busbw = algbw * (n-1)/n: every block but one's own crosses a link.
#include <chorus.h>

#include "driver.h"

namespace {
using namespace perf;

CollCounts counts(size_t bytes, size_t typeSize, int nranks) {
  const size_t c = bytes / (typeSize * size_t(nranks));
  return {c, c * nranks, c * nranks, c * nranks};
}
double busBwFactor(int n) { return double(n - 1) / n; }
// Element j of the block from `src` to `dst` has global index (src*n+dst)*c+j.
size_t globalIndex(const DataCtx &c, int src, int dst, size_t j) {
  return (size_t(src) * c.nranks + dst) * c.counts.count + j;
}
double input(const DataCtx &c, size_t i) {
  const size_t cnt = c.counts.count;
  return c.gen->value(c.rank, globalIndex(c, c.rank, int(i / cnt), i % cnt));
}
double expected(const DataCtx &c, size_t k) {
  const size_t cnt = c.counts.count;
  const int src = int(k / cnt);
  return c.gen->value(src, globalIndex(c, src, c.rank, k % cnt));
}

int runChorus(const CollArgs &a) {
  return MPIX_Alltoall_gpu(a.sendbuf, MPI_Count(a.count), a.type, a.recvbuf, MPI_Count(a.count), a.type, a.comm);
}
int runMpi(const CollArgs &a) {
  return MPI_Alltoall(a.sendbuf, int(a.count), a.type, a.recvbuf, int(a.count), a.type, a.comm);
}

int runInPlace(const CollArgs &a) {
  return MPIX_Alltoall_gpu(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a.recvbuf, MPI_Count(a.count), a.type, a.comm);
}

const Collective kAlltoall = {"alltoall", false, false, counts, busBwFactor, input, expected, nullptr,
                              runChorus, runMpi, runInPlace};
}  // namespace

int main(int argc, char **argv) { return perf::perfMain(argc, argv, kAlltoall); }
