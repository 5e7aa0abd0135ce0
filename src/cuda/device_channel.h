// Plain, aligned PODs shared by the CUDA executor (host) and the kernels:
// the per-block channel, the kernel argument and the host-mapped error
// record.  No CUDA types, so g++ host code includes it too.
#pragma once

#include "core/common.h"
#include "transport/fifo.h"

namespace chorus {

constexpr int kCudaMaxChannels = 4;          // blocks (channels) per collective
// Threads per block.  The CPU emulation (src/cuda/emu) runs each as a host
// thread, so it takes a single warp's worth: still enough that every loop
// strides and every barrier waits for others.
#ifdef CHORUS_CUDA_EMULATION
constexpr int kCudaThreads = 32;
#else
constexpr int kCudaThreads = 512;
#endif
constexpr size_t kCudaSlotBytes = 256 * 1024;
constexpr int kCudaSlots = 4;

// Protocols of the device primitives.
//   Simple: the sender fills a slot, fences, then bumps the tail counter.
//   LL: 8-byte stores of {4 data bytes, 4 flag bytes}; the receiver polls the
//       flags, no fence.  Half the slot capacity, far lower latency.
enum class Proto : int { Simple = 0, LL = 1, Count = 2 };

// Written by the device when a block fails (timeout or abort), read by the
// host after the kernel (or before the next call, for enqueued ones): in
// host-mapped pinned memory, so the host sees it even while kernels hang.
struct DevError {
  int32_t aborted;   // 0 fine; 1 once any block failed (every block then stops)
  int32_t status;    // a chorus::Status value
  int32_t channel;   // the block that failed first
  int32_t peer;      // the rank it waited for
  int32_t forData;   // 1 waiting for data, 0 for a free slot
  int32_t pad;
  uint64_t target;   // the message count it waited for
};

// One channel: FIFO ends towards every peer (device memory; `step` fields
// persist across kernels) and private scratch.
struct DevChannel {
  FifoEnd *sendTo;    // [nranks] (self entry unused)
  FifoEnd *recvFrom;  // [nranks]
  char *scratch;      // slotBytes, for the direct algorithms
};

// The kernel argument.  `count` as in CollArgs; with splitChannels the
// vector is cut in nchannels contiguous pieces, one per block.
struct alignas(16) DevCollArgs {
  const void *sendbuf;
  void *recvbuf;
  size_t count;
  size_t sliceElems;     // elements one primitive call moves (slot capacity)
  size_t slotBytes;
  DevChannel *channels;  // [nchannels] in device memory
  DevError *error;       // device alias of the host-mapped record
  int *abortFlag;        // device memory: set once by the first failing block
  uint64_t timeoutNs;     // of the global timer; 0: wait forever
  uint32_t llFlagMask;    // 2^CHORUS_LL_FLAG_BITS - 1 (prims_device.cuh: llFlag)
  int root, rank, nranks;
  int nchannels;
  int algo;              // chorus::Algo
  int splitChannels;     // 1 for allreduce, reduce, bcast
};

}  // namespace chorus
