// cuda_ipc transport: device FIFOs in each rank's GPU memory, exported with
// CUDA IPC and mapped by the node peers (NVLink or PCIe P2P, or the same GPU
// when several ranks share one).  Set up lazily, on the first call with
// device buffers, by the CUDA executor; host-only programs never get here.
#pragma once

#include "transport/transport.h"

struct CUstream_st;

namespace chorus {

struct CudaIpcState;

// Zero `bytes` of device memory at `local` (the caller's: the CUDA
// executor takes it from its pool, cuda/device_pool.h, and gives it back)
// for this rank's inbound FIFOs on the current device and describe it (IPC handle, device, bus id) in `self`.
// Zeroed on `stream` (a private non-blocking one), which it synchronises.
Status cudaIpcSetup(void *local, size_t bytes, CUstream_st *stream, PeerInfo &self, CudaIpcState **out);
// Map every peer's FIFO memory (all[] from the allgather after setup).
Status cudaIpcConnect(CudaIpcState &st, const PeerInfo *all, int nranks, int self);
char *cudaIpcLocal(const CudaIpcState &st);
char *cudaIpcPeer(const CudaIpcState &st, int peer);
// Unmap the peers (teardown's first half: before the barrier that lets
// every rank give back its memory, cuda_executor.cc).
void cudaIpcUnmapPeers(CudaIpcState &st);
// Unmap what is still mapped and release the state (not the local memory,
// which is the caller's).
void cudaIpcFree(CudaIpcState *st);

bool cudaIpcCanConnect(const PeerInfo &self, const PeerInfo &peer);

}  // namespace chorus
