// The GPU tier's inputs, chosen so that every result is exact whatever order
// the ranks are folded in, and the reference each device result is
// compared with: MPI's own collective on host copies, or Chorus's host engine
// for the low-precision types MPI cannot reduce.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "gpu_suite.h"
#include "chorus.h"

namespace gpu_test {

// ---- inputs -------------------------------------------------------------------------

uint64_t mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
uint64_t hashOf(uint64_t seed, int rank, size_t i) {
  return mix(seed ^ mix(uint64_t(int64_t(rank) + 77)) ^ (uint64_t(i) * 0xc2b2ae3d27d4eb4full));
}

// Every result must be exact whatever order the ranks are folded in: the
// ring's blocks, the device's split over channels and the protocol's slice
// size all change that order, so the device, the host engine and MPI only
// agree bitwise on exact data.  Hence (up to 8 ranks):
//  - SUM/AVG: integers in [-k, k] with k = 8 / nranks, so every partial sum
//    stays within +-8, exact even in fp8 e5m2 (9 is not); unsigned types
//    wrap the negative ones, as MPI does;
//  - PROD: +-1 and +-2 (2 only on the first 4 ranks): +-2^j <= 16, exact
//    everywhere; unsigned types get no -1, whose products would overflow
//    int in MPI's promoted 16-bit arithmetic;
//  - MIN/MAX: integers in [-8, 8] (never -0: min(-0, +0) depends on order);
//  - logical ops: per element all zero, all nonzero or mixed, nonzero values
//    sometimes 0x100 (zero low byte); bitwise ops and copies: random bits.
static int64_t inputValue(Gen g, const TypeInfo &t, uint64_t seed, size_t i) {
  const uint64_t h = hashOf(seed, g_rank, i);
  switch (g) {
    case Gen::Sum: {
      const int k = std::max(1, 8 / g_size);
      return int64_t(h % uint64_t(2 * k + 1)) - k;
    }
    case Gen::Prod: {
      const int64_t mag = (g_rank < 4 && (h & 1)) ? 2 : 1;
      return (t.kind != Kind::Unsigned && (h & 2)) ? -mag : mag;
    }
    case Gen::MinMax: return int64_t(h % 17) - 8;
    case Gen::Logical: {
      const uint64_t mode = hashOf(seed, -1, i) % 3;  // the same on every rank
      if (mode == 1 || (mode == 2 && (h & 4))) return 0;
      return (t.size >= 2 && (h & 8)) ? 0x100 : int64_t(1 + h % 5);
    }
    default: return int64_t(h);
  }
}

// A float that is exactly representable in the format (small integers
// here) to its encoding: sign, rebiased exponent, truncated mantissa.
static uint32_t encodeLowp(float f, int expBits, int mantBits) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 31) << (expBits + mantBits), mag = x & 0x7FFFFFFFu;
  if (mag == 0) return sign;
  const int bias = (1 << (expBits - 1)) - 1;
  const uint32_t exp = uint32_t(int(mag >> 23) - 127 + bias);
  return sign | (exp << mantBits) | ((mag & 0x7FFFFFu) >> (23 - mantBits));
}

static void storeValue(const TypeInfo &t, Gen g, int64_t v, char *p) {
  // Integers, bits and copies: the low bytes, i.e. v modulo 2^bits (x86 and
  // Arm are little-endian).
  if (g == Gen::Bits || g == Gen::Raw || isInteger(t)) {
    memcpy(p, &v, t.size);
  } else if (t.kind == Kind::Float && t.size == 4) {
    const float f = float(v);
    memcpy(p, &f, 4);
  } else if (t.kind == Kind::Float) {
    const double d = double(v);
    memcpy(p, &d, 8);
  } else {
    const uint32_t bits = encodeLowp(float(v), t.expBits, t.mantBits);
    memcpy(p, &bits, t.size);
  }
}

// A field of `bytes` bytes holding v as an integer or a float of that size.
static void storeField(char *p, size_t bytes, bool isFloat, int64_t v) {
  if (isFloat && bytes == 4) {
    const float f = float(v);
    memcpy(p, &f, 4);
  } else if (isFloat) {
    const double d = double(v);
    memcpy(p, &d, 8);
  } else {
    memcpy(p, &v, bytes);
  }
}

// MINLOC/MAXLOC inputs: random bytes everywhere (the gaps too), then a value
// in [-2, 2] (ties are common) and an index in [-1000, 1000].
static void storePair(const TypeInfo &t, Gen g, uint64_t seed, size_t i, char *p) {
  for (size_t b = 0; b < t.size; b += 8) {
    const uint64_t h = hashOf(seed ^ 0x51, g_rank, i * 8 + b);
    memcpy(p + b, &h, std::min<size_t>(8, t.size - b));
  }
  if (g != Gen::Loc) return;
  const uint64_t h = hashOf(seed, g_rank, i);
  storeField(p, t.valueBytes, t.valueFloat, int64_t(h % 5) - 2);
  storeField(p + t.indexOffset, t.indexBytes, t.indexFloat, int64_t((h >> 8) % 2001) - 1000);
}

std::vector<char> makeInput(const TypeInfo &t, Gen g, uint64_t seed, size_t n) {
  std::vector<char> buf(n * t.size);
  for (size_t i = 0; i < n; ++i) {
    if (t.kind == Kind::Pair) storePair(t, g, seed, i, buf.data() + i * t.size);
    else storeValue(t, g, inputValue(g, t, seed, i), buf.data() + i * t.size);
  }
  return buf;
}

