// The data mover of the Simple protocol: fold the inputs of one step and
// store the result to every output, by every thread of a block.  Apart from
// the primitives (prims_device.cuh) so that the reduce-copy benchmark
// (tests/gpu/reduce_copy_bench.cu) drives exactly the loop the kernels run.
//
// Bandwidth by design (no GPU has measured it; perf/RESULTS.md, GPU):
// - Bytes in flight.  Little's law: a link of bandwidth B and latency L
//   needs B x L bytes outstanding; NVLink at ~450 GB/s per direction and
//   ~1 us needs ~450 KB.  Each thread issues kUnroll 16-byte loads of an
//   input before it uses the first, and the next input's loads go out
//   before the fold waits (they do not depend on it): 512 threads x 4 x 16 B
//   = 32 KiB per input per block in flight, 64 KiB for the usual two
//   inputs, and the stores of a round stay in flight while the next round
//   loads.  Channels (blocks) multiply it: kernels_impl.cuh, cuda_executor.cc.
// - Registers.  4 vectors of accumulator and 4 (8 for shifted inputs) of
//   operand are 32-48 of the 128 registers __launch_bounds__(512, 1) leaves
//   a thread; scripts/check-ptx.sh fails the build's tests on any spill.
// - Alignment.  The vector grid is aligned to one output (the last: a send
//   slot when there is one, so NVLink stores stay 16-byte wide).  Inputs
//   misaligned against it are read as two aligned vectors and shifted into
//   place, so a 1-byte offset of a user buffer costs a second (L2-hit) load
//   per vector, not 1-byte loads; outputs misaligned against it are stored
//   at their common alignment (8, 4, 2 or 1 bytes: only the local
//   destination when it and the send slot disagree).  At most ~31 bytes at
//   each end go element by element.
#pragma once

#include <cuda_runtime.h>

#include "coll/functors.h"
#include "cuda/device_channel.h"

namespace chorus {

namespace devprims {

// 16-byte vectors each thread loads per input before the first use: 4,
// or 2 for the functors whose fold of a vector is long (AVG divides every
// element, the logical ops compare each byte): with 4, their temporaries
// outgrow the 128 registers and ptxas spilled in the sm_80 allreduce
// kernels (4-36 B).  Those ops keep half the bytes in flight (16 channels
// x 16 KiB of stores, ~260 GB/s by Little's law); every other op, and the
// copy collectives, keep 4.
constexpr int kUnroll = 4;
#ifndef CHORUS_CUDA_EMULATION  // (there the geometry is chosen at run time, device_channel.h)
static_assert(kCudaRoundBytes == size_t(kCudaThreads) * kUnroll * 16, "device_channel.h sizes channels by this round");
#endif
template <typename Func>
struct LongFold {
  static constexpr bool value = Func::kNeedsFinalize;
};
template <typename T>
struct LongFold<FuncLAnd<T>> {
  static constexpr bool value = true;
};
template <typename T>
struct LongFold<FuncLOr<T>> {
  static constexpr bool value = true;
};
template <typename T>
struct LongFold<FuncLXor<T>> {
  static constexpr bool value = true;
};
template <typename Func>
constexpr int kUnrollFor = LongFold<Func>::value ? kUnroll / 2 : kUnroll;

// Raw bits of one element, loaded bypassing L1 (peers write FIFO slots
// behind the cache's back).  p must be aligned to sizeof(T).
template <typename T>
__device__ __forceinline__ T loadElem(const T *p) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16,
                "element size");
  T v;
  if constexpr (sizeof(T) == 1) {
    uint8_t b = *reinterpret_cast<const volatile uint8_t *>(p);
    memcpy(&v, &b, 1);
  } else if constexpr (sizeof(T) == 2) {
    uint16_t b = *reinterpret_cast<const volatile uint16_t *>(p);
    memcpy(&v, &b, 2);
  } else if constexpr (sizeof(T) == 4) {
    uint32_t b = __ldcv(reinterpret_cast<const unsigned int *>(p));
    memcpy(&v, &b, 4);
  } else if constexpr (sizeof(T) == 8) {
    unsigned long long b = __ldcv(reinterpret_cast<const unsigned long long *>(p));
    memcpy(&v, &b, 8);
  } else {  // the 16-byte MINLOC/MAXLOC pairs, 16-byte aligned like the C struct with a double or long
    uint4 b = __ldcv(reinterpret_cast<const uint4 *>(p));
    memcpy(&v, &b, 16);
  }
  return v;
}

template <typename T>
union Vec16 {
  uint4 raw;
  T elem[16 / sizeof(T)];
};

template <typename T>
union Vec8 {
  uint64_t raw;
  T elem[8 / sizeof(T)];
};

