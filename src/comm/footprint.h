// What a communicator costs each rank in memory and in set-up traffic,
// computed by the code that sizes it (the wiring, the shm segment's
// layout, the ucx link copies, the device FIFO region), so that chorus_sim
// predicts it for layouts this machine cannot run (issue 31) and the set-up
// logs it (CHORUS_DEBUG=INFO, INIT) for the layout it runs.
#pragma once

#include <cstddef>

namespace chorus {

struct Context;

struct CommFootprint {
  int nranks = 0, remotePeers = 0;
  // Host memory private to the rank: the communicator's by-rank tables
  // (the context's, the transports' states'), sized to nranks at set-up.
  size_t tableBytes = 0;
  // Host shared memory this rank creates: its segment of inbound FIFOs from
  // the ranks of its node (the peers' segments it maps are theirs).
  size_t shmSegmentBytes = 0;
  // Across nodes, FIFO copies made when a link is first used: the remote
  // peers the streaming algorithms link this rank to (rings, trees, the
  // hierarchy's groups), and what every remote peer would take (an
  // alltoall, the all-peer algorithms, CHORUS_NET_CONNECT=eager).
  int bulkNetPeers = 0;
  size_t bulkNetBytes = 0, allNetBytes = 0;
  // The links once an alltoall has run as the planner takes it: every
  // remote peer while their FIFO copies fit (coll/algorithms.h:
  // allPeerLinksFit), else the streaming ones and Bruck's (rank +- 2^k).
  int alltoallNetPeers = 0;
  size_t alltoallNetBytes = 0;
  // What the CUDA executor adds for device buffers (the kernels), sized by
  // its own code: its channels (cudaDeviceWiring), the device memory of its
  // inbound FIFO region (a pair per peer on the node and channel,
  // cudaFifoRegionBytes) and of its FIFO ends' table (every rank, on each
  // channel: cudaEndsBytes), and across nodes the device
  // links' FIFO copies, which the proxy (transport/ucx/ucx_proxy.h) makes
  // at set-up for its linked peers (every remote one, or the streaming
  // algorithms' few: cuda/device_links.h) on every channel, in pinned host
  // memory (under GPUDirect RDMA the slots of these copies are device
  // memory instead).
  int deviceChannels = 0, deviceLinkedPeers = 0;
  size_t deviceFifoBytes = 0, deviceEndsBytes = 0, deviceLinkBytes = 0;
  // One rank's PeerInfo: its block of the set-up's second allgather.
  size_t peerInfoBytes = 0;

  // Host memory in all, linking the bulk peers or every remote peer.
  size_t hostBytes(bool everyPeer) const {
    return tableBytes + shmSegmentBytes + (everyPeer ? allNetBytes : bulkNetBytes);
  }
  size_t hostBytesWithAlltoall() const { return tableBytes + shmSegmentBytes + alltoallNetBytes; }
};

// The footprint of rank ctx.rank of a wired communicator (wireCommunicator,
// comm/context.h).
CommFootprint commFootprint(const Context &ctx);

}  // namespace chorus
