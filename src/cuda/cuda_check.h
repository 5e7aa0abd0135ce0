// CHORUS_CUDACHECK: run a CUDA runtime call; on failure log the call, the
// CUDA error name and string with file:line, and return Status::CudaError.
// Host code only (g++ with the CUDA headers, or nvcc host code).
#pragma once

#include <cuda_runtime.h>

#include "core/common.h"
#include "core/log.h"

#define CHORUS_CUDACHECK(call)                                                                          \
  do {                                                                                                  \
    cudaError_t chorus_ce_ = (call);                                                                    \
    if (chorus_ce_ != cudaSuccess) {                                                                    \
      CHORUS_WARN("CUDA call %s failed: %s (%s)", #call, cudaGetErrorName(chorus_ce_),                 \
                  cudaGetErrorString(chorus_ce_));                                                      \
      return ::chorus::Status::CudaError;                                                               \
    }                                                                                                   \
  } while (0)

// The same for clean-up paths that must go on: logs and carries on.
#define CHORUS_CUDACHECK_IGNORE(call)                                                                   \
  do {                                                                                                  \
    cudaError_t chorus_ce_ = (call);                                                                    \
    if (chorus_ce_ != cudaSuccess)                                                                      \
      CHORUS_WARN("CUDA call %s failed (ignored): %s", #call, cudaGetErrorString(chorus_ce_));         \
  } while (0)
