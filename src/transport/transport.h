// A transport connects this rank to its peers: a small table of operations,
// tried in priority order; the first whose canConnect accepts every peer
// wins (shm inside a node today; cuda_ipc and ucx plug in here).
#pragma once

#include "core/common.h"
#include "transport/fifo.h"

namespace chorus {

struct Context;

// What each rank publishes in the bootstrap allgather: one POD per rank.
constexpr int kShmNameMax = 64;
struct PeerInfo {
  uint64_t hostHash;   // identifies the node
  int32_t pid;
  int32_t nodeRank;    // rank within the node communicator
  char shmName[kShmNameMax];  // this rank's inbound FIFO segment (shm)
};

struct TransportOps {
  const char *name;
  // Whether this transport can link `self` and `peer`.
  bool (*canConnect)(const PeerInfo &self, const PeerInfo &peer);
  // Create this rank's local resources and describe them in `self`.
  Status (*setup)(Context &ctx, PeerInfo &self);
  // Map the peers' resources (all ranks' PeerInfo known) and fill
  // ctx.sendTo / ctx.recvFrom for every peer.
  Status (*connect)(Context &ctx, const PeerInfo *all);
  // Called after every rank has connected (a barrier separates the two),
  // e.g. to unlink names so nothing leaks if a process dies.
  Status (*postConnect)(Context &ctx);
  Status (*free)(Context &ctx);
};

extern const TransportOps kShmTransport;

}  // namespace chorus
