// GPU tier: the multi-rank suite on device buffers.  Every collective runs
// for every datatype, every op valid on it and a range of sizes, on device
// buffers, and is compared bit for bit with a reference computed on host
// copies of the same inputs: MPI's own collective for MPI's types, Chorus's
// host engine (itself checked against MPI in tests/mpi) for the
// low-precision MPIX_GPU_* types, which MPI cannot reduce.  Then the
// stream-ordered variants, CUDA graph capture of _enqueue calls and the
// clear error for mixed host/device buffers.  Several ranks may share one
// GPU (rank r uses device r % ndevices): that is the one-GPU CI setup.
//
// The protocol is CHORUS_PROTO, which Chorus reads once per process, so one
// run covers one protocol: run-gpu.sh starts this program once per protocol.
//
// Exit status: 0 pass, 1 fail, 77 "skipped: no GPU" (Automake SKIP) when
// cudaGetDeviceCount fails or finds no device.
//
// Built with --enable-cuda-emulation, this same program runs the kernels on
// the CPU emulation of CUDA (src/cuda/emu), where it never skips.  A pass
// there proves the kernels' logic (slicing, FIFOs, flags, credits, channel
// split, folding order), not GPU memory ordering (x86 is stronger, so a
// missing fence can pass), nor NVLink, real CUDA IPC or speed: a run on a
// GPU is still wanted.
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu_test_env.h"
#include "chorus.h"

namespace {

int g_rank = 0, g_size = 1;
const char *g_proto = "auto";
long g_checked = 0, g_failed = 0;
cudaStream_t g_stream = nullptr;


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
bool isInteger(const TypeInfo &t) { return t.kind == Kind::Signed || t.kind == Kind::Unsigned; }

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
const char *collName(Coll c) {
  static const char *const names[] = {"allreduce", "reduce", "reduce_scatter_block", "bcast", "allgather", "alltoall"};
  return names[int(c)];
}
bool isReduction(Coll c) { return c == Coll::Allreduce || c == Coll::Reduce || c == Coll::ReduceScatter; }
// Reduce-scatter and alltoall take one block of `count` per rank in,
// allgather and alltoall give one per rank out.
size_t inElems(Coll c, size_t count) {
  return (c == Coll::ReduceScatter || c == Coll::Alltoall) ? count * size_t(g_size) : count;
}
size_t outElems(Coll c, size_t count) {
  return (c == Coll::Allgather || c == Coll::Alltoall) ? count * size_t(g_size) : count;
}

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
int64_t inputValue(Gen g, const TypeInfo &t, uint64_t seed, size_t i) {
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
uint32_t encodeLowp(float f, int expBits, int mantBits) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 31) << (expBits + mantBits), mag = x & 0x7FFFFFFFu;
  if (mag == 0) return sign;
  const int bias = (1 << (expBits - 1)) - 1;
  const uint32_t exp = uint32_t(int(mag >> 23) - 127 + bias);
  return sign | (exp << mantBits) | ((mag & 0x7FFFFFu) >> (23 - mantBits));
}

