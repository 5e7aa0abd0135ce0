// Plain, aligned PODs shared by the CUDA executor (host) and the kernels:
// the per-block channel, the kernel argument and the host-mapped error
// record.  No CUDA types, so g++ host code includes it too.
#pragma once

#include "coll/patterns.h"
#include "core/common.h"
#include "transport/fifo.h"

#ifdef CHORUS_CUDA_EMULATION
#include <cstdlib>
#include <cstring>
#endif

namespace chorus {


// Sizes of the device engine, designed from Little's law (bytes in flight =
// bandwidth x latency), not measured: no GPU has run them yet.  The
// figures (perf/RESULTS.md, GPU) for NVLink at ~450 GB/s per direction and
// ~1 us, which needs ~450 KB in flight:
//  - a block (channel) of 512 threads, each with 4 vectors of 16 bytes per
//    input in flight (reduce_copy.cuh): 32 KiB per input, 64 KiB for the
//    two inputs of a ring step, per SM; its stores to the peer, 32 KiB a
//    round, stay in flight while it loads the next;
//  - 16 channels for large messages: 16 x 32 KiB = 512 KiB of stores to
//    the next GPU in flight, above the ~450 KB the link needs (4 channels,
//    the old maximum, had ~16 KiB per SM and 64 KiB in all: ~65-110 GB/s);
//  - 128 KiB slots, 4 per FIFO: a slot is four rounds of a block, and the
//    FIFO memory per rank, one FIFO per peer, channel and protocol (LL's
//    smaller, kCudaLLSlotBytes), stays at 16 x (nodeSize - 1) x 576 KiB:
//    63 MiB at 8 ranks (the old 256 KiB slots took 66 MiB at 4 channels
//    and would take 264 MiB at 16); larger nodes get fewer channels, to
//    keep it under kCudaFifoBudget (cudaChannelsFor).
// Threads per block: registers per thread are 65536 / 512 = 128 at one
// block per SM (__launch_bounds__(kCudaThreads, 1)); scripts/check-ptx.sh
// proves no instantiation spills.  The CPU emulation (src/cuda/emu) runs
// each thread as a host thread, so it takes a single warp's worth (still
// enough that every loop strides and every barrier waits for others) and
// 4 channels (4 ranks x 4 blocks x 32 threads on 2 cores), unless
// CHORUS_EMU_GEOMETRY=shipping asks for the GPU's 512 x 16 (8192 host
// threads a rank: slow, one CI case, tests/gpu/geometry.sh), so that the
// geometry a GPU runs executes somewhere.
#ifdef CHORUS_CUDA_EMULATION
inline bool cudaEmuShippingGeometry() {
  static const bool shipping = [] {
    const char *g = getenv("CHORUS_EMU_GEOMETRY");
    return g && strcmp(g, "shipping") == 0;
  }();
  return shipping;
}
inline const int kCudaThreads = cudaEmuShippingGeometry() ? 512 : 32;
inline const int kCudaMaxChannels = cudaEmuShippingGeometry() ? 16 : 4;
#define CHORUS_CUDA_GEOMETRY_CONST inline const
#else
constexpr int kCudaThreads = 512;
constexpr int kCudaMaxChannels = 16;  // blocks (channels) per collective
#define CHORUS_CUDA_GEOMETRY_CONST constexpr
#endif
constexpr size_t kCudaSlotBytes = 128 * 1024;
constexpr int kCudaSlots = 4;
// LL's slots: LL carries the small messages (up to 64 KiB a call under
// CHORUS_PROTO=auto, cuda_executor.cc), whose time is latency, so its slots
// need not hold what keeps a link busy: 4 of 16 KiB (8 KiB of data each,
// a line being 8 data bytes in 16) keep 32 KiB in flight per link and
// channel.  Full-size LL slots were a third of the FIFO memory; without
// them, the host FIFOs' inline slots (32 KiB a FIFO, unused by the
// kernels) and a FIFO to oneself, 8 GPUs x 16 channels take
// 16 x 7 x (512 + 64) KiB = 63 MiB a rank, headers included (was
// 2 x 16 x 8 x 544 KiB = 136 MiB).  A forced LL on a large message runs
// more, smaller steps.
constexpr size_t kCudaLLSlotBytes = 16 * 1024;
// One round of a block's loads of one input: every thread's kUnroll 16-byte
// vectors (reduce_copy.cuh asserts the 4).  32 KiB at 512 threads, 2 KiB on
// the emulation.  A channel that moves less than this per step leaves its
// SM's loads partly idle, so the block collectives (allgather,
// reduce-scatter, alltoall) give a channel no less than one round of each
// rank's block (cuda_executor.cc).
CHORUS_CUDA_GEOMETRY_CONST size_t kCudaRoundBytes = size_t(kCudaThreads) * 4 * 16;
// Device FIFO memory per rank above which a communicator gets fewer channels.
constexpr size_t kCudaFifoBudget = size_t(160) << 20;
// Protocols of the device primitives.
//   Simple: the sender fills a slot, fences, then bumps the tail counter.
//   LL: 8-byte stores of {4 data bytes, 4 flag bytes}; the receiver polls the
//       flags, no fence.  Half the slot capacity, far lower latency.
enum class Proto : int { Simple = 0, LL = 1, Count = 2 };

// A protocol's slot, and its device FIFO: a header and kCudaSlots slots
// (the host FIFOs' inline slots serve the host primitives only).  A
// channel's pair from one peer holds a FIFO of each protocol.
constexpr size_t cudaSlotBytes(Proto proto) { return proto == Proto::LL ? kCudaLLSlotBytes : kCudaSlotBytes; }
constexpr size_t cudaFifoBytes(Proto proto) { return fifoHeaderBytes() + cudaSlotBytes(proto) * size_t(kCudaSlots); }
constexpr size_t kCudaFifoPairBytes = cudaFifoBytes(Proto::Simple) + cudaFifoBytes(Proto::LL);
// The device memory a rank's channel takes: its inbound FIFOs from the
// other ranks of its node (`nodeSize`), one pair per peer (a FIFO of each
// protocol), and its table of FIFO ends towards every rank of the
// communicator (a send and a receive end per protocol: DevChannel), which
// the kernels index by rank.
inline size_t cudaEndsBytes(int nranks) { return size_t(int(Proto::Count)) * 2 * sizeof(FifoEnd) * size_t(nranks); }
inline size_t cudaChannelBytes(int nodeSize, int nranks) {
  return kCudaFifoPairBytes * size_t(nodeSize > 1 ? nodeSize - 1 : 1) + cudaEndsBytes(nranks);
}
// Channels the device memory allows a communicator of `nranks` whose
// largest node holds `nodeSize` of them: kCudaMaxChannels while a rank's
// channels fit in kCudaFifoBudget, fewer beyond, so that memory does not
// grow with the node's ranks x channels: 16 channels up to 18 ranks on a
// node, 9 at 32.  Only the node's peers have device FIFOs, so across nodes
// the count falls with the nodes' size, not the job's (the ends' table,
// 384 bytes a rank and channel, lowers it only past 16,384 ranks).  The
// device links across nodes may allow fewer (cuda/device_links.h:
// cudaDeviceWiring), and the GPU's resident blocks fewer still
// (cuda_executor.cc).
inline int cudaChannelsFor(int nodeSize, int nranks) {
  const size_t fit = kCudaFifoBudget / cudaChannelBytes(nodeSize, nranks);
  return int(fit < 1 ? 1 : fit > size_t(kCudaMaxChannels) ? size_t(kCudaMaxChannels) : fit);
}
// The device memory of a rank's inbound FIFOs from the other ranks of its
// node (`nodeSize` ranks): [protocol][channel][peer].
inline size_t cudaFifoRegionBytes(int nodeSize, int nchannels) {
  return kCudaFifoPairBytes * size_t(nchannels) * size_t(nodeSize > 1 ? nodeSize - 1 : 1);
}

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

// The kernel argument.  `count` as in CollArgs; with nchannels > 1 the
// vector, or every rank's block, is cut in nchannels pieces, one per block
// (kernels_impl.cuh: channelArgs).
struct alignas(16) DevCollArgs {
  const void *sendbuf;
  void *recvbuf;
  size_t count;
  size_t sliceElems;     // elements one primitive call moves (slot capacity)
  size_t slotBytes;
  DevChannel *channels;  // [nchannels] in device memory
  DevError *error;       // device alias of the host-mapped record
  int *abortFlag;        // device memory: set once by the first failing block
  // Host-mapped, set by the device proxy when a link to another node failed
  // (transport/ucx/ucx_proxy.h); null on one node.  Polled with abortFlag.
  const int *netAbort;
  // Several nodes: each channel's ring order of the ranks ([nchannels][n],
  // grouped by node as the host engine's, each node's ranks rotated by the
  // channel: cuda_executor.cc) and its inverse, and the node layout the
  // trees follow, in device memory; null on one node (rank order).
  const int *ringOrder;
  const int *ringWhere;
  const NodeLayout *nodes;
  // Nodes of equal size (several of them): this rank's groups for the
  // hierarchical allreduce, their ranks in device memory (kernels_impl.cuh:
  // kernel parameters, so its rings read them without registers); null
  // localRanks otherwise.
  HierarchyGroups hierarchy;
  uint64_t timeoutNs;     // of the global timer; 0: wait forever
  uint32_t llFlagMask;    // 2^CHORUS_LL_FLAG_BITS - 1 (prims_device.cuh: llFlag)
  int root, rank, nranks;
  int nchannels;
  int algo;              // chorus::Algo
  int phase;             // the hierarchical allreduce's launches: which phase (kernels_impl.cuh)
  int rootedTreeOnLinks; // CollArgs::rootedTreeOnLinks: only the streaming peers are linked
};

}  // namespace chorus
