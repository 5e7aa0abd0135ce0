// The kernels' allreduce, bcast and reduce across GPU nodes whose NICs the
// topology names: a cost model of their own, over the node's GPU links and
// NICs (the bcast and reduce below the allreduce).
//
// The host model (tuner_model.cc) charges a hop in the node at CPU shared
// memory's measured 7 GB/s and a hop between nodes at UCX tcp's, which
// describe no GPU node.  With them the kernels' plan took the tree over the
// hierarchy for a 128 MiB allreduce on 2,048 nodes of 8 H100 (chorus_sim:
// 64.1 ms against 17.8; the model's hierarchy 63.6 ms, 3.6x its time), and
// the hierarchy over the ring from 8 MiB on 2 nodes (1.15-1.38x slower).
// Here a hop in the node is NVLink's (or PCIe's) and a hop between nodes
// RDMA's, with the structure of the algorithm templates the kernels run:
//   ring: 2(n - 1) steps of a 1/n block, the slower of two bounds.  Each
//     step waits for the block the rank before it took in the step before,
//     so the steps chain through the hops a block crosses going round
//     (each node's one network hop, its m - 1 GPU hops), each its latency
//     and its transfer; and the slowest link carries a block every step.
//     Between nodes the block rides the kernels' channels, spread over the
//     node's NICs (cuda_executor.cc's rotated rings).  (A step's latency
//     added to the slowest link's transfer was 1.2-1.65x chorus_sim's
//     ring at 8-128 MiB, where the few slow hops of a ring hide the
//     latency of the many fast ones.)
//   hierarchy: the node's rings (m - 1 steps each way of bytes / m on the
//     GPU links), then the m rails' rings among the nodes at once, each
//     through its GPU's share of the node's NICs.
//   tree (allreduce_tree.h): each slice goes up both trees and down again
//     before the next: slice after slice a round trip, whose hops wait in
//     turn (three fills, as chorus_sim's CPU nodes showed) and carry the
//     slice twice each way (two halves, a head's two child nodes).
// The figures are those chorus_sim's GPU presets take (published NVLink and
// InfiniBand figures): no GPU has checked them.  Against chorus_sim's three
// GPU presets on 2 to 64 nodes, 8 B to 128 MiB, on the slices the kernels
// run (a full slot a channel), the model's time is 0.73-1.00x the
// simulated ring's, 0.91-1.64x the tree's and 0.73-1.15x the hierarchy's
// (perf/RESULTS.md), where the host model's was 2.3-92x, 0.6-12x and
// 1.25-36x.
#include <algorithm>
#include <cmath>
#include <vector>

#include "coll/algorithms.h"
#include "coll/patterns.h"

