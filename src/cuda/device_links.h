// Which ranks on other nodes the device proxy links (cuda_net.h), on every
// channel, when a communicator's device buffers first run on the kernels.
//
// A link is two FIFO copies of kCudaSlots slots in pinned host memory per
// remote peer and channel (1.06 MiB), made at set-up because a kernel needs
// every FIFO pointer before it launches.  Linking every rank on another
// node grows with the job: 17 GiB a rank at 16,384 ranks on one channel
// (chorus_sim --resources).  So beyond kCudaNetLinkBudget the proxy links
// only the peers the kernels' streaming algorithms exchange with, a fixed
// handful whatever the scale, and the algorithms that reach every peer
// (the one-shots, the alltoall) are not planned on the kernels there: the
// planner takes another of the model's candidates, and the alltoall runs
// staged through host memory (api/collectives.cc).  Bcast and reduce trees
// keep to the rootless trees' links, pointed at the root (coll/patterns.h:
// nodeTreeOnLinks), where the tree hung from the root would need links
// that move with it.
//
// Header-only and free of CUDA and I/O: the set-up, the planner's shape,
// the footprint and chorus_sim compute the same sets from the node layout.
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "coll/patterns.h"
#include "cuda/device_channel.h"
#include "transport/fifo.h"

namespace chorus {

// Pinned host memory a rank's device links may take before only the
// streaming peers are linked: every remote peer at 2 nodes of 8 GPUs (16
// channels, 136 MiB), the streaming ones from 16 nodes of 8.
constexpr size_t kCudaNetLinkBudget = size_t(160) << 20;
// One remote peer's link on one channel: a send and a receive copy.
constexpr size_t kCudaNetLinkBytes = 2 * fifoFootprint(kCudaSlotBytes, kCudaSlots);

// The most ranks on other nodes that any rank of the layout has.
inline int cudaMostRemotePeers(const NodeLayout &nodes) {
  int smallest = nodes.nranks;
  for (int node = 0; node < nodes.nnodes; ++node)
    smallest = std::min(smallest, nodes.nodeStart[node + 1] - nodes.nodeStart[node]);
  return nodes.nranks - smallest;
}

// Whether the device proxy links every remote peer (true on one node).
// `mode`: CHORUS_NET_DEVICE_LINKS (an agreed setting), auto deciding by the
// budget with the channels' upper bound (cudaChannelsFor: the same on
// every rank, before the GPUs have said how many blocks they run).
inline bool cudaNetLinksEveryPeer(const NodeLayout &nodes, const char *mode) {
  if (nodes.nnodes < 2 || strcmp(mode, "every") == 0) return true;
  if (strcmp(mode, "streaming") == 0) return false;
  return size_t(cudaMostRemotePeers(nodes)) * size_t(cudaChannelsFor(nodes.nranks)) * kCudaNetLinkBytes <=
         kCudaNetLinkBudget;
}

// The ranks on other nodes that `rank`'s kernels exchange with in the
// streaming algorithms on `nchannels` channels, sorted: each channel's
// ring neighbours (the node-ordered ring with each node's ranks rotated by
// the channel, as cuda_executor.cc's copyNodeLayout builds it), the rank-
// order neighbours (the hierarchical allreduce's tail), the parent and
// children in both node trees of the allreduce (rootless), and on nodes of
// equal size the hierarchy's rail neighbours (local rank i of the nodes
// before and after).  Symmetric: q is in rank's set iff rank is in q's,
// so both ends of every link make it.
inline std::vector<int> cudaStreamingPeers(const NodeLayout &nodes, int rank, int nchannels) {
  std::vector<int> peers;
  const int n = nodes.nranks, nn = nodes.nnodes;
  const int node = nodes.nodeOf[rank];
  auto add = [&](int q) {
    if (q >= 0 && q != rank && nodes.nodeOf[q] != node) peers.push_back(q);
  };
  auto sizeOf = [&](int k) { return nodes.nodeStart[k + 1] - nodes.nodeStart[k]; };
  const int first = nodes.nodeStart[node], size = sizeOf(node), local = nodes.where[rank] - first;
  // Channel c lists node k's ranks from local index c mod size: rank sits
  // at position (local - c) mod size, and its neighbours across nodes are
  // the last of the node before and the first of the node after.
  for (int c = 0; c < nchannels; ++c) {
    const int at = ((local - c) % size + size) % size;
    if (at == size - 1) {
      const int next = (node + 1) % nn;
      add(nodes.order[nodes.nodeStart[next] + c % sizeOf(next)]);
    }
    if (at == 0) {
      const int prev = (node + nn - 1) % nn, prevSize = sizeOf(prev);
      add(nodes.order[nodes.nodeStart[prev] + (prevSize - 1 + c) % prevSize]);
    }
  }
  add((rank + 1) % n);
  add((rank + n - 1) % n);
  for (int which = 0; which < 2; ++which) {
    const BinaryTree t = nodeTree(which, rank, -1, nodes);
    add(t.parent);
    for (int i = 0; i < t.nchildren; ++i) add(t.children[i]);
  }
  if (equalNodes(nodes)) {
    add(nodes.order[nodes.nodeStart[(node + 1) % nn] + local]);
    add(nodes.order[nodes.nodeStart[(node + nn - 1) % nn] + local]);
  }
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  return peers;
}

}  // namespace chorus
