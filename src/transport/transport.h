// A transport connects this rank to its peers: a small table of operations.
// Each peer is linked by the first transport whose canConnect accepts it:
// shm inside a node, ucx between nodes (cuda_ipc links device FIFOs).
#pragma once

#include "core/common.h"
#include "transport/fifo.h"

namespace chorus {

struct Context;

// What each rank publishes in the bootstrap allgather: one POD per rank.
constexpr int kShmNameMax = 64;
constexpr int kIpcHandleBytes = 64;   // sizeof(cudaIpcMemHandle_t), checked in cuda_ipc.cc
constexpr int kBusIdMax = 16;
constexpr int kNetAddressMax = 512;  // a UCX worker's network address (ucx)
struct PeerInfo {
  uint64_t hostHash;   // identifies the node (CHORUS_HOSTID, or host name and boot id)
  int32_t pid;
  int32_t nodeRank;    // rank within the node communicator
  uint64_t cmaProbe;   // address of this process's cmaProbeWord (transport/shm/cma.h)
  char shmName[kShmNameMax];  // this rank's inbound FIFO segment (shm)
  // cuda_ipc: filled only when device buffers are first used on the
  // communicator (a second allgather then refreshes the table).
  int32_t cudaDevice;  // valid when hasIpc
  int32_t hasIpc;      // 1 once ipcHandle is valid
  char busId[kBusIdMax];                  // PCI bus id of the GPU, for logs
  unsigned char ipcHandle[kIpcHandleBytes];  // this rank's inbound device FIFOs
  // ucx: this rank's worker address, when some peer is on another node.
  int32_t netAddrLen;
  char netAddr[kNetAddressMax];
};

// Each rank's progress through its collectives, at the start of its shm
// segment.  The owner writes it on every call (its own cache line, which
// nobody reads while things go well); a peer on its node reads it only
// after a collective failed, to name who never entered the call.
struct alignas(kFifoAlign) RankStatus {
  uint64_t seq;    // the last collective entered (TraceEntry::seq)
  uint64_t state;  // a TraceState
};
constexpr size_t kRankStatusBytes = sizeof(RankStatus);

struct TransportOps {
  const char *name;
  // Whether this transport can link `self` and `peer`.
  bool (*canConnect)(const PeerInfo &self, const PeerInfo &peer);
  // Create this rank's local resources and describe them in `self`.
  Status (*setup)(Context &ctx, PeerInfo &self);
  // Map the peers' resources (all ranks' PeerInfo known) and fill
  // ctx.sendTo / ctx.recvFrom for every peer it can connect.
  Status (*connect)(Context &ctx, const PeerInfo *all);
  // Called after every rank has connected (a barrier separates the two),
  // e.g. to unlink names so nothing leaks if a process dies.
  Status (*postConnect)(Context &ctx);
  // Optional: start what free() must wait for without blocking, so that a
  // rank releasing several contexts at once (MPI_Finalize) can start every
  // one before it waits for any, in whatever order its contexts are kept.
  void (*beginFree)(Context &ctx);
  Status (*free)(Context &ctx);
};

extern const TransportOps kShmTransport;

}  // namespace chorus
