// The planner's choice among the algorithms (core/collective.h names them).
#pragma once

#include <cmath>

#include "core/collective.h"
#include "core/datatype.h"

namespace chorus {

struct Plan {
  Algo algo;
  const char *why;  // for the INFO log: what decided
};

// Where the ranks are: the planner's view of the communicator.
// The node level of the bcast and reduce tree the kernels run across
// `nnodes` nodes, rooted on node 0 (the plan does not know the root; 0 is
// the common one): hung from the root (nodeTree) or, `onLinks`, over the
// rootless trees' links (nodeTreeOnLinks).
// For PlanShape::kernelsRootedTree (rootedNodeTreeCostOf).
struct RootedTreeCost {
  int hops = 0;    // network hops to the farthest node
  int sends = 0;   // the most sends a slice waits for on its way to a node
                   // (a head sends to its node children in turn)
  int fanOut = 0;  // the most node children of one head
  int folds = 0;   // the most child nodes' slices folded on the way up to
                   // the root (a reduce's head folds every child node's
                   // slice before it passes its own on)
};
struct PlanShape {
  int nranks = 1;
  int nnodes = 1;
  int maxNodeRanks = 1;     // ranks on the most populated node
  bool equalNodes = false;  // several nodes, all of maxNodeRanks > 1 ranks (the hierarchical allreduce)
  int nodeTreeDepth = -1;   // network hops of the node tree (nodeTreeDepthOf); -1: computed per call
  // Recursive doubling's rounds (partner rank ^ 2^k) in which some rank's
  // partner is on another node (doublingNetRoundsOf); -1: all of them.
  int doublingNetRounds = -1;
  // Ranks per core on the most crowded machine (at least 1), the same on
  // every rank: each message's CPU cost grows with it (tuner_model.cc).
  double cpuShare = 1.0;
  // Every rank can read every other's memory (one machine, cross-memory
  // attach allowed: transport/shm/cma.h), the same on every rank.
  bool singleCopy = false;
  // The network, where the nodes are machines of their own whose NICs the
  // topology names (comm/context.cc; 0: not known, or nodes played on one
  // machine, whose loopback the cost model's measured constants describe):
  // one connection's bandwidth and a node's over all its NICs, in bytes
  // per microsecond, the slowest node's.
  double netLinkBytesPerUs = 0;
  double nodeNetBytesPerUs = 0;
  // And a message's latency and CPU cost (both ends') there, where every
  // node's NICs do RDMA (0: UCX tcp's, measured here).  setKnownNetwork.
  double netLatencyUs = 0;
  double netMessageUs = 0;
  // Across nodes, whether the kernels reach every rank on another node
  // (cuda/device_links.h, cudaNetLinksEveryPeer); when not, device buffers
  // are planned without the one-shots, and bcast and reduce trees keep to
  // the rootless trees' links (patterns.h: nodeTreeOnLinks).
  bool kernelsEveryPeer = true;
  // GPU nodes of their own whose NICs all do RDMA: a node's bandwidth over
  // all of them, in bytes per microsecond, the slowest node's (0: not
  // known).  The kernels' one-shot across nodes reads it, and with it their
  // allreduce's model (tuner_kernels.cc); the rest of their plan follows
  // the host's, which has these nodes' NICs as netLinkBytesPerUs.
  double kernelsNodeNetBytesPerUs = 0;
  // There too, bytes per microsecond, the slowest node's: one NIC's
  // bandwidth (0: not known, the node's sum over its ranks assumed), and
  // between two GPUs of a node the slowest pair's (NVLink; 0: not known,
  // PCIe assumed); the kernels' channels (cudaChannelsFor: a ring's message
  // between nodes spreads over their NICs) and the slice they stream.
  double kernelsNicBytesPerUs = 0;
  double kernelsNodeLinkBytesPerUs = 0;
  // and the slots of a FIFO, the slices a sender runs ahead of the credits
  // (0: not known).
  int kernelsChannels = 1;
  double kernelsSliceBytes = 0;
  // A bcast or reduce tree's slice, on the fewer channels it runs on
  // (cudaRootedTreeChannels; 0: kernelsSliceBytes).
  double kernelsTreeSliceBytes = 0;
  int kernelsFifoSlots = 0;
  // The kernels' bcast and reduce tree (rootedNodeTreeCostOf, on the links
  // kernelsEveryPeer says).
  RootedTreeCost kernelsRootedTree;
  // The host's, hung from the root's node whatever the links
  // (rootedNodeTreeCostOf(nnodes, false); hops 0: computed per call).
  RootedTreeCost hostRootedTree;
};

// Pick the algorithm for `bytes` (the whole vector for allreduce, reduce and
// bcast; one rank's block for the others).  On one node the measured
// crossovers decide; across nodes a cost model over the link classes (shm
// inside a node, the network between nodes).  Honours CHORUS_ALGO where it
// names an algorithm the collective has.
// Which engine runs the plan.  Host: the host algorithms, on host buffers,
// and on device buffers staged through host memory (across nodes, and the
// exact mode's sums: cuda_staged.cc).  Kernels: the CUDA kernels, on device
// buffers within a node (kernels_impl.cuh), which have the ring and the
// chain, the one-shot, the allreduce tree and the pairwise alltoall only;
// where the host would take another, they take the ring (or chain).
enum class Engine { Host, Kernels };
Plan planCollective(Coll coll, size_t bytes, const PlanShape &shape, Engine engine = Engine::Host);
// One node of `nranks` ranks.
inline Plan planCollective(Coll coll, size_t bytes, int nranks) {
  PlanShape shape;
  shape.nranks = shape.maxNodeRanks = nranks;
  return planCollective(coll, bytes, shape);
}

// Network hops from the root to the deepest node of the node tree over
// `nnodes` nodes (patterns.h), for PlanShape::nodeTreeDepth.
int nodeTreeDepthOf(int nnodes);
RootedTreeCost rootedNodeTreeCostOf(int nnodes, bool onLinks);
// What a message waits, for each rank per core beyond one, for its receiver
// to be scheduled (measured on 2 x 2 played nodes, tuner_model.cc); chorus_sim's
// played preset charges the same.
constexpr double kCrowdedHopUs = 15.0;
// What one connection of UCX over tcp moved here (every rank its own played
// node, 16 MiB broadcast at 2 ranks: perf/RESULTS.md): the cost model's
// network bandwidth where the NIC's is not known, and its cap on a
// connection through a NIC without RDMA (comm/context.cc).
constexpr double kTcpConnectionBytesPerUs = 3500.0;
// The element size the plan assumes where it matters and is not known (the
// plan is per byte count): a double's, the widest of the common types.
constexpr double kPlannedElementBytes = 8;
// A hierarchical allreduce's elements past its last whole block (count
// mod the node's ranks, allreduce_hierarchical.h), which a flat ring over
// every rank carries: in bytes of kPlannedElementBytes elements.  Any
// power-of-two size has them on nodes of 3, 5 or 6 ranks.
inline double hierarchyTailBytes(double bytes, int nodeRanks) {
  return std::fmod(std::floor(bytes / kPlannedElementBytes), double(nodeRanks)) * kPlannedElementBytes;
}
// A message through an RDMA NIC (InfiniBand, RoCE), as the planner takes it
// where the topology names one: a switch hop NIC to NIC, and the verbs and
// UCX work at each end (the planner's per-message cost is both ends').
// Not measured (this project's machines have no RDMA fabric):
// chorus_sim's InfiniBand presets give their NICs the same,
// and UCX over tcp's measured 2.5 + 2.5 us had the planner take the tree
// where the one-shot was 1.5x faster (chorus_sim -p 2socket, 4 x 1 ranks,
// 8 B-32 KiB broadcast and reduce).
constexpr double kRdmaLatencyUs = 2.0;
constexpr double kRdmaMessageEndUs = 1.0;
// A message through shared memory between CPU ranks of a real node, at
// each end: the cache lines of its flag and its credit cross cores (and
// sockets) before the receiver sees it or the sender may reuse the slot.
// The planner charges it where the nodes' NICs are known (its measured
// constants already hold the played nodes'); chorus_sim's CPU preset
// gives its shared memory the same.  Without it the planner took the
// hierarchy's 14 steps in the node over recursive doubling's 3 (chorus_sim
// -p 2socket, 2 x 8 ranks, 8 KiB allreduce: 22.7 us against 18.2).
constexpr double kShmMessageEndUs = 0.15;
// The nodes' network where they are machines of their own whose NICs the
// topology names: one connection's and a node's bandwidth (bytes per
// microsecond, the slowest node's), and whether every node's NIC does RDMA.
// comm/context.cc from the bootstrap's exchange, chorus_sim from its preset.
inline void setKnownNetwork(PlanShape &shape, double linkBytesPerUs, double nodeBytesPerUs, bool rdma) {
  shape.netLinkBytesPerUs = linkBytesPerUs;
  shape.nodeNetBytesPerUs = nodeBytesPerUs;
  shape.netLatencyUs = rdma ? kRdmaLatencyUs : 0;
  shape.netMessageUs = rdma ? 2 * kRdmaMessageEndUs : 0;
}
// For PlanShape::doublingNetRounds: nodeOf[r] is rank r's node; -1 unless
// nranks is a power of two.
int doublingNetRoundsOf(const int *nodeOf, int nranks);

// Alltoall across nodes: the pairwise exchange links every remote peer,
// two small FIFO copies each (128.5 KiB: 2 GiB a rank at 16,384 ranks, 132
// MiB at 1,024; chorus_sim --resources).  Past kAllPeerLinkBudget the
// planner takes Bruck's rounds, which link 2 log2(n) peers, whatever the
// blocks' size: memory before bandwidth (CHORUS_ALGO=pairwise trades
// back).  Whether the pairwise exchange's links fit on `shape`.
constexpr size_t kAllPeerLinkBudget = size_t(32) << 20;
bool allPeerLinksFit(const PlanShape &shape);

// The cost model's estimate, in microseconds, of `algo` for `coll` on
// `shape` (several nodes); a negative value when the algorithm does not
// apply (kCostNotApplicable).  Exposed for the unit tests and chorus_info.
// The host engine's model is tuner_model.cc, the kernels' tuner_kernels.cc.
constexpr double kCostNotApplicable = -1.0;
double modelCostUs(Coll coll, Algo algo, size_t bytes, const PlanShape &shape, Engine engine = Engine::Host);
// The kernels' allreduce across GPU nodes whose NICs are known
// (PlanShape::kernelsNodeNetBytesPerUs > 0) by ring, tree or hierarchy:
// what modelCostUs gives for Engine::Kernels there (tuner_kernels.cc).
double kernelsAllreduceCostUs(Algo algo, size_t bytes, const PlanShape &shape);
// The same for the kernels' bcast and reduce by chain or node tree.
double kernelsRootedCostUs(Coll coll, Algo algo, size_t bytes, const PlanShape &shape);

}  // namespace chorus
