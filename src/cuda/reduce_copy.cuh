// The data mover of the Simple protocol: fold the inputs of one step and
// store the result to every output, by every thread of a block.  Apart from
// the primitives (prims_device.cuh) so that the reduce-copy benchmark
// (tests/gpu/reduce_copy_bench.cu) drives exactly the loop the kernels run.
#pragma once

#include <cuda_runtime.h>

#include "coll/functors.h"

namespace chorus {

namespace devprims {

// Raw bits of one element, loaded bypassing L1 (peers write FIFO slots
// behind the cache's back).
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

// out[*][i] = finalize?(fold(in[*][i])) for i < n, by every thread of the
// block (strided).  Inputs fold left to right, as on the host.  16-byte
// vector loads and stores when every pointer is 16-byte aligned, element by
// element otherwise and for the tail.  Also driven by the reduce-copy
// benchmark (tests/gpu/reduce_copy_bench.cu).
template <typename T, typename Func>
__device__ void reduceCopy(const T *const *in, int nin, T *const *out, int nout, size_t n, bool doFinal,
                           int nranks) {
  Func func;
  doFinal = Func::kNeedsFinalize && doFinal;
  bool vec = true;
  for (int i = 0; i < nin; ++i) vec = vec && aligned16(in[i]);
  for (int i = 0; i < nout; ++i) vec = vec && aligned16(out[i]);
  constexpr int kPer = 16 / sizeof(T);
  size_t done = 0;
  if (vec) {
    const size_t nvec = n / kPer;
    for (size_t v = threadIdx.x; v < nvec; v += blockDim.x) {
      Vec16<T> acc, x;
      acc.raw = __ldcv(reinterpret_cast<const uint4 *>(in[0]) + v);
      for (int i = 1; i < nin; ++i) {
        x.raw = __ldcv(reinterpret_cast<const uint4 *>(in[i]) + v);
#pragma unroll
        for (int k = 0; k < kPer; ++k) acc.elem[k] = func(acc.elem[k], x.elem[k]);
      }
      if (doFinal) {
#pragma unroll
        for (int k = 0; k < kPer; ++k) acc.elem[k] = Func::finalize(acc.elem[k], nranks);
      }
      for (int o = 0; o < nout; ++o) reinterpret_cast<uint4 *>(out[o])[v] = acc.raw;
    }
    done = nvec * kPer;
  }
  for (size_t e = done + threadIdx.x; e < n; e += blockDim.x) {
    T acc = loadElem(in[0] + e);
    for (int i = 1; i < nin; ++i) acc = func(acc, loadElem(in[i] + e));
    if (doFinal) acc = Func::finalize(acc, nranks);
    for (int o = 0; o < nout; ++o) out[o][e] = acc;
  }
}

}  // namespace devprims

}  // namespace chorus