void storeValue(const TypeInfo &t, Gen g, int64_t v, char *p) {
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
void storeField(char *p, size_t bytes, bool isFloat, int64_t v) {
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
void storePair(const TypeInfo &t, Gen g, uint64_t seed, size_t i, char *p) {
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
void divideAs(char *p, size_t n, int by) {
  using Wide = typename std::conditional<std::is_signed<T>::value, int64_t, uint64_t>::type;
  for (size_t i = 0; i < n; ++i) {
    T x;
    memcpy(&x, p + i * sizeof(T), sizeof(T));
    if constexpr (std::is_integral<T>::value) x = T(Wide(x) / Wide(by));
    else x = x / T(by);
    memcpy(p + i * sizeof(T), &x, sizeof(T));
  }
}

void divideByRanks(const TypeInfo &t, std::vector<char> &buf) {
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

// ---- checking -----------------------------------------------------------------------

std::string errorText(int rc) {
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  return "error " + std::to_string(rc) + ": " + msg;
}

std::string hexBytes(const char *p, size_t n) {
  std::string s;
  char b[4];
  for (size_t i = n; i-- > 0;) {  // most significant byte first
    snprintf(b, sizeof b, "%02x", unsigned(static_cast<unsigned char>(p[i])));
    s += b;
  }
  return s;
}

// "" when equal; else the first differing byte, as an element when it lies
// in the result (which starts at byte `origin` and is `resultBytes` long).
std::string firstDifference(const char *got, const char *want, size_t bytes, size_t origin, size_t resultBytes,
                            size_t elem, const char *what) {
  size_t i = 0;
  while (i < bytes && got[i] == want[i]) ++i;
  if (i == bytes) return "";
  char s[256];
  if (i < origin || i >= origin + resultBytes) {
    snprintf(s, sizeof s, "%s: byte %lld outside the result is 0x%02x, want 0x%02x", what,
             (long long)i - (long long)origin, unsigned(static_cast<unsigned char>(got[i])),
             unsigned(static_cast<unsigned char>(want[i])));
  } else {
    const size_t e = (i - origin) / elem, at = origin + e * elem;
    snprintf(s, sizeof s, "%s: element %zu is 0x%s, want 0x%s", what, e, hexBytes(got + at, elem).c_str(),
             hexBytes(want + at, elem).c_str());
  }
  return s;
}

// One checked case: every rank learns whether any failed, rank 0 names it.
void check(const std::string &label, const std::string &why) {
  ++g_checked;
  int bad = why.empty() ? 0 : 1, anyBad = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!anyBad) return;
  ++g_failed;
  if (g_failed > kMaxReported) return;
  if (bad) fprintf(stderr, "rank %d: %s: %s\n", g_rank, label.c_str(), why.c_str());
  if (g_rank == 0) printf("FAIL %s\n", label.c_str());
  if (g_rank == 0 && g_failed == kMaxReported) printf("(further failures are counted, not shown)\n");
  fflush(stdout);
}

// Device buffers grow on demand and are reused: a cudaMalloc and cudaFree
// per case would dominate the run.
struct DevBuf {
  char *p = nullptr;
  size_t cap = 0;
  char *get(size_t bytes) {
    if (bytes > cap) {
      if (p) CUDA_OK(cudaFree(p));
      cap = std::max(bytes, 2 * cap);
      CUDA_OK(cudaMalloc(&p, cap));
    }
    return p;
  }
};
DevBuf g_send, g_recv;

void upload(char *d, const std::vector<char> &h) {
  if (!h.empty()) CUDA_OK(cudaMemcpy(d, h.data(), h.size(), cudaMemcpyHostToDevice));
}
std::vector<char> download(const char *d, size_t bytes) {
  std::vector<char> h(bytes);
  if (bytes) CUDA_OK(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost));
  return h;
}

struct Variant {
  const char *name;
  bool inPlace, enqueue;
};

struct Case {
  Coll coll;
  const TypeInfo *type;
  const OpInfo *op;  // null for the copy collectives
  size_t count;
  int root;
  // Bytes from cudaMalloc's alignment of sendbuf and recvbuf; -1: the
  // default (one element off for odd counts).
  int sendOff = -1, recvOff = -1;
};

std::string labelOf(const Case &k, const Variant &v) {
  char s[200];
  snprintf(s, sizeof s, "%s %s %s proto=%s count=%zu%s", collName(k.coll), k.type->name, k.op ? k.op->name : "-",
           g_proto, k.count, v.name);
  std::string l = s;
  if (k.coll == Coll::Reduce || k.coll == Coll::Bcast) l += " root=" + std::to_string(k.root);
  if (k.sendOff >= 0) l += " sendbuf+" + std::to_string(k.sendOff) + " recvbuf+" + std::to_string(k.recvOff);
  return l;
}

void runVariant(const Case &k, const Variant &v, const std::vector<char> &in, const std::vector<char> &ref,
                const std::string &refError) {
  const TypeInfo &t = *k.type;
  const size_t inBytes = in.size(), outBytes = outElems(k.coll, k.count) * t.size;
  // Odd counts run one element off cudaMalloc's alignment, so the
  // element-wise paths run too, not only 16-byte vectors.
  const size_t sendShift = k.sendOff >= 0 ? size_t(k.sendOff) : k.count % 2 ? t.size : 0;
  const size_t shift = k.recvOff >= 0 ? size_t(k.recvOff) : k.count % 2 ? t.size : 0;
  const size_t span = std::max(shift, sendShift) + std::max(inBytes, outBytes) + kGuard;
  char *dSend = g_send.get(span) + sendShift;
  char *dRecvBase = g_recv.get(span), *dRecv = dRecvBase + shift;
  CUDA_OK(cudaMemset(dRecvBase, kSentinel, span));
  const bool isRoot = g_rank == k.root;
  const bool inPlace = v.inPlace && (k.coll != Coll::Reduce || isRoot);  // MPI: in place at the root only
  const void *send = dSend;
  if (k.coll == Coll::Bcast) {
    if (isRoot) upload(dRecv, in);
    send = nullptr;
  } else if (inPlace) {
    send = MPI_IN_PLACE;
    upload(k.coll == Coll::Allgather ? dRecv + size_t(g_rank) * inBytes : dRecv, in);
  } else {
    upload(dSend, in);
  }
  // The memset and a pageable upload may still be in flight on the legacy
  // stream, which does not order the non-blocking stream of _enqueue.
  CUDA_OK(cudaDeviceSynchronize());

  const int rc = callChorus(k.coll, send, dRecv, k.count, t, k.op ? k.op->op : MPI_OP_NULL, k.root, v.enqueue);
  if (v.enqueue) CUDA_OK(cudaStreamSynchronize(g_stream));

  std::string why = refError;
  if (why.empty() && rc != MPI_SUCCESS) why = errorText(rc);
  if (why.empty()) {
    const std::vector<char> got = download(dRecvBase, span);
    if (inPlace) {
      // The rest of the buffer held input (reduce-scatter): only the result counts.
      why = firstDifference(got.data() + shift, ref.data(), ref.size(), 0, ref.size(), t.size, "recvbuf");
    } else {
      // Sentinel everywhere but the result: catches a non-root reduce
      // writing its recvbuf and stores past either end.
      std::vector<char> want(span, char(kSentinel));
      if (!ref.empty()) memcpy(want.data() + shift, ref.data(), ref.size());
      why = firstDifference(got.data(), want.data(), span, shift, ref.size(), t.size, "recvbuf");
    }
  }
  if (why.empty() && send == dSend && inBytes) {  // sendbuf is const
    const std::vector<char> after = download(dSend, inBytes);
    why = firstDifference(after.data(), in.data(), inBytes, 0, inBytes, t.size, "sendbuf changed");
  }
  check(labelOf(k, v), why);
}

// One (collective, type, op, count): the reference once, then each variant
// on device buffers.  In place and _enqueue run with `allVariants` only:
// they change the buffers and the stream, not the arithmetic, so one op per
// type covers them.
void runCase(const Case &k, uint64_t seed, bool allVariants) {
  const std::vector<char> in = makeInput(*k.type, k.op ? k.op->gen : Gen::Raw, seed, inElems(k.coll, k.count));
  std::vector<char> ref;
  const int rc = reference(k.coll, *k.type, k.op, in, k.count, k.root, ref);
  const std::string refError = rc == MPI_SUCCESS ? "" : "reference failed, " + errorText(rc);
  runVariant(k, Variant{"", false, false}, in, ref, refError);
  if (!allVariants) return;
  if (k.coll != Coll::Bcast) runVariant(k, Variant{" in-place", true, false}, in, ref, refError);  // bcast always is
  runVariant(k, Variant{" enqueue", false, true}, in, ref, refError);
}

// 0, 1, two primes, one element either side of LL's half slot and of a
// whole Simple slot (one more slice, one more channel).
std::vector<size_t> countsFor(const TypeInfo &t) {
  const size_t ll = kSlotBytes / 2 / t.size, simple = kSlotBytes / t.size;
  return {0, 1, 7, 1031, ll - 1, ll + 1, simple - 1, simple + 1};
}

uint64_t seedOf(Coll c, size_t type, size_t op, size_t count) {
  return mix((uint64_t(c) << 56) ^ (uint64_t(type) << 48) ^ (uint64_t(op) << 40) ^ uint64_t(count));
}

void runSuite() {
  const TypeInfo reduceTypes[] = {
      {"int8", MPI_INT8_T, 1, Kind::Signed, 0, 0},        {"uint8", MPI_UINT8_T, 1, Kind::Unsigned, 0, 0},
      {"int16", MPI_INT16_T, 2, Kind::Signed, 0, 0},      {"uint16", MPI_UINT16_T, 2, Kind::Unsigned, 0, 0},
      {"int32", MPI_INT32_T, 4, Kind::Signed, 0, 0},      {"uint32", MPI_UINT32_T, 4, Kind::Unsigned, 0, 0},
      {"int64", MPI_INT64_T, 8, Kind::Signed, 0, 0},      {"uint64", MPI_UINT64_T, 8, Kind::Unsigned, 0, 0},
      {"float", MPI_FLOAT, 4, Kind::Float, 0, 0},         {"double", MPI_DOUBLE, 8, Kind::Float, 0, 0},
      {"float16", MPIX_GPU_FLOAT16, 2, Kind::LowP, 5, 10}, {"bfloat16", MPIX_GPU_BFLOAT16, 2, Kind::LowP, 8, 7},
      {"fp8_e4m3", MPIX_GPU_FP8_E4M3, 1, Kind::LowP, 4, 3}, {"fp8_e5m2", MPIX_GPU_FP8_E5M2, 1, Kind::LowP, 5, 2},
  };
  // SUM first: the in-place and enqueue variants run with it.  (AVG is
  // valid on integers too: integer division, see src/coll/functors.h.)
  const OpInfo ops[] = {
      {"sum", MPI_SUM, Gen::Sum, false, false},       {"prod", MPI_PROD, Gen::Prod, false, false},
      {"min", MPI_MIN, Gen::MinMax, false, false},    {"max", MPI_MAX, Gen::MinMax, false, false},
      {"avg", MPIX_GPU_AVG, Gen::Sum, false, true},   {"land", MPI_LAND, Gen::Logical, true, false},
      {"lor", MPI_LOR, Gen::Logical, true, false},    {"lxor", MPI_LXOR, Gen::Logical, true, false},
      {"band", MPI_BAND, Gen::Bits, true, false},     {"bor", MPI_BOR, Gen::Bits, true, false},
      {"bxor", MPI_BXOR, Gen::Bits, true, false},
  };
  const Coll reductions[] = {Coll::Allreduce, Coll::Reduce, Coll::ReduceScatter};
  const size_t ntypes = sizeof reduceTypes / sizeof reduceTypes[0], nops = sizeof ops / sizeof ops[0];
  for (size_t ti = 0; ti < ntypes; ++ti) {
    const TypeInfo &t = reduceTypes[ti];
    const std::vector<size_t> counts = countsFor(t);
    for (size_t oi = 0; oi < nops; ++oi) {
      if (ops[oi].integerOnly && !isInteger(t)) continue;
      for (size_t si = 0; si < counts.size(); ++si)
        for (Coll c : reductions)
          runCase(Case{c, &t, &ops[oi], counts[si], int(si % size_t(g_size))}, seedOf(c, ti, oi, counts[si]), oi == 0);
    }
  }
  // Many slices per channel on every channel: one large size, float sum only
  // to keep the run short.
  for (size_t ti = 0; ti < ntypes; ++ti)
    if (reduceTypes[ti].type == MPI_FLOAT)
      for (Coll c : reductions)
        runCase(Case{c, &reduceTypes[ti], &ops[0], kLargeBytes / 4, g_size - 1}, seedOf(c, ti, 0, kLargeBytes), true);

  // MINLOC and MAXLOC on the pair types, the 16-byte ones on Simple only.
  // Types with gaps (MPI_DOUBLE_INT, MPI_SHORT_INT) are staged and must leave
  // the gaps of recvbuf alone; their in-place variants would need the
  // reference to start from the in-place input, so they run out of place.
  const TypeInfo pairTypes[] = {
      {"2int", MPI_2INT, 8, Kind::Pair, 0, 0, 4, 4, 4, false, false},
      {"float_int", MPI_FLOAT_INT, 8, Kind::Pair, 0, 0, 4, 4, 4, true, false},
      {"double_int", MPI_DOUBLE_INT, 16, Kind::Pair, 0, 0, 8, 8, 4, true, false},
      {"short_int", MPI_SHORT_INT, 8, Kind::Pair, 0, 0, 2, 4, 4, false, false},
      {"2double_precision", MPI_2DOUBLE_PRECISION, 16, Kind::Pair, 0, 0, 8, 8, 8, true, true},
  };
  const OpInfo locOps[] = {{"minloc", MPI_MINLOC, Gen::Loc, false, false}, {"maxloc", MPI_MAXLOC, Gen::Loc, false, false}};
  for (size_t ti = 0; ti < sizeof pairTypes / sizeof pairTypes[0]; ++ti) {
    const TypeInfo &t = pairTypes[ti];
    const bool gaps = t.indexOffset + t.indexBytes < t.size || t.indexOffset > t.valueBytes;
    const std::vector<size_t> counts = countsFor(t);
    for (size_t oi = 0; oi < 2; ++oi)
      for (size_t si = 0; si < counts.size(); ++si)
        for (Coll c : reductions)
          runCase(Case{c, &t, &locOps[oi], counts[si], int(si % size_t(g_size))}, seedOf(c, 50 + ti, oi, counts[si]),
                  oi == 0 && !gaps);
    for (Coll c : {Coll::Bcast, Coll::Allgather, Coll::Alltoall})
      runCase(Case{c, &t, nullptr, counts[3], 0}, seedOf(c, 50 + ti, 9, counts[3]), false);
  }

  // The copy collectives move bytes whatever the type: bytes (odd lengths)
  // and float (whole words) cover them.
  const TypeInfo copyTypes[] = {{"byte", MPI_BYTE, 1, Kind::Unsigned, 0, 0},
                                {"float", MPI_FLOAT, 4, Kind::Float, 0, 0}};
  const Coll copies[] = {Coll::Bcast, Coll::Allgather, Coll::Alltoall};
  for (size_t ti = 0; ti < 2; ++ti) {
    std::vector<size_t> counts = countsFor(copyTypes[ti]);
    if (ti == 1) counts.push_back(kLargeBytes / 4);
    for (size_t si = 0; si < counts.size(); ++si)
      for (Coll c : copies)
        runCase(Case{c, &copyTypes[ti], nullptr, counts[si], int(si % size_t(g_size))},
                seedOf(c, 100 + ti, 0, counts[si]), true);
  }

  // Buffers at byte offsets from cudaMalloc's alignment, equal and mutually
  // different, so the data mover's peeled heads, shifted loads and narrow
  // stores (src/cuda/reduce_copy.cuh) run, over one and several channels.
  // Floats stay 4-byte aligned, as C requires.
  const int byteOffsets[][2] = {{1, 1}, {1, 4}, {4, 8}, {8, 3}, {0, 5}};
  const int floatOffsets[][2] = {{4, 4}, {4, 8}, {8, 12}, {12, 0}};
  const TypeInfo &int8 = reduceTypes[0], &flt = reduceTypes[8];
  for (size_t count : {size_t(1031), 2 * kSlotBytes + 5}) {
    for (const auto &o : byteOffsets) {
      const int which = o[0] * 16 + o[1];
      for (Coll c : copies)
        runCase(Case{c, &copyTypes[0], nullptr, count, 1 % g_size, o[0], o[1]}, seedOf(c, 150, which, count), false);
      runCase(Case{Coll::Allreduce, &int8, &ops[0], count, 0, o[0], o[1]}, seedOf(Coll::Allreduce, 151, which, count),
              false);
    }
    for (const auto &o : floatOffsets)
      runCase(Case{Coll::Allreduce, &flt, &ops[0], count, 0, o[0], o[1]},
              seedOf(Coll::Allreduce, 152, o[0] * 16 + o[1], count), false);
  }
}

// ---- graph capture, mixed buffers -----------------------------------------------------

// Two chained allreduces captured into one graph, replayed three times:
// the FIFO state lives in device memory, so replays must keep in step.
void testGraphCapture() {
  const size_t count = 4099;
  std::vector<float> a(count);
  for (size_t i = 0; i < count; ++i) a[i] = float(int(i % 5) + g_rank);
  float *dA, *dB, *dC;
  CUDA_OK(cudaMalloc(&dA, count * 4));
  CUDA_OK(cudaMalloc(&dB, count * 4));
  CUDA_OK(cudaMalloc(&dC, count * 4));
  CUDA_OK(cudaMemcpy(dA, a.data(), count * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaDeviceSynchronize());  // s is non-blocking: not ordered after the legacy stream's copy
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  int rc1 = MPIX_Allreduce_gpu_enqueue(dA, dB, MPI_Count(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, s);
  int rc2 = MPIX_Allreduce_gpu_enqueue(dB, dC, MPI_Count(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, s);
  CUDA_OK(cudaStreamEndCapture(s, &graph));
  const std::string label = std::string("graph capture allreduce float sum proto=") + g_proto + " count=4099";
  // Across nodes device buffers are staged through host memory by the
  // calling thread, which a graph cannot replay: the call must say so.
  if (getenv("CHORUS_TEST_LAYOUT")) {
    const std::string text = rc1 != MPI_SUCCESS ? errorText(rc1) : "";
    check(label + " across nodes", rc1 == MPI_SUCCESS ? "succeeded, but a graph cannot replay the staged copies"
                                   : text.find("capture") == std::string::npos ? "error does not name the capture: " + text
                                                                               : "");
    cudaGraphDestroy(graph);
    cudaStreamDestroy(s);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    return;
  }
  check(label, rc1 != MPI_SUCCESS ? errorText(rc1) : rc2 != MPI_SUCCESS ? errorText(rc2) : "");
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  std::vector<float> want(count);
  for (size_t i = 0; i < count; ++i) {
    float sum = 0;
    for (int r = 0; r < g_size; ++r) sum += float(int(i % 5) + r);
    want[i] = sum * float(g_size);
  }
  for (int replay = 0; replay < 3; ++replay) {
    CUDA_OK(cudaMemsetAsync(dC, 0, count * 4, s));
    CUDA_OK(cudaGraphLaunch(exec, s));
    CUDA_OK(cudaStreamSynchronize(s));
    std::vector<float> got(count);
    CUDA_OK(cudaMemcpy(got.data(), dC, count * 4, cudaMemcpyDeviceToHost));
    check(label + " replay " + std::to_string(replay),
          firstDifference(reinterpret_cast<char *>(got.data()), reinterpret_cast<char *>(want.data()), count * 4, 0,
                          count * 4, 4, "result"));
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
}

// Two communicators (a duplicate of the world and its even/odd halves), each
// with its own device resources, enqueue allreduces on two streams in
// turn; each communicator's kernels share its FIFOs, the two do not.
void testTwoCommunicators() {
  MPI_Comm dup, half;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
  cudaStream_t s[2];
  CUDA_OK(cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking));
  const size_t count = 70001;  // past one LL slot: two channels under auto
  const int rounds = 3;
  std::vector<int32_t> in(count);
  for (size_t i = 0; i < count; ++i) in[i] = int32_t(hashOf(7, g_rank, i) % 1000);
  int32_t *dIn, *dOut;
  CUDA_OK(cudaMalloc(&dIn, count * 4));
  CUDA_OK(cudaMalloc(&dOut, 2 * rounds * count * 4));
  CUDA_OK(cudaMemcpy(dIn, in.data(), count * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaDeviceSynchronize());
  const MPI_Comm comms[2] = {dup, half};
  std::string why;
  for (int r = 0; r < rounds && why.empty(); ++r)
    for (int c = 0; c < 2 && why.empty(); ++c) {
      const int rc = MPIX_Allreduce_gpu_enqueue(dIn, dOut + (size_t(r) * 2 + c) * count, MPI_Count(count), MPI_INT32_T,
                                                MPI_SUM, comms[c], s[c]);
      if (rc != MPI_SUCCESS) why = errorText(rc);
    }
  CUDA_OK(cudaStreamSynchronize(s[0]));
  CUDA_OK(cudaStreamSynchronize(s[1]));
  for (int c = 0; c < 2 && why.empty(); ++c) {
    std::vector<int32_t> want(count);
    MPI_Allreduce(in.data(), want.data(), int(count), MPI_INT32_T, MPI_SUM, comms[c]);
    for (int r = 0; r < rounds && why.empty(); ++r) {
      const std::vector<char> got = download(reinterpret_cast<char *>(dOut + (size_t(r) * 2 + c) * count), count * 4);
      why = firstDifference(got.data(), reinterpret_cast<const char *>(want.data()), count * 4, 0, count * 4, 4,
                            c == 0 ? "duplicate of the world" : "even/odd half");
    }
  }
  check(std::string("two communicators on two streams allreduce int32 sum proto=") + g_proto + " count=70001", why);
  cudaFree(dIn);
  cudaFree(dOut);
  cudaStreamDestroy(s[0]);
  cudaStreamDestroy(s[1]);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&half);
}

// `test_gpu --stalled-peer` (stalled-peer.sh, CHORUS_TIMEOUT of a few
// seconds): after a first allreduce sets the communicator up, the last rank
// stays away from the second; every other rank must get an error within
// the timeout that names it, from the kernel's own timeout.
void testStalledPeer() {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  const size_t count = 1024;
  float *d;
  CUDA_OK(cudaMalloc(&d, 2 * count * 4));
  CUDA_OK(cudaMemset(d, 0, 2 * count * 4));
  const int absent = g_size - 1;
  int rc = MPIX_Allreduce_gpu(d, d + count, MPI_Count(count), MPI_FLOAT, MPI_SUM, dup);
  check("stalled peer: the first allreduce", rc == MPI_SUCCESS ? "" : errorText(rc));
  std::string why;
  if (g_rank != absent) {
    rc = MPIX_Allreduce_gpu(d, d + count, MPI_Count(count), MPI_FLOAT, MPI_SUM, dup);
    const std::string text = rc == MPI_SUCCESS ? "" : errorText(rc);
    const std::string peer = "waiting for rank " + std::to_string(absent);
    if (rc == MPI_SUCCESS) why = "succeeded without rank " + std::to_string(absent);
    else if (text.find(peer) == std::string::npos) why = "the error does not say \"" + peer + "\": " + text;
  }
  MPI_Barrier(MPI_COMM_WORLD);  // the absent rank waits here for the others' timeout
  check(std::string("stalled peer: allreduce without rank ") + std::to_string(absent) + " proto=" + g_proto, why);
  cudaFree(d);
  MPI_Comm_free(&dup);
}

// Host sendbuf with device recvbuf: a clear error, not a crash.
void testMixedBuffers() {
  std::vector<float> h(16, 1.0f);
  float *d;
  CUDA_OK(cudaMalloc(&d, 16 * 4));
  int rc = MPIX_Allreduce_gpu(h.data(), d, 16, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
  const bool ok = rc != MPI_SUCCESS && strstr(msg, "host memory") && strstr(msg, "device memory");
  check("mixed host/device buffers allreduce float sum count=16",
        ok ? "" : "gave rc " + std::to_string(rc) + ", \"" + msg + "\"");
  cudaFree(d);
}

// Which GPU each rank drives, printed once by rank 0 in rank order.
void reportDevices(int device, int ndev) {
  char mine[64];
  char bus[32] = "?";
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) cudaGetLastError();
  char host[MPI_MAX_PROCESSOR_NAME] = "";
  int len = 0;
  MPI_Get_processor_name(host, &len);
  snprintf(mine, sizeof mine, "%.24s GPU %d (%s)", host, device, bus);
  std::vector<char> all(size_t(g_size) * sizeof mine);
  MPI_Gather(mine, sizeof mine, MPI_CHAR, all.data(), sizeof mine, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (g_rank != 0) return;
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    snprintf(prop.name, sizeof prop.name, "?");
  }
  printf("test_gpu: %d rank(s), %d GPU(s) per node (%s), CHORUS_PROTO=%s, %s\n", g_size, ndev, prop.name, g_proto,
         MPIX_Gpu_version_string());
  for (int r = 0; r < g_size; ++r) printf("  rank %d: %s\n", r, &all[size_t(r) * sizeof mine]);
  fflush(stdout);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);

  int device = 0, ndev = 0;
  if (!selectGpuOrSkip(&device, &ndev)) return 77;
  const char *proto = getenv("CHORUS_PROTO");
  if (proto && *proto) g_proto = proto;
  reportDevices(device, ndev);
  // A failing call is a failed case, not an abort of the whole run.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CUDA_OK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));

  if (argc > 1 && !strcmp(argv[1], "--stalled-peer")) {
    testStalledPeer();
  } else {
    runSuite();
    // After the suite: capture needs the GPU resources set up by an earlier call.
    testGraphCapture();
    testTwoCommunicators();
    testMixedBuffers();
    // Barrier takes no buffer: the host path, still fine with a GPU context up.
    const int rc = MPIX_Barrier_gpu(MPI_COMM_WORLD);
    check("barrier", rc == MPI_SUCCESS ? "" : errorText(rc));
  }

  if (g_rank == 0) {
    if (g_failed) printf("FAIL: %ld of %ld cases failed (CHORUS_PROTO=%s, %d ranks)\n", g_failed, g_checked, g_proto,
                         g_size);
    else printf("PASS: %ld cases checked (CHORUS_PROTO=%s, %d ranks)\n", g_checked, g_proto, g_size);
  }
  cudaStreamDestroy(g_stream);
  if (g_send.p) cudaFree(g_send.p);
  if (g_recv.p) cudaFree(g_recv.p);
  MPI_Finalize();
  return g_failed ? 1 : 0;
}