__device__ __forceinline__ bool aligned16(const void *p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

// A store to global memory (this GPU's or a peer's through CUDA IPC), cached
// in L2 only: st.global.cg rather than the generic st, which costs an
// address-space check, and L1 would only hold lines nobody reads again.
// (The CPU emulation's __stcg is a plain store that traps misalignment.)
template <typename W>
__device__ __forceinline__ void storeGlobal(W *p, W v) {
  __stcg(p, v);
}

// The 16 bytes that start m bytes (1..15) into the 32 bytes lo:hi, in
// registers: word selects by m's 8 and 4 bits, then a funnel shift (one
// SHF each) for the last 0-3 bytes.  m is the same in every thread, so the
// selects never diverge.
__device__ __forceinline__ uint32_t funnelRight(uint32_t lo, uint32_t hi, unsigned bits) {
  return uint32_t(((uint64_t(hi) << 32) | lo) >> bits);
}
__device__ __forceinline__ uint4 shiftBytes(uint4 lo, uint4 hi, unsigned m) {
  uint32_t w0 = lo.x, w1 = lo.y, w2 = lo.z, w3 = lo.w, w4 = hi.x, w5 = hi.y, w6 = hi.z, w7 = hi.w;
  if (m & 8) {
    w0 = w2, w1 = w3, w2 = w4, w3 = w5, w4 = w6, w5 = w7;
  }
  if (m & 4) {
    w0 = w1, w1 = w2, w2 = w3, w3 = w4, w4 = w5;
  }
  const unsigned bits = (m & 3) * 8;
  uint4 r;
  r.x = funnelRight(w0, w1, bits);
  r.y = funnelRight(w1, w2, bits);
  r.z = funnelRight(w2, w3, bits);
  r.w = funnelRight(w3, w4, bits);
  return r;
}

// Vectors v, v + stride, ... (U of them) of the grid that starts at byte
// `base` of an input: aligned loads, shifted into place when the input is
// misaligned against the grid (the aligned neighbour it also reads is
// inside the buffer: reduceCopy keeps the first and last vector scalar).
template <int U, typename T>
__device__ __forceinline__ void loadVecs(const char *base, size_t v, size_t stride, Vec16<T> *dst) {
  const unsigned m = unsigned(reinterpret_cast<uintptr_t>(base) & 15);
  if (m == 0) {
    const uint4 *a = reinterpret_cast<const uint4 *>(base);
#pragma unroll
    for (int u = 0; u < U; ++u) dst[u].raw = __ldcv(a + v + u * stride);
  } else {
    const uint4 *a = reinterpret_cast<const uint4 *>(base - m);
    uint4 lo[U], hi[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      lo[u] = __ldcv(a + v + u * stride);
      hi[u] = __ldcv(a + v + u * stride + 1);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) dst[u].raw = shiftBytes(lo[u], hi[u], m);
  }
}

// One 16-byte vector to an address aligned to W bytes only, as 16/W stores.
template <typename W>
__device__ __forceinline__ void storeSplit(char *p, uint4 v) {
  uint32_t w[4] = {v.x, v.y, v.z, v.w};
  if constexpr (sizeof(W) == 8) {
#pragma unroll
    for (int j = 0; j < 2; ++j)
      storeGlobal(reinterpret_cast<unsigned long long *>(p) + j,
                  (unsigned long long)w[2 * j] | ((unsigned long long)w[2 * j + 1] << 32));
  } else {
#pragma unroll
    for (int j = 0; j < int(16 / sizeof(W)); ++j)
      storeGlobal(reinterpret_cast<W *>(p) + j, W(w[j * sizeof(W) / 4] >> (8 * (j * sizeof(W) % 4))));
  }
}

template <int U, typename T>
__device__ __forceinline__ void storeVecs(char *base, size_t v, size_t stride, const Vec16<T> *src) {
  const unsigned m = unsigned(reinterpret_cast<uintptr_t>(base) & 15);
  uint4 *a = reinterpret_cast<uint4 *>(base);
  if (m == 0) {
#pragma unroll
    for (int u = 0; u < U; ++u) storeGlobal(a + v + u * stride, src[u].raw);
  } else if ((m & 7) == 0) {
#pragma unroll
    for (int u = 0; u < U; ++u) storeSplit<unsigned long long>(reinterpret_cast<char *>(a + v + u * stride), src[u].raw);
  } else if ((m & 3) == 0) {
#pragma unroll
    for (int u = 0; u < U; ++u) storeSplit<unsigned int>(reinterpret_cast<char *>(a + v + u * stride), src[u].raw);
  } else if ((m & 1) == 0) {
#pragma unroll
    for (int u = 0; u < U; ++u) storeSplit<unsigned short>(reinterpret_cast<char *>(a + v + u * stride), src[u].raw);
  } else {
#pragma unroll
    for (int u = 0; u < U; ++u) storeSplit<unsigned char>(reinterpret_cast<char *>(a + v + u * stride), src[u].raw);
  }
}

// U vectors per thread: every input's loads, then the fold (left to right,
// as on the host), then every output's stores.
template <int U, typename T, typename Func>
__device__ __forceinline__ void foldVecs(const T *const *in, int nin, T *const *out, int nout, size_t off, size_t v,
                                         size_t stride, bool doFinal, int nranks) {
  constexpr int kPer = 16 / sizeof(T);
  Func func;
  Vec16<T> acc[U];
  loadVecs<U>(reinterpret_cast<const char *>(in[0]) + off, v, stride, acc);
  for (int i = 1; i < nin; ++i) {
    Vec16<T> x[U];
    loadVecs<U>(reinterpret_cast<const char *>(in[i]) + off, v, stride, x);
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int k = 0; k < kPer; ++k) acc[u].elem[k] = func(acc[u].elem[k], x[u].elem[k]);
  }
  if (doFinal) {
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int k = 0; k < kPer; ++k) acc[u].elem[k] = Func::finalize(acc[u].elem[k], nranks);
  }
  for (int o = 0; o < nout; ++o) storeVecs<U>(reinterpret_cast<char *>(out[o]) + off, v, stride, acc);
}

