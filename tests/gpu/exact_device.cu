// The exact mode's per-element steps (src/coll/exact_sum.h) in a kernel:
// exact-device-build.sh compiles this with nvcc, so that the one source
// the host executor runs stays device code too (issue 30: the same
// functors on host and device).  Each type's three steps, AVG's division
// included.
#include "coll/exact_sum.h"

namespace exact_device_check {

template <chorus::DataType T>
__global__ void exactSteps(const uint64_t *in, uint16_t *keys, int64_t *limbs, uint64_t *out, int n, uint64_t divisor) {
  constexpr chorus::ExactFormat f = chorus::exactFormatOf(T);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  keys[i] = chorus::exactKey(in[i], f);
  chorus::exactLimbs(in[i], keys[i], f, limbs + chorus::kExactMaxLimbs * i);
  out[i] = chorus::exactRound(limbs + chorus::kExactMaxLimbs * i, keys[i], divisor, f);
}

}  // namespace exact_device_check

template __global__ void exact_device_check::exactSteps<chorus::DataType::Float64>(const uint64_t *, uint16_t *, int64_t *, uint64_t *, int, uint64_t);
template __global__ void exact_device_check::exactSteps<chorus::DataType::Float32>(const uint64_t *, uint16_t *, int64_t *, uint64_t *, int, uint64_t);
template __global__ void exact_device_check::exactSteps<chorus::DataType::Float16>(const uint64_t *, uint16_t *, int64_t *, uint64_t *, int, uint64_t);
template __global__ void exact_device_check::exactSteps<chorus::DataType::BFloat16>(const uint64_t *, uint16_t *, int64_t *, uint64_t *, int, uint64_t);
