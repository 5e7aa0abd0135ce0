// What the GPU tier's files share (test_gpu.cc: the program and its
// overview; gpu_reference.cc: inputs and the reference results;
// gpu_compare.cc: comparison and reporting; gpu_suite.cc: the matrix of
// collectives, types, ops and sizes; gpu_streams.cc: graph capture, streams,
// a stalled peer, mixed buffers): the run's state, the descriptions of
// types, ops and collectives, and the calls between the files.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_test_env.h"

namespace gpu_test {

extern int g_rank, g_size;
extern const char *g_proto;  // CHORUS_PROTO, for the labels
extern long g_checked, g_failed;
extern cudaStream_t g_stream;  // the _enqueue variants' stream (non-blocking)

// kCudaSlotBytes (src/cuda/device_channel.h): Simple moves one slot per
// step, LL half of one; sizes on either side of both exercise the slicing
// and the split over channels.
constexpr size_t kSlotBytes = 128 * 1024;
constexpr size_t kLargeBytes = size_t(8) << 20;
// Bytes past the result that must stay untouched (LL stores 8-byte units;
// a partial last unit must not spill).
constexpr size_t kGuard = 64;
constexpr unsigned char kSentinel = 0xA5;
// Failing cases printed in full; later ones are only counted.
constexpr long kMaxReported = 200;

// ---- datatypes, ops, collectives ----------------------------------------------------

enum class Kind { Signed, Unsigned, Float, LowP, Pair };
struct TypeInfo {
  const char *name;
  MPI_Datatype type;
  size_t size;  // MPI's extent
  Kind kind;
  int expBits, mantBits;  // low-precision encodings only
  // MINLOC/MAXLOC pairs only: the C struct's fields (the value at offset 0).
  size_t valueBytes = 0, indexOffset = 0, indexBytes = 0;
  bool valueFloat = false, indexFloat = false;
};
inline bool isInteger(const TypeInfo &t) { return t.kind == Kind::Signed || t.kind == Kind::Unsigned; }

// How inputs are generated for an op, see inputValue().
enum class Gen { Sum, Prod, MinMax, Logical, Bits, Raw, Loc };
struct OpInfo {
  const char *name;
  MPI_Op op;
  Gen gen;
  bool integerOnly;
  bool avg;  // MPI has no average: the reference is MPI_SUM divided here
};

enum class Coll { Allreduce, Reduce, ReduceScatter, Bcast, Allgather, Alltoall };
inline const char *collName(Coll c) {
  static const char *const names[] = {"allreduce", "reduce", "reduce_scatter_block", "bcast", "allgather", "alltoall"};
  return names[int(c)];
}
inline bool isReduction(Coll c) { return c == Coll::Allreduce || c == Coll::Reduce || c == Coll::ReduceScatter; }
// Reduce-scatter and alltoall take one block of `count` per rank in,
// allgather and alltoall give one per rank out.
inline size_t inElems(Coll c, size_t count) {
  return (c == Coll::ReduceScatter || c == Coll::Alltoall) ? count * size_t(g_size) : count;
}
inline size_t outElems(Coll c, size_t count) {
  return (c == Coll::Allgather || c == Coll::Alltoall) ? count * size_t(g_size) : count;
}

// ---- gpu_reference.cc -----------------------------------------------------------------

uint64_t mix(uint64_t x);  // splitmix64 finaliser
uint64_t hashOf(uint64_t seed, int rank, size_t i);
// n elements of this rank's input for an op (exact whatever the folding order).
std::vector<char> makeInput(const TypeInfo &t, Gen g, uint64_t seed, size_t n);
int callChorus(Coll c, const void *send, void *recv, size_t count, const TypeInfo &t, MPI_Op op, int root,
               bool enqueue);
// The expected result on this rank from host copies of the inputs (see there).
int reference(Coll c, const TypeInfo &t, const OpInfo *op, const std::vector<char> &in, size_t count, int root,
              std::vector<char> &out);

// ---- gpu_compare.cc -------------------------------------------------------------------

std::string errorText(int rc);
// "" when equal; else the first differing byte, as an element when it lies
// in the result (which starts at byte `origin` and is `resultBytes` long).
std::string firstDifference(const char *got, const char *want, size_t bytes, size_t origin, size_t resultBytes,
                            size_t elem, const char *what);
// One checked case: every rank learns whether any failed, rank 0 names it.
void check(const std::string &label, const std::string &why);

// Device buffers grow on demand and are reused: a cudaMalloc and cudaFree
// per case would dominate the run.
struct DevBuf {
  char *p = nullptr;
  size_t cap = 0;
  char *get(size_t bytes);
};
extern DevBuf g_send, g_recv;
void upload(char *d, const std::vector<char> &h);
std::vector<char> download(const char *d, size_t bytes);

// ---- gpu_suite.cc, gpu_streams.cc -----------------------------------------------------

void runSuite();
// One case of each collective, sized to spread over the most channels
// (tests/gpu/geometry.sh runs it in the shipping geometry on the emulation).
void runGeometrySuite();
void testGraphCapture();
void testTwoCommunicators();
void testStalledPeer();
void testMixedBuffers();

}  // namespace gpu_test