// One element at any byte address (a user buffer need not be aligned to
// its element type): whole when it is, byte by byte when not.
template <typename T>
__device__ __forceinline__ T loadElemAny(const T *p) {
  if ((reinterpret_cast<uintptr_t>(p) & (sizeof(T) - 1)) == 0) return loadElem(p);
  unsigned char b[sizeof(T)];
  for (size_t j = 0; j < sizeof(T); ++j) b[j] = reinterpret_cast<const volatile unsigned char *>(p)[j];
  T v;
  memcpy(&v, b, sizeof(T));
  return v;
}
template <typename T>
__device__ __forceinline__ void storeElemAny(T *p, T v) {
  if ((reinterpret_cast<uintptr_t>(p) & (sizeof(T) - 1)) == 0) {
    *p = v;
    return;
  }
  unsigned char b[sizeof(T)];
  memcpy(b, &v, sizeof(T));
  for (size_t j = 0; j < sizeof(T); ++j) reinterpret_cast<unsigned char *>(p)[j] = b[j];
}

template <typename T, typename Func>
__device__ __forceinline__ void foldElem(const T *const *in, int nin, T *const *out, int nout, size_t e,
                                         bool doFinal, int nranks) {
  Func func;
  T acc = loadElemAny(in[0] + e);
  for (int i = 1; i < nin; ++i) acc = func(acc, loadElemAny(in[i] + e));
  if (doFinal) acc = Func::finalize(acc, nranks);
  for (int o = 0; o < nout; ++o) storeElemAny(out[o] + e, acc);
}

// out[*][i] = finalize?(fold(in[*][i])) for i < n, by every thread of the
// block.  Inputs fold left to right, as on the host, so results are
// bitwise the host's whatever path an element takes.  The body runs in
// 16-byte vectors on a grid aligned to the last output (see the top of the
// file), kUnrollFor<Func> per thread per round, then one per thread; the elements
// before and after it run one by one.  Also driven by the reduce-copy
// benchmark (tests/gpu/reduce_copy_bench.cu).
template <typename T, typename Func>
__device__ void reduceCopy(const T *const *in, int nin, T *const *out, int nout, size_t n, bool doFinal,
                           int nranks) {
  doFinal = Func::kNeedsFinalize && doFinal;
  constexpr size_t kSize = sizeof(T);
  const size_t nbytes = n * kSize;
  // Bytes before the grid: up to the anchor's first 16-byte boundary, when
  // that is a whole number of elements.
  const uintptr_t anchor = reinterpret_cast<uintptr_t>(out[nout - 1]);
  size_t head = (anchor & (kSize - 1)) == 0 ? (16 - (anchor & 15)) & 15 : 0;
  if (head > nbytes) head = nbytes;
  bool shifted = false;
  for (int i = 0; i < nin; ++i) shifted = shifted || ((reinterpret_cast<uintptr_t>(in[i]) + head) & 15) != 0;
  // A shifted input reads the aligned vector after each of its own: keep
  // the grid's first and last vector out so that no read leaves the buffer.
  size_t first = 0, last = (nbytes - head) / 16;
  if (shifted) {
    first = 1;
    last = last > 0 ? last - 1 : 0;
  }
  const size_t nvec = last > first ? last - first : 0;
  const size_t off = head + 16 * first;  // byte of the grid's vector 0
  const size_t e0 = nvec ? off / kSize : n, e1 = nvec ? e0 + nvec * (16 / kSize) : n;

  constexpr int U = kUnrollFor<Func>;
  const size_t tid = threadIdx.x, nt = blockDim.x;
  size_t v = tid;
  for (; v + (U - 1) * nt < nvec; v += U * nt) foldVecs<U, T, Func>(in, nin, out, nout, off, v, nt, doFinal, nranks);
  for (; v < nvec; v += nt) foldVecs<1, T, Func>(in, nin, out, nout, off, v, nt, doFinal, nranks);
  for (size_t e = tid; e < e0; e += nt) foldElem<T, Func>(in, nin, out, nout, e, doFinal, nranks);
  for (size_t e = e1 + tid; e < n; e += nt) foldElem<T, Func>(in, nin, out, nout, e, doFinal, nranks);
}

}  // namespace devprims

}  // namespace chorus
