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
#include <cmath>
#include <cstring>
#include <vector>

#include "coll/algorithms.h"
#include "coll/patterns.h"
#include "cuda/device_channel.h"
#include "transport/fifo.h"

namespace chorus {

// Pinned host memory a rank's links to every remote peer may take: 2 nodes
// of 8 GPUs on 16 channels (136 MiB), 3 on 8; from 4 nodes of 8 the
// streaming peers' links leave more channels (cudaDeviceWiring).
constexpr size_t kCudaNetLinkBudget = size_t(160) << 20;
// Pinned host memory the streaming peers' links may take on all channels
// in a communicator of `nranks`: what the by-rank tables, which grow by
// about 1.1 KiB a rank, leave of 48 MiB.  With the shm segment and the
// host path's FIFO copies (about 12 MiB on the busiest rank), a rank stays
// under 64 MiB of host memory up to 16,384 ranks (issue 31's goal;
// chorus_sim --resources): 8 channels on the 5 peers of 4 nodes of 8 GPUs
// (one per NIC), 6 on the busiest rank's 7 from 16 nodes, 4 at 16,384.
inline size_t cudaStreamingLinkBudget(int nranks) {
  const size_t tables = size_t(nranks) * 1152, whole = size_t(48) << 20, least = size_t(8) << 20;
  return tables + least < whole ? whole - tables : least;
}
// One remote peer's link on one channel: a send and a receive copy.
constexpr size_t kCudaNetLinkBytes = 2 * fifoFootprint(kCudaSlotBytes, kCudaSlots);

// The most ranks on other nodes that any rank of the layout has.
inline int cudaMostRemotePeers(const NodeLayout &nodes) {
  int smallest = nodes.nranks;
  for (int node = 0; node < nodes.nnodes; ++node)
    smallest = std::min(smallest, nodes.nodeStart[node + 1] - nodes.nodeStart[node]);
  return nodes.nranks - smallest;
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

// The rank whose streaming peers on `nchannels` channels are the most, and
// their count (the first such rank): where the links are counted, and the
// rank chorus_sim --resources samples.  Scans every rank (about 13 ms at
// 16,384 ranks).
struct BusiestLinks {
  int rank;
  size_t peers;
};
inline BusiestLinks cudaBusiestStreamingRank(const NodeLayout &nodes, int nchannels) {
  BusiestLinks most{0, 0};
  for (int r = 0; r < nodes.nranks; ++r) {
    const size_t peers = cudaStreamingPeers(nodes, r, nchannels).size();
    if (peers > most.peers) most = {r, peers};
  }
  return most;
}

// A communicator's kernels on a layout: their channels, and whether the
// device proxy links every remote peer (true on one node) or only the
// streaming algorithms' peers.  Computed from the layout and `mode`
// (CHORUS_NET_DEVICE_LINKS, an agreed setting), so the same on every rank,
// in the planner's shape and in chorus_sim, before the GPUs have said how
// many blocks they run (cuda_executor.cc may lower the channels further).
//
// The channels are what the device memory allows (cudaChannelsFor, by the
// node's size) and what the pinned links allow: every remote peer on each
// channel within kCudaNetLinkBudget, or else the streaming peers on each
// channel within cudaStreamingLinkBudget, spread evenly over the nodes'
// NICs.  Under `auto`, every peer is linked when that leaves at least the
// channels the streaming links would.
struct DeviceWiring {
  int channels;
  bool everyPeer;
  // The most channels a bcast or reduce tree across nodes runs on
  // (cudaRootedTreeChannels); 0: as many as the call's size asks for.
  int rootedTreeChannels = 0;
};

// A block (channel) keeps kCudaRoundBytes of loads in flight per input
// (device_channel.h): ~25 GB/s over NVLink's ~1 us by Little's law (32 KiB
// at 512 threads), a design figure no GPU has measured.
constexpr double kCudaChannelBytesPerUs = 25000.0;

// A bcast or reduce tree across nodes runs every channel on the same tree
// (bcast_tree.h, reduce_tree.h), so between nodes the channels share one
// NIC at each hop and add no bandwidth there; what they add is width to
// the slice that each hop passes on whole, and a tree of 13 hops then
// pipelines 512 KiB in one slice instead of four (chorus_sim, 64 x 8 H100:
// 166 us on 4 channels against 88 on one).  In a node each channel adds its
// block's bandwidth, so the tree takes the channels whose blocks together
// keep up with one NIC, and no more: 2 on 400 Gb/s NICs, 1 on 200 Gb/s.
// `nicBytesPerUs` is agreed by every rank (the slowest node's); 0, not
// known: no bound.
inline int cudaRootedTreeChannels(double nicBytesPerUs, int channels) {
  if (!(nicBytesPerUs > 0) || nicBytesPerUs >= kCudaChannelBytesPerUs * channels) return 0;
  return std::max(1, std::min(channels, int(std::ceil(nicBytesPerUs / kCudaChannelBytesPerUs))));
}
// The kernels across GPU nodes of their own whose NICs are known, from
// the figures every rank agreed (the slowest node's, bytes per us: its
// NICs together, one NIC, the slowest GPU pair's link): what the planner
// reads of them (coll/tuner_kernels.cc), and the wiring's tree channels.
// comm/context.cc and chorus_sim both fill the shape here, so that the
// simulator plans on the library's own figures.
inline void setKernelsNetwork(PlanShape &shape, DeviceWiring &wiring, double nodeNetBytesPerUs, double nicBytesPerUs,
                              double gpuLinkBytesPerUs) {
  shape.kernelsNodeNetBytesPerUs = nodeNetBytesPerUs;
  shape.kernelsNicBytesPerUs = nicBytesPerUs;
  shape.kernelsNodeLinkBytesPerUs = gpuLinkBytesPerUs;
  shape.kernelsChannels = wiring.channels;
  // A call streams a full slot on each channel: 2 MiB on 16 channels, 768
  // KiB on the 6 the streaming links leave on 16 nodes of 8; a bcast or
  // reduce tree on its own channels (0: no bound, the others' slice).
  shape.kernelsSliceBytes = double(kCudaSlotBytes) * wiring.channels;
  shape.kernelsFifoSlots = kCudaSlots;
  wiring.rootedTreeChannels = cudaRootedTreeChannels(nicBytesPerUs, wiring.channels);
  shape.kernelsTreeSliceBytes = double(kCudaSlotBytes) * wiring.rootedTreeChannels;
}

// On one node of `nranks`: the device's bound, every peer by IPC.
inline DeviceWiring cudaOneNodeWiring(int nranks) { return {cudaChannelsFor(nranks, nranks), true}; }
inline DeviceWiring cudaDeviceWiring(const NodeLayout &nodes, const char *mode) {
  int largestNode = 1, smallestNode = nodes.nranks;
  for (int node = 0; node < nodes.nnodes; ++node) {
    largestNode = std::max(largestNode, nodes.nodeStart[node + 1] - nodes.nodeStart[node]);
    smallestNode = std::min(smallestNode, nodes.nodeStart[node + 1] - nodes.nodeStart[node]);
  }
  if (nodes.nnodes < 2) return cudaOneNodeWiring(nodes.nranks);
  const int device = cudaChannelsFor(largestNode, nodes.nranks);
  // Channel c of a ring enters a node through the NIC of its local rank
  // c mod m (cuda_executor.cc, copyNodeLayout): from m channels on, a
  // multiple of m, so that no NIC carries a channel more than another (5
  // channels on nodes of 4 GPUs and NICs put two on one NIC and took 1.3x
  // the time of 4, chorus_sim 16 x 4 GH200 at 128 MiB).
  auto fitting = [&](size_t budget, size_t peers) {
    const size_t fit = budget / (std::max<size_t>(peers, 1) * kCudaNetLinkBytes);
    const int channels = int(std::max<size_t>(1, std::min(fit, size_t(device))));
    return smallestNode > 1 && channels >= smallestNode ? channels / smallestNode * smallestNode : channels;
  };
  const int every = fitting(kCudaNetLinkBudget, size_t(cudaMostRemotePeers(nodes)));
  const bool streamingAsked = strcmp(mode, "streaming") == 0;
  // Under auto, every peer at the device's bound leaves nothing to gain:
  // no scan (2 nodes of 8, the common small job).
  if (strcmp(mode, "every") == 0 || (!streamingAsked && every == device)) return {every, true};
  // The streaming peers grow with the channels (each channel's ring
  // neighbours): counted at the most, so any fewer channels fit too.
  const size_t streamingPeers = cudaBusiestStreamingRank(nodes, device).peers;
  const int streaming = fitting(cudaStreamingLinkBudget(nodes.nranks), streamingPeers);
  if (streamingAsked || every < streaming) return {streaming, false};
  return {every, true};
}

}  // namespace chorus
