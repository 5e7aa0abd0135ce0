// Device FIFOs to ranks on other nodes (cuda_net.cc): the CUDA side of the
// device proxy (transport/ucx/ucx_proxy.h).  Its FIFO copies live in pinned
// host memory the GPU maps; the kernels see them as FIFO ends with a remote
// peer, the proxy carries them over UCX.
#pragma once

#include <cstddef>
#include <vector>

#include "core/common.h"
#include "transport/fifo.h"
#include "transport/transport.h"

namespace chorus {

struct CudaNet;

// Collective over links.comm, on a communicator spanning nodes: links the
// peers on other nodes in `peers` (sorted; empty: every one,
// cuda/device_links.h) for `nchannels` channels of Simple FIFOs
// (kCudaSlots x kCudaSlotBytes).  Not Ok when this rank could not; the
// caller agrees on the outcome.
Status cudaNetCreate(const PeerLinks &links, int nchannels, const std::vector<int> &peers, CudaNet **out);
// The kernel's view (device pointers) of channel `channel`'s send (or
// receive) end with `peer`, on another node.
FifoEnd cudaNetEnd(const CudaNet &net, int channel, int peer, bool send);
// The word the kernels poll (device pointer; DevCollArgs::netAbort).
const int *cudaNetAbortWord(const CudaNet &net);
// Whether the slots are in device memory (GPUDirect RDMA, CHORUS_NET_GDR).
bool cudaNetGdr(const CudaNet &net);
Status cudaNetStart(CudaNet &net);
// A launch went to a stream: the proxy looks now.
void cudaNetKick(CudaNet &net);
// The communicator's release began, this rank's kernels done
// (netProxyClosing: later failures are peers that left first).
void cudaNetClosing(CudaNet &net);
// Why the links failed, once they did (then the kernels stop).
bool cudaNetFailed(CudaNet &net, Status *status, char *text, size_t len);
// After the release barrier (cuda_executor.h: cudaDetach).
void cudaNetFree(CudaNet *net);

}  // namespace chorus