// ---- Chorus calls and the reference ----------------------------------------------

int callChorus(Coll c, const void *send, void *recv, size_t count, const TypeInfo &t, MPI_Op op, int root,
               bool enqueue) {
  const MPI_Count n = MPI_Count(count);
  const MPI_Datatype dt = t.type;
  const MPI_Comm w = MPI_COMM_WORLD;
  cudaStream_t s = g_stream;
  switch (c) {
    case Coll::Allreduce:
      return enqueue ? MPIX_Allreduce_gpu_enqueue(send, recv, n, dt, op, w, s)
                     : MPIX_Allreduce_gpu(send, recv, n, dt, op, w);
    case Coll::Reduce:
      return enqueue ? MPIX_Reduce_gpu_enqueue(send, recv, n, dt, op, root, w, s)
                     : MPIX_Reduce_gpu(send, recv, n, dt, op, root, w);
    case Coll::ReduceScatter:
      return enqueue ? MPIX_Reduce_scatter_block_gpu_enqueue(send, recv, n, dt, op, w, s)
                     : MPIX_Reduce_scatter_block_gpu(send, recv, n, dt, op, w);
    case Coll::Bcast:
      return enqueue ? MPIX_Bcast_gpu_enqueue(recv, n, dt, root, w, s) : MPIX_Bcast_gpu(recv, n, dt, root, w);
    case Coll::Allgather:
      return enqueue ? MPIX_Allgather_gpu_enqueue(send, n, dt, recv, n, dt, w, s)
                     : MPIX_Allgather_gpu(send, n, dt, recv, n, dt, w);
    case Coll::Alltoall:
      return enqueue ? MPIX_Alltoall_gpu_enqueue(send, n, dt, recv, n, dt, w, s)
                     : MPIX_Alltoall_gpu(send, n, dt, recv, n, dt, w);
  }
  return MPI_ERR_OTHER;
}

// Chorus's AVG: integers truncate toward zero in 64 bits of the type's
// signedness (after the sum has wrapped), floats divide in their precision.
template <typename T>
static void divideAs(char *p, size_t n, int by) {
  using Wide = typename std::conditional<std::is_signed<T>::value, int64_t, uint64_t>::type;
  for (size_t i = 0; i < n; ++i) {
    T x;
    memcpy(&x, p + i * sizeof(T), sizeof(T));
    if constexpr (std::is_integral<T>::value) x = T(Wide(x) / Wide(by));
    else x = x / T(by);
    memcpy(p + i * sizeof(T), &x, sizeof(T));
  }
}

static void divideByRanks(const TypeInfo &t, std::vector<char> &buf) {
  const size_t n = buf.size() / t.size;
  char *p = buf.data();
  const bool s = t.kind == Kind::Signed;
  if (t.kind == Kind::Float) t.size == 4 ? divideAs<float>(p, n, g_size) : divideAs<double>(p, n, g_size);
  else if (t.size == 1) s ? divideAs<int8_t>(p, n, g_size) : divideAs<uint8_t>(p, n, g_size);
  else if (t.size == 2) s ? divideAs<int16_t>(p, n, g_size) : divideAs<uint16_t>(p, n, g_size);
  else if (t.size == 4) s ? divideAs<int32_t>(p, n, g_size) : divideAs<uint32_t>(p, n, g_size);
  else s ? divideAs<int64_t>(p, n, g_size) : divideAs<uint64_t>(p, n, g_size);
}

// The expected result on this rank from host copies of the inputs; empty at
// a reduce's non-root.  Always out of place: MPI defines in-place calls to
// give the same result.  Returns the reference call's error code.
int reference(Coll c, const TypeInfo &t, const OpInfo *op, const std::vector<char> &in, size_t count, int root,
              std::vector<char> &out) {
  // The sentinel runVariant fills recvbuf with: MPI writes only data bytes,
  // so the gaps of MPI_DOUBLE_INT and the like must stay as they were.
  out.assign(outElems(c, count) * t.size, char(kSentinel));
  const int n = int(count);
  const MPI_Comm w = MPI_COMM_WORLD;
  int rc = MPI_SUCCESS;
  if (isReduction(c) && t.kind == Kind::LowP) {
    // MPI cannot reduce Chorus's own types; the host engine promises the
    // device's bits (same functors, reduced in float, rounded once a step).
    rc = callChorus(c, in.data(), out.data(), count, t, op->op, root, false);
  } else {
    const MPI_Op mop = op ? (op->avg ? MPI_SUM : op->op) : MPI_OP_NULL;
    switch (c) {
      case Coll::Allreduce: rc = MPI_Allreduce(in.data(), out.data(), n, t.type, mop, w); break;
      case Coll::Reduce: rc = MPI_Reduce(in.data(), out.data(), n, t.type, mop, root, w); break;
      case Coll::ReduceScatter: rc = MPI_Reduce_scatter_block(in.data(), out.data(), n, t.type, mop, w); break;
      case Coll::Bcast:
        if (g_rank == root) out = in;
        rc = MPI_Bcast(out.data(), n, t.type, root, w);
        break;
      case Coll::Allgather: rc = MPI_Allgather(in.data(), n, t.type, out.data(), n, t.type, w); break;
      case Coll::Alltoall: rc = MPI_Alltoall(in.data(), n, t.type, out.data(), n, t.type, w); break;
    }
    if (op && op->avg) divideByRanks(t, out);
  }
  if (c == Coll::Reduce && g_rank != root) out.clear();
  return rc;
}

}  // namespace gpu_test
