// reduce_perf: the root ends with the reduction of all send buffers.
// busbw = algbw: a pipelined chain moves the buffer once through each link.
#include <chorus.h>

#include "driver.h"

namespace {
using namespace perf;

CollCounts counts(size_t bytes, size_t typeSize, int) {
  const size_t n = bytes / typeSize;
  return {n, n, n, n};
}
double busBwFactor(int) { return 1.0; }
double input(const DataCtx &c, size_t i) { return c.gen->value(c.rank, i); }
double expected(const DataCtx &c, size_t i) { return c.gen->reduced(i); }
bool checksRank(const DataCtx &c) { return c.rank == c.root; }  // recvbuf matters at the root only

int runChorus(const CollArgs &a) {
  return MPIX_Reduce_gpu(a.sendbuf, a.recvbuf, MPI_Count(a.count), a.type, a.op, a.root, a.comm);
}
int runMpi(const CollArgs &a) {
  return MPI_Reduce(a.sendbuf, a.recvbuf, int(a.count), a.type, a.op, a.root, a.comm);
}

// Only the root passes MPI_IN_PLACE; the others send as usual.
int runInPlace(const CollArgs &a) {
  const void *send = a.rank == a.root ? MPI_IN_PLACE : a.sendbuf;
  return MPIX_Reduce_gpu(send, a.recvbuf, MPI_Count(a.count), a.type, a.op, a.root, a.comm);
}

const Collective kReduce = {"reduce", true, true, counts, busBwFactor, input, expected, checksRank,
                            runChorus, runMpi, runInPlace};
}  // namespace

int main(int argc, char **argv) { return perf::perfMain(argc, argv, kReduce); }
