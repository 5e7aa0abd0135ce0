// allgather_perf: every rank ends with all ranks' blocks, in rank order.
// Size is the gathered total; each rank sends size/n.
// busbw = algbw * (n-1)/n: each rank receives the n-1 blocks it lacks.
#include <chorus.h>

#include "driver.h"

namespace {
using namespace perf;

CollCounts counts(size_t bytes, size_t typeSize, int nranks) {
  const size_t c = bytes / (typeSize * size_t(nranks));
  return {c, c, c * nranks, c * nranks};
}
double busBwFactor(int n) { return double(n - 1) / n; }
// Values are indexed by position in the gathered buffer.
double input(const DataCtx &c, size_t i) { return c.gen->value(c.rank, c.rank * c.counts.count + i); }
double expected(const DataCtx &c, size_t j) { return c.gen->value(int(j / c.counts.count), j); }

int runChorus(const CollArgs &a) {
  return MPIX_Allgather_gpu(a.sendbuf, MPI_Count(a.count), a.type, a.recvbuf, MPI_Count(a.count), a.type, a.comm);
}
int runMpi(const CollArgs &a) {
  return MPI_Allgather(a.sendbuf, int(a.count), a.type, a.recvbuf, int(a.count), a.type, a.comm);
}

// Each rank's block already sits at its place in recvbuf.
int runInPlace(const CollArgs &a) {
  return MPIX_Allgather_gpu(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a.recvbuf, MPI_Count(a.count), a.type, a.comm);
}

const Collective kAllgather = {"allgather", false, false, counts, busBwFactor, input, expected, nullptr,
                               runChorus, runMpi, runInPlace};
}  // namespace

int main(int argc, char **argv) { return perf::perfMain(argc, argv, kAllgather); }
