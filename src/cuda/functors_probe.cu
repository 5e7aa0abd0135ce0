// functors_probe.cu - compiles coll/lowp.h and coll/functors.h as device
// code: one tiny elementwise kernel per valid (type, op) pair, from the same
// IsValidTypeOp filter the kernel table uses.  It proves that nvcc accepts
// the headers (every functor, finalize and reduceInto on the device); the
// kernels also let a GPU test compare device results with the host
// functors bit for bit.
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "coll/functors.h"
#include "coll/lowp.h"
#include "core/datatype.h"
#include "cuda/device_lang.h"

namespace chorus {
namespace {

// dst[i] = finalize(Func(a[i], b[i]), nranks), grid-stride.
template <typename T, typename Func>
__global__ void reduceKernel(T *dst, const T *a, const T *b, size_t n, int nranks) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    T v = Func()(a[i], b[i]);
    if (Func::kNeedsFinalize) v = Func::finalize(v, nranks);
    dst[i] = v;
  }
}

// The same through reduceInto, one thread per contiguous piece.
template <typename T, typename Func>
__global__ void reduceIntoKernel(T *dst, const T *a, const T *b, size_t n) {
  size_t threads = size_t(gridDim.x) * blockDim.x;
  size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  size_t per = (n + threads - 1) / threads;
  size_t begin = t * per < n ? t * per : n;
  size_t count = begin + per < n ? per : n - begin;
  reduceInto<T, Func>(dst + begin, a + begin, b + begin, count);
}

// Launches reduceKernel<T, Func> (reduceIntoKernel with `into`) on 64
// blocks of 256 threads, typed, so it needs no cudaLaunchKernel.
using ProbeLaunch = cudaError_t (*)(void *dst, const void *a, const void *b, size_t n, int nranks, bool into,
                                    cudaStream_t stream);

template <typename T, typename Func>
cudaError_t launchProbe(void *dstArg, const void *aArg, const void *bArg, size_t n, int nranks, bool into,
                        cudaStream_t stream) {
  const unsigned threads = 256, blocks = 64;
  T *dst = static_cast<T *>(dstArg);
  const T *a = static_cast<const T *>(aArg), *b = static_cast<const T *>(bArg);
  if (into) CHORUS_LAUNCH((reduceIntoKernel<T, Func>), blocks, threads, 0, stream, dst, a, b, n);
  else CHORUS_LAUNCH((reduceKernel<T, Func>), blocks, threads, 0, stream, dst, a, b, n, nranks);
  return cudaGetLastError();
}

struct ProbeEntry {
  ProbeLaunch launch;  // null for an invalid pair
};

template <DataType D, RedOp O>
ProbeEntry probeEntry() {
  if constexpr (IsValidTypeOp<D, O>::value) {
    using T = typename TypeOf<D>::type;
    using Func = typename FuncOf<O, T>::type;
    return ProbeEntry{&launchProbe<T, Func>};
  } else {
    return ProbeEntry{nullptr};
  }
}

constexpr size_t kProbePairs = size_t(kNumReducibleTypes) * size_t(kNumRedOps);

template <size_t... I>
const ProbeEntry *probeTable(std::index_sequence<I...>) {
  static const ProbeEntry table[] = {probeEntry<DataType(I / kNumRedOps), RedOp(I % kNumRedOps)>()...};
  return table;
}

const ProbeEntry &probeLookup(int type, int op) {
  return probeTable(std::make_index_sequence<kProbePairs>())[size_t(type) * kNumRedOps + size_t(op)];
}

}  // namespace
}  // namespace chorus

// Number of (type, op) pairs that have a probe kernel (118 with MPI's rules).
extern "C" int chorusFunctorsProbeCount() {
  int count = 0;
  for (int t = 0; t < chorus::kNumReducibleTypes; ++t)
    for (int o = 0; o < chorus::kNumRedOps; ++o) count += chorus::probeLookup(t, o).launch != nullptr;
  return count;
}

// dst[i] = finalize(op(a[i], b[i]), nranks) on the device, for device
// buffers of n elements of `type`.  Returns 0, or -1 for an invalid pair or a
// failed launch.  useReduceInto selects the reduceInto path instead.
extern "C" int chorusFunctorsProbeLaunch(int type, int op, void *dst, const void *a, const void *b, size_t n,
                                         int nranks, int useReduceInto, cudaStream_t stream) {
  if (type < 0 || type >= chorus::kNumReducibleTypes || op < 0 || op >= chorus::kNumRedOps) return -1;
  const chorus::ProbeEntry &e = chorus::probeLookup(type, op);
  if (!e.launch) return -1;
  if (n == 0) return 0;
  if (e.launch(dst, a, b, n, nranks, useReduceInto != 0, stream) != cudaSuccess) return -1;
  return 0;
}