namespace chorus {

namespace {

// A kernel's store seen by its peer's kernel across NVLink, and the flag
// and credit at each end of a message.
constexpr double kGpuHopUs = 1.0;
constexpr double kGpuMessageEndUs = 0.2;
// Two GPUs of a node without NVLink: peer copies over PCIe 4 x16.
constexpr double kPcieGpuBytesPerUs = 20000.0;
// A GPU's fold of a received slice into its own, and its copy of one out
// of its FIFO, at HBM's speed (bytes out).
constexpr double kGpuFoldBytesPerUs = 1.0e6, kGpuCopyBytesPerUs = 1.5e6;

// What every algorithm's cost reads of the nodes, from the plan's shape.
struct GpuNodeLinks {
  double gpuLink;   // between two GPUs of a node, bytes/us
  double nodeNet;   // the node's NICs together
  double nic;       // one NIC (the node's share per rank when not known)
  double rail;      // a GPU's share of the NICs when all send at once
  double nics;      // NICs a node
  double channels;  // the kernels' channels
  double gpuHopUs, netHopUs;
  // A FIFO's slots in flight over a credit's round trip: the most a
  // stream of slices moves between two GPUs of a node, and through a NIC
  // (above the links' bandwidth while a call has its 16 channels).
  double fifoGpuBytesPerUs, fifoNetBytesPerUs;
  double slice;  // a call's slice over its channels (0: not known)
};

GpuNodeLinks linksOf(const PlanShape &shape) {
  GpuNodeLinks k;
  const double m = shape.maxNodeRanks;
  k.gpuLink = shape.kernelsNodeLinkBytesPerUs > 0 ? shape.kernelsNodeLinkBytesPerUs : kPcieGpuBytesPerUs;
  k.nodeNet = shape.kernelsNodeNetBytesPerUs;
  k.nic = shape.kernelsNicBytesPerUs > 0 ? std::min(shape.kernelsNicBytesPerUs, k.nodeNet) : k.nodeNet / m;
  k.rail = std::min(k.nodeNet / m, k.nic);
  k.nics = std::max(1.0, std::round(k.nodeNet / k.nic));
  k.channels = double(std::max(shape.kernelsChannels, 1));
  k.gpuHopUs = kGpuHopUs + 2 * kGpuMessageEndUs;
  k.netHopUs = kRdmaLatencyUs + 2 * kRdmaMessageEndUs;
  k.slice = shape.kernelsSliceBytes;
  const double inFlight = shape.kernelsFifoSlots > 0 && shape.kernelsSliceBytes > 0
                              ? shape.kernelsFifoSlots * shape.kernelsSliceBytes
                              : 0;
  k.fifoGpuBytesPerUs = inFlight > 0 ? inFlight / (2 * k.gpuHopUs) : k.gpuLink;
  k.fifoNetBytesPerUs = inFlight > 0 ? inFlight / (2 * k.netHopUs) : k.nic;
  return k;
}

// The largest message a stream of `bytes` moves: a slice, or all of it.
double sliceOf(const GpuNodeLinks &k, double bytes) { return k.slice > 0 ? std::min(bytes, k.slice) : bytes; }

// `bytes` moved a slice at a time, at `sliceUs(b)` for a slice of b bytes:
// the full slices, then the partial last one at its own size.
template <class SliceUs>
double overSlices(const GpuNodeLinks &k, double bytes, SliceUs sliceUs) {
  const double slice = sliceOf(k, bytes), fullSlices = slice > 0 ? std::floor(bytes / slice) : 1.0;
  const double rest = bytes - fullSlices * slice;
  return fullSlices * sliceUs(slice) + (rest > 0 ? sliceUs(rest) : 0.0);
}

// A ring's (or chain's) step between nodes: channel c's share enters the
// next node through the NIC of its local rank c (cuda_executor.cc,
// copyNodeLayout), which m / nics ranks share, so the busiest NIC's
// channels set the pace (chorus_sim, 4 x 8 H100, 9 channels: 225 GB/s a
// step, two on one NIC; 16 x 8 A100 with 4 NICs, 2 channels: 25, both on
// the first).
double ringNetBytesPerUs(const GpuNodeLinks &k, double m) {
  const double nicsUsed = std::min({k.nics, m, std::ceil(std::min(k.channels, m) / (m / k.nics))});
  return k.nic * k.channels / std::ceil(k.channels / nicsUsed);
}

}  // namespace

double kernelsAllreduceCostUs(Algo algo, size_t bytesArg, const PlanShape &shape) {
  if (shape.nnodes < 2 || shape.kernelsNodeNetBytesPerUs <= 0) return kCostNotApplicable;
  const double bytes = double(bytesArg), n = shape.nranks, nodes = shape.nnodes, m = shape.maxNodeRanks;
  // (The hierarchy's rails each take a GPU's share of the node's NICs;
  // the tree's heads one NIC.)
  const GpuNodeLinks k = linksOf(shape);
  const double gpuLink = k.gpuLink, nic = k.nic, rail = k.rail, gpuHopUs = k.gpuHopUs, netHopUs = k.netHopUs;
  switch (algo) {
    case Algo::Ring: {
      const double netBytesPerUs = ringNetBytesPerUs(k, m), block = bytes / n;
      const double netShare = nodes / n;
      // One slice of a step: the slower of its hops' chain and its slowest
      // link.  A step's slices each wait for the one the rank before took
      // in the step before, so a block of several slices pays the chain's
      // latency for each (chorus_sim, 4 x 8 H100: a block of one slice and
      // a bit took 1.5x the time of one slice, of two 2x).
      auto sliceUs = [&](double b) {
        const double chainUs = netShare * (netHopUs + b / netBytesPerUs) + (1 - netShare) * (gpuHopUs + b / gpuLink);
        return std::max(chainUs, b / std::min(gpuLink, netBytesPerUs));
      };
      return 2 * (n - 1) * overSlices(k, block, sliceUs);
    }
    case Algo::Hierarchical:
      if (!shape.equalNodes) return kCostNotApplicable;
      // Fewer elements than the node has ranks: the flat ring carries it
      // all (allreduce_hierarchical.h), as in the host model.
      if (bytes < kPlannedElementBytes * m) return kernelsAllreduceCostUs(Algo::Ring, bytesArg, shape);
      // In the node each step's fold (reduce-scatter) or copy (allgather)
      // waits for its block, which the NICs' ring does not wait for
      // (chorus_sim, 2 x 8 H100, 128 MiB: 1,080 us, 0.82x without them).
      // Each phase moves its blocks a slice at a time: a message's ends
      // for each slice past the first, and at most a FIFO's slots a
      // credit's round trip (on the one channel left from 512 ranks, 187
      // GB/s in the node where NVLink gives 450).  Without them the model
      // was 0.40x chorus_sim's 4.7 ms on 64 x 8 H100 at 128 MiB; 0.76x
      // with them.
      // Rails that share a NIC (8 A100 on 4) take turns on it: a step is
      // the slower of one rail's hop and transfer and the NIC's turns, not
      // their sum (chorus_sim, 32 x 8 A100 at 32 MiB: 975 us, where the
      // sum made 1,190 and the planner took the ring at 1.28x).
      {
        const double nodeLink = std::min(gpuLink, k.fifoGpuBytesPerUs), railLink = std::min(rail, k.fifoNetBytesPerUs);
        const double railBytes = bytes / (m * nodes);
        const double nodeSlices = k.slice > 0 ? std::ceil(bytes / m / k.slice) : 1.0;
        const double railSlices = k.slice > 0 ? std::ceil(railBytes / k.slice) : 1.0;
        const double railStepUs =
            std::max(netHopUs + railBytes / std::min(nic, k.fifoNetBytesPerUs), railBytes / railLink);
        // Then the elements past the last whole block, on a flat ring, as
        // in the host model.
        const double tailBytes = hierarchyTailBytes(bytes, shape.maxNodeRanks);
        return (m - 1) * (2 * gpuHopUs + 2 * bytes / m / nodeLink + bytes / m / kGpuFoldBytesPerUs +
                          bytes / m / kGpuCopyBytesPerUs + 2 * (nodeSlices - 1) * 2 * kGpuMessageEndUs) +
               2 * (nodes - 1) * (railStepUs + (railSlices - 1) * 2 * kRdmaMessageEndUs) +
               (tailBytes > 0 ? kernelsAllreduceCostUs(Algo::Ring, size_t(tailBytes), shape) : 0.0);
      }
    case Algo::Tree: {
      const double carried = bytes / 2;  // each tree takes a half
      const double netHops = shape.nodeTreeDepth >= 0 ? shape.nodeTreeDepth : std::ceil(std::log2(nodes));
      // A head's second child node waits for its first's message end.
      const double latencyUs = netHops * (netHopUs + kRdmaMessageEndUs) + (m - 1) * gpuHopUs;
      // A round trip of each slice; the last, partial one moves only its
      // own bytes (charged a whole slice, 128 x 8 H100 at 2 MiB was 1.26x
      // the simulator on 768 KiB slices).
      auto tripUs = [&](double b) { return 3 * latencyUs + 2 * (netHops * 2 * b / nic + (m - 1) * b / gpuLink); };
      return overSlices(k, carried, tripUs);
    }
    default:
      return kCostNotApplicable;
  }
}

RootedTreeCost rootedNodeTreeCostOf(int nnodes, bool onLinks) {
  RootedTreeCost cost;
  if (nnodes < 2) return cost;
  // One rank a node: the trees' node level alone, their heads' children
  // in the order they are sent to.
  std::vector<int> order(static_cast<size_t>(nnodes)), nodeStart(static_cast<size_t>(nnodes) + 1);
  for (int i = 0; i <= nnodes; ++i) {
    if (i < nnodes) order[size_t(i)] = i;
    nodeStart[size_t(i)] = i;
  }
  const NodeLayout l{nnodes, nnodes, order.data(), order.data(), nodeStart.data(), order.data()};
  struct Reached {
    int node, hops, sends, folds;
  };
  std::vector<Reached> todo{{0, 0, 0, 0}};
  while (!todo.empty()) {
    const Reached at = todo.back();
    todo.pop_back();
    cost.hops = std::max(cost.hops, at.hops);
    cost.sends = std::max(cost.sends, at.sends);
    cost.folds = std::max(cost.folds, at.folds);
    const BinaryTree t = onLinks ? nodeTreeOnLinks(at.node, 0, l) : nodeTree(-1, at.node, 0, l);
    cost.fanOut = std::max(cost.fanOut, t.nchildren);
    for (int c = 0; c < t.nchildren; ++c)
      todo.push_back({t.children[c], at.hops + 1, at.sends + c + 1, at.folds + t.nchildren});
  }
  return cost;
}

// The kernels' bcast and reduce across the same nodes (bcast_chain.h,
// reduce_chain.h, bcast_tree.h, reduce_tree.h).  Every channel runs the
// algorithm on its piece of the vector:
//   chain: the first slice crosses every hop in turn (the node's GPU hops,
//     one network hop a node), then the rest streams at a ring step's
//     pace: each channel's rotated ring leaves a node through its own NIC;
//   tree: all channels share one tree, so a head's node children take
//     every channel's slices through that head's NIC, one copy each.  The
//     first slice waits on each network hop for the head's earlier child
//     (its message end), then down its node's chain.
// Where only the streaming peers are linked the tree keeps to a rootless
// tree's links (nodeTreeOnLinks): the way up from the root's node and down
// again, and up to three node children at the root's node's head.  The
// plan does not know the root: root 0's, the common one, is costed.
// Against chorus_sim's three GPU presets on 2 to 64 nodes, 8 B to 128 MiB,
// the model's time is 0.76-1.00x the simulated chain's and 0.88-1.00x the
// tree's (perf/RESULTS.md), where the host model's was 0.5-58x.
double kernelsRootedCostUs(Coll coll, Algo algo, size_t bytesArg, const PlanShape &shape) {
  if (shape.nnodes < 2 || shape.kernelsNodeNetBytesPerUs <= 0 || (coll != Coll::Bcast && coll != Coll::Reduce))
    return kCostNotApplicable;
  const double bytes = double(bytesArg), n = shape.nranks, nodes = shape.nnodes, m = shape.maxNodeRanks;
  const GpuNodeLinks k = linksOf(shape);
  const double gpuLink = k.gpuLink, nic = k.nic, gpuHopUs = k.gpuHopUs, netHopUs = k.netHopUs;
  const double slice = sliceOf(k, bytes);
  switch (algo) {
    case Algo::Direct: {
      // The root's NIC sends (or takes) every remote rank's vector, one
      // message after the other (chorus_sim, 2 x 4 GH200: 7.6 us at 8 B,
      // 10.2 at 32 KiB; 3 x 4: 11.6 at 8 B); the node's own ranks' copies
      // run beside them on NVLink.
      const double remote = n - m;
      return netHopUs + (remote - 1) * kRdmaMessageEndUs + remote * bytes / nic;
    }
    case Algo::Chain: {
      const double netBytesPerUs = ringNetBytesPerUs(k, m);
      // A bcast's chain leaves the root's node once and enters each other;
      // a reduce's ends at the root, so it starts after it and enters its
      // node again at the end (root 0 first on its node).
      const double crossings = coll == Coll::Reduce ? nodes : nodes - 1;
      const double fill = crossings * (netHopUs + slice / netBytesPerUs) + (n - 1 - crossings) * (gpuHopUs + slice / gpuLink);
      return fill + (bytes - slice) / std::min(gpuLink, netBytesPerUs);
    }
    case Algo::Tree: {
      // The first slice to the farthest node waits on the way for every
      // send of its heads before its own (a head sends to its node
      // children in turn), then runs down that node's chain.
      const RootedTreeCost tree = shape.kernelsRootedTree.hops > 0
                                      ? shape.kernelsRootedTree
                                      : rootedNodeTreeCostOf(shape.nnodes, !shape.kernelsEveryPeer);
      const double hops = tree.hops, sends = std::max(tree.sends, tree.hops);
      // On the fewer channels a tree runs on (cudaRootedTreeChannels).
      const double treeSlice =
          shape.kernelsTreeSliceBytes > 0 ? std::min(bytes, shape.kernelsTreeSliceBytes) : sliceOf(k, bytes);
      const double fill = hops * netHopUs + (sends - hops) * kRdmaMessageEndUs + sends * treeSlice / nic +
                          (m - 1) * (gpuHopUs + treeSlice / gpuLink);
      return fill + (bytes - treeSlice) / std::min(nic / std::max(tree.fanOut, 1), gpuLink);
    }
    default:
      return kCostNotApplicable;
  }
}

}  // namespace chorus
