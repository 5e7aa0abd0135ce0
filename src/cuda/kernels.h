// Launchers of the collective kernels: host-callable, return a Status, log
// CUDA failures with the failing call.  Implemented in kernels*.cu.
#pragma once

#include <cuda_runtime.h>

#include "coll/algorithms.h"
#include "cuda/device_channel.h"

namespace chorus {

struct LaunchRequest {
  Coll coll;
  DataType type;  // Bytes for bcast, allgather, alltoall (counts in bytes then)
  RedOp op;
  Proto proto;
  int nblocks;    // channels in use, <= kCudaMaxChannels
  DevCollArgs args;
};

// Launch the kernel of `req` on `stream`.  Status::Unsupported when that
// (type, op) kernel is not instantiated (CHORUS_CUDA_DEV_BUILD).
Status launchCollective(const LaunchRequest &req, cudaStream_t stream);

// One per kernel group (kernels_<group>.cu), so the groups compile in
// parallel; dispatched from the type table in kernels.cu.
template <int Group>
Status launchKernelGroup(const LaunchRequest &req, cudaStream_t stream);
template <> Status launchKernelGroup<0>(const LaunchRequest &, cudaStream_t);  // copy collectives
template <> Status launchKernelGroup<1>(const LaunchRequest &, cudaStream_t);  // float, double
template <> Status launchKernelGroup<2>(const LaunchRequest &, cudaStream_t);  // half, bf16, fp8
template <> Status launchKernelGroup<3>(const LaunchRequest &, cudaStream_t);  // 8/16-bit integers
template <> Status launchKernelGroup<4>(const LaunchRequest &, cudaStream_t);  // 32/64-bit integers
template <> Status launchKernelGroup<5>(const LaunchRequest &, cudaStream_t);  // MINLOC/MAXLOC pairs

}  // namespace chorus
