// The host engine's cost model: what the planner (tuner.cc) weighs for
// the collectives across nodes, and for an alltoall on any layout
// (modelCostUs, allPeerLinksFit).  The kernels' model across GPU nodes is
// tuner_kernels.cc; chorus_sim times the algorithms themselves and checks
// both (perf/RESULTS.md).
#include <algorithm>
#include <cmath>

#include "coll/algorithms.h"
#include "coll/allreduce_direct.h"
#include "coll/alltoall_bruck.h"
#include "coll/patterns.h"
#include "core/params.h"
#include "transport/fifo.h"

namespace chorus {

namespace {

// A cost model over link classes.  Each link class is a latency per message
// and a bandwidth per connection, as in NCCL's tuning model, plus, for the
// network, the CPU time a message costs its two ends (LogP's overhead: UCX's
// send, the socket calls, the receive handler), which ranks sharing a core
// pay in turn: an algorithm's message count matters beyond its latency.
// Figures from this project's own runs on the 2-core development machine
// (perf/RESULTS.md):
//   shm: 2 ranks, allreduce 8 B in 0.41 us, 8 MiB in 1105 us;
//   net: UCX over tcp, every rank its own node, bcast 8 B in 6.2 us and
//        16 MiB in 4736 us at 2 ranks.
// The network figure is per connection: a node with one NIC per GPU (the
// rail layout of the 8-GPU fixtures) gives each rank its own.
// The net figure's 5 us per hop splits into 2.5 of latency and 2.5 of
// overhead: 4 ranks on 2 cores, every rank its own node, an 8-byte
// allreduce took 42 us one-shot (3 messages each way per rank) against
// Open MPI's recursive doubling's 28 (2 each way).
// A shared-memory hop costs little CPU, but where ranks share cores the
// receiver must first be scheduled: 2 nodes x 2 ranks on 2 cores, 4 KiB,
// the hierarchical allreduce (two hops in the node, two across) took 46 us
// against recursive doubling's 18 (one of each), so about 15 us per hop in
// the node for each extra rank per core.
struct LinkClass {
  const char *name;
  double latencyUs;
  double messageUs;  // CPU overhead per message, both ends, with a core per rank
  double crowdedUs;  // added per message for each rank per core beyond one
  double bytesPerUs;
};
constexpr LinkClass kShmLink = {"shm", 0.5, 0.0, kCrowdedHopUs, 7000.0};

// A CPU rank's copy of a slice out of a FIFO (or its fold into its own):
// a hop in the node is two such copies, one at each end.
constexpr double kCpuCopyBytesPerUs = 2 * kShmLink.bytesPerUs;

// A CPU rank's memcpy within its own memory, cache to cache (Bruck's
// packing and swaps): measured here 46-102 GB/s from 1 MiB down to 64 KiB;
// taken lower, for a node whose cores share their caches' bandwidth.
constexpr double kLocalCopyBytesPerUs = 40000.0;

// Shared memory between the ranks of a node: the measured link, and on CPU
// nodes whose NICs are known (machines of their own, not played nodes) a
// message's cost at each end (kShmMessageEndUs).
LinkClass shmLinkOf(bool cpuNics) {
  LinkClass shm = kShmLink;
  if (cpuNics) shm.messageUs = 2 * kShmMessageEndUs;
  return shm;
}
constexpr LinkClass kNetLink = {"net", 2.5, 2.5, 0.0, kTcpConnectionBytesPerUs};

// The network of this shape: the measured one, unless the nodes' NICs say
// what a connection carries (PlanShape::netLinkBytesPerUs) and what a
// message costs (netLatencyUs, RDMA NICs).
LinkClass netLinkOf(const PlanShape &shape) {
  LinkClass net = kNetLink;
  if (shape.netLinkBytesPerUs > 0) net.bytesPerUs = shape.netLinkBytesPerUs;
  if (shape.netLatencyUs > 0) {
    net.latencyUs = shape.netLatencyUs;
    net.messageUs = shape.netMessageUs;
  }
  return net;
}

double hopUs(const LinkClass &link, double bytes, double cpuShare = 1.0) {
  return link.latencyUs + link.messageUs * cpuShare + link.crowdedUs * (cpuShare - 1) + bytes / link.bytesPerUs;
}

// A CPU rank's hop of `bytes` through shared memory and the copy or fold
// at its end that the next hop waits for: what chorus_sim's CPU ranks
// take, each copy at its own core's speed (copyGbPerS, reduceGbPerS).
double cpuHopBytesUs(double bytes) { return bytes / kShmLink.bytesPerUs + bytes / kCpuCopyBytesPerUs; }
// A CPU rank's pure send: its core copies the vector into each send slot
// before it posts any (prims_host.h), a node peer's FIFO or its own slot
// that the NIC then reads, each one of a hop's two copies (chorus_sim,
// which had let the links make those copies beside the core's own: 2 x 8
// GPU nodes staged, 2 MiB allgather, the one-shot 0.90x the ring's time,
// now 1.4x).
double sendCopiesUs(double bytes, double sends) { return sends * cpuHopBytesUs(bytes) / 2; }

// A network hop of a chain or a tree: on CPU ranks whose NICs are known
// each node also copies the slice out of its FIFO before it forwards it
// (chorus_sim, 4 x 1 ranks, 32 KiB broadcast: the tree 23 us against the
// 16.5 of the NICs alone).
double forwardingNetHopUs(const LinkClass &net, double sentBytes, double slice, double cpuShare, bool cpuNics) {
  return hopUs(net, sentBytes, cpuShare) + (cpuNics ? slice / kShmLink.bytesPerUs : 0.0);
}

// Network hops from the root to the deepest node of the node tree over
// `nnodes` nodes (patterns.h); O(n log n), so contexts keep it in PlanShape: what a small message pays each way.
int treeDepthOver(int nnodes) {
  int deepest = 0;
  for (int p = 0; p < nnodes; ++p) {
    int depth = -1;
    for (int q = p; q >= 0; q = nodeTreeParent(0, q, 0, nnodes)) ++depth;
    deepest = depth > deepest ? depth : deepest;
  }
  return deepest;
}

// The host's slice for the algorithms that reach every peer, and for a
// rooted tree, whose peers move with the root: the small FIFOs' slot past
// everyFifoFullFits.
double hostAllPeerSliceBytes(int nranks) {
  FifoShape full;
  full.slotBytes = size_t(paramInt(ParamId::ShmSlotSize)) & ~size_t(kFifoAlign - 1);
  full.nslots = int(paramInt(ParamId::ShmSlots));
  if (everyFifoFullFits(nranks, full)) return double(full.slotBytes);
  return double(std::min(full.slotBytes, kSmallFifoSlotBytes));
}

// How many all-peer slices carry `bytes` (one for an empty vector).
double allPeerSlicesOf(double bytes, int nranks) {
  return bytes > 0 ? std::ceil(bytes / hostAllPeerSliceBytes(nranks)) : 1.0;
}

// log2(n) rounds of `bytes` each way.  With ranks placed node by node the
// first rounds pair ranks of one node (partner rank ^ 2^k), which pay
// shared memory's price, not the network's: chorus_sim, 2 nodes of 8 ranks
// with a core each, 8 B: 6.4 us against the 19.5 of the tree the planner
// took when every round was charged as a network one (perf/RESULTS.md).
// In a network round every rank of a node sends at once, through NICs
// whose count the plan does not know: charged as one connection shared by
// the node's ranks (a CPU node's one or two NICs; chorus_sim, 16 nodes of
// 64 ranks, 32 KiB: recursive doubling 725 us against the hierarchy's 235,
// which a connection per rank had reversed).  Where ranks share cores the
// network's constants were fitted to whole rounds on played nodes (2x2: 18
// us measured, two rounds), so there every round still is one, as before.
// Where the nodes' NICs are known, the node's ranks share all of them
// (PlanShape::nodeNetBytesPerUs), each at most at a connection's rate, and
// a round's vector crosses them once each way (full duplex) while the
// rank's copies into and out of the FIFOs run beside it: the slower of the
// two.  Charging both directions' bytes to the NIC (as the measured
// constants, fitted to loopback, do) put recursive doubling at twice the
// model's time on 16 nodes x 8 ranks (16 KiB: 119 us against 61), and the
// tree was taken at 3.2x its time.
double doublingRoundsUs(const PlanShape &shape, double vectorBytes, const LinkClass &shm, bool cpuNics) {
  const double rounds = log2(double(shape.nranks));
  const double bytes = 2 * vectorBytes;  // sent and received
  const LinkClass net = netLinkOf(shape);
  const LinkClass &cross = shape.nnodes > 1 ? net : kShmLink;
  if (shape.nnodes < 2 || shape.cpuShare > 1.0 || shape.doublingNetRounds < 0)
    return rounds * hopUs(cross, bytes, shape.cpuShare);
  const double netRounds = shape.doublingNetRounds;
  const double shmRoundsUs = (rounds - netRounds) * hopUs(shm, bytes, shape.cpuShare);
  if (shape.nodeNetBytesPerUs <= 0) {  // unknown NICs: one connection, shared
    LinkClass shared = net;
    shared.bytesPerUs = net.bytesPerUs / shape.maxNodeRanks;
    return shmRoundsUs + netRounds * hopUs(shared, bytes, shape.cpuShare);
  }
  const double rankShareBytesPerUs = std::min(shape.nodeNetBytesPerUs / shape.maxNodeRanks, net.bytesPerUs);
  // A CPU rank's side of a round: its copy into the FIFO, its fold of the
  // partner's vector, and a message and its credit for each all-peer slice
  // beyond the first (chorus_sim, every rank its own node, 64 KiB-4 MiB:
  // 16 ranks 1.3-1.6x the model's time in 16 KiB slices, 4 ranks 0.77x in
  // 256 KiB ones).
  const double cpuRoundUs =
      cpuNics ? cpuHopBytesUs(vectorBytes) +
                    2 * (allPeerSlicesOf(vectorBytes, shape.nranks) - 1) * net.messageUs * shape.cpuShare
              : bytes / kShmLink.bytesPerUs;
  const double netRoundUs =
      net.latencyUs + net.messageUs * shape.cpuShare + std::max(vectorBytes / rankShareBytesPerUs, cpuRoundUs);
  return shmRoundsUs + netRounds * netRoundUs;
}

}  // namespace

int nodeTreeDepthOf(int nnodes) { return treeDepthOver(nnodes); }

bool allPeerLinksFit(const PlanShape &shape) {
  const size_t remotePeers = size_t(shape.nranks - std::max(shape.maxNodeRanks, 1));
  return shape.nnodes < 2 || remotePeers * 2 * fifoFootprint(kSmallFifoSlotBytes, kSmallFifoSlots) <= kAllPeerLinkBudget;
}

int doublingNetRoundsOf(const int *nodeOf, int nranks) {
  if (nranks < 2 || !isPowerOfTwo(nranks)) return -1;
  int rounds = 0;
  for (int span = 1; span < nranks; span <<= 1) {
    bool crosses = false;
    for (int r = 0; r < nranks && !crosses; ++r) crosses = nodeOf[r] != nodeOf[r ^ span];
    rounds += crosses;
  }
  return rounds;
}

// The alltoall of `block` bytes a peer on the host engine: the pairwise
// exchange (one round of a message to every peer, then one from each,
// while a block fits an all-peer slice) against Bruck's ceil(log2 n) rounds
// of about n/2 blocks, packed.  Every Bruck round crosses nodes for the
// ranks at a node's edge (rank + k), so each pays the network's price;
// round k sends min(k, m) of the node's ranks' vectors through its NICs.
namespace {
double alltoallCostUs(Algo algo, double block, const PlanShape &shape) {
  const double n = shape.nranks, m = std::max(1, shape.maxNodeRanks), remote = n - m;
  const bool nicsKnown = shape.netLinkBytesPerUs > 0;
  // (A core per rank: a shared-memory message's ends cost what chorus_sim
  // finds for CPU nodes, 15 of them 4.5 us on 16 ranks.)
  const LinkClass net = netLinkOf(shape), shm = shmLinkOf(nicsKnown || shape.cpuShare <= 1.0);
  const bool severalNodes = shape.nnodes > 1;
  const LinkClass &cross = severalNodes ? net : shm;
  const double nodeNetBytesPerUs = nicsKnown && shape.nodeNetBytesPerUs > 0 ? shape.nodeNetBytesPerUs : net.bytesPerUs;
  const double slice = hostAllPeerSliceBytes(shape.nranks);
  if (algo == Algo::Pairwise) {
    const double messagesUs = ((m - 1) * shm.messageUs + (severalNodes ? remote * net.messageUs : 0)) * shape.cpuShare;
    // The node's NICs drain while its ranks post: the slower of the two
    // (chorus_sim, 2 x 64 ranks of 2socket, 256 B: 150 us, where their
    // sum made 237 and Bruck's 176 was taken).
    const double nicUs = severalNodes ? m * remote * block / nodeNetBytesPerUs : 0;
    // The first message's latency runs while the other sends post (8 x 1
    // ranks, 8 B: 14 us, where latency and every end in a row made 16).
    const double exposedLatencyUs = std::max(0.0, cross.latencyUs - messagesUs / 2 * (n - 2) / (n - 1));
    // Each partner's block: the copy into its send slot, one out of ours.
    const double copiesUs = (n - 1) * (sendCopiesUs(block, 1) + block / kCpuCopyBytesPerUs);
    if (block <= slice) return exposedLatencyUs + std::max(messagesUs, nicUs) + copiesUs;
    // Past a slice, partner after partner, the slices to each pipelined
    // (alltoall_pairwise.h): a hop's latency per partner, then each slice
    // at the pace of the slower of its message ends and the node's ranks
    // through its NICs; the copies counted once, below (their sum, and
    // the copies counted again as shared memory's bytes, put the model at
    // 1.5-2x chorus_sim's time at 32-64 KiB).
    const double slices = allPeerSlicesOf(block, shape.nranks);
    const double netPartnerUs =
        net.latencyUs + slices * std::max(net.messageUs * shape.cpuShare, m * slice / nodeNetBytesPerUs);
    const double shmPartnerUs =
        shm.latencyUs + shm.crowdedUs * (shape.cpuShare - 1) + slices * shm.messageUs * shape.cpuShare;
    return (severalNodes ? remote * netPartnerUs : 0) + (m - 1) * shmPartnerUs + copiesUs;
  }
  if (algo != Algo::Bruck) return kCostNotApplicable;
  // The first copy and the swaps move 2.5 n blocks; each round packs and
  // unpacks its blocks (left uncharged, Bruck was taken at 1.2-1.5x the
  // pairwise exchange's time on 8 x 1 to 16 x 1 ranks, 2-4 KiB).
  double copiedBytes = 2.5 * n * block, us = 0;
  for (int k = 1; k < shape.nranks; k *= 2) {
    // n/2 blocks a round for a power of two, fewer in the last rounds
    // otherwise (3 x 8 ranks, 1 KiB: 8 of 12 in the last two, whose NIC
    // time at 12 put the model at 1.5x chorus_sim's time, and the pairwise
    // exchange was taken at 1.32x).
    const double roundBytes = double(bruckRoundBlocks(shape.nranks, k)) * block;
    const double slices = allPeerSlicesOf(roundBytes, shape.nranks);
    double wireUs, endsUs, latencyUs, copyOutUs = 0, nicQueueUs = 0;
    if (!severalNodes) {
      wireUs = roundBytes / shm.bytesPerUs;
      endsUs = shm.messageUs * shape.cpuShare;
      latencyUs = shm.latencyUs;
      copyOutUs = roundBytes / kCpuCopyBytesPerUs * shape.cpuShare;
    } else {
      // The node's NICs carry the rounds of those of its ranks whose
      // partner is remote, but the ranks do not reach them at once: each
      // rank's chain pays for its own message there, and the round waits
      // for the whole queue only where it outlasts that chain (the queue on
      // every rank's chain put the model at 1.1-1.5x chorus_sim's time on
      // nodes of 8 or more ranks, and the pairwise exchange was taken at
      // 1.15x on 3 x 8, 1 KiB).
      const double ownNicUs = roundBytes / nodeNetBytesPerUs;
      if (k < m) {
        // k of the node's ranks have a remote partner.
        nicQueueUs = k * ownNicUs;
        // Below the node's size most partners share the rank's node, and
        // the rounds' chain crosses the network at most every other round
        // (a rank whose partner rank - k is remote sits, a round earlier,
        // where its own partner is on its node): half a network hop, half
        // a shared-memory one (a network hop each round put the model at
        // 1.2-1.5x chorus_sim's time from 8 ranks a node).
        wireUs = std::max(ownNicUs, roundBytes / shm.bytesPerUs);
        endsUs = (net.messageUs + shm.messageUs) / 2 * shape.cpuShare;
        latencyUs = (net.latencyUs + shm.latencyUs) / 2;
      } else {
        // From k = m on every partner is remote (all m ranks at the NICs),
        // and each slice is copied out of the FIFO at the far end.
        nicQueueUs = m * ownNicUs;
        wireUs = std::max(ownNicUs, roundBytes / net.bytesPerUs);
        endsUs = net.messageUs * shape.cpuShare;
        latencyUs = net.latencyUs;
        copyOutUs = roundBytes / kCpuCopyBytesPerUs * shape.cpuShare;
      }
    }
    // Across nodes the sender's core also copies each slice into its send
    // slot (sendCopiesUs: 8 x 2 ranks, 2 KiB, Bruck 39.5 us in chorus_sim,
    // modelled 29.5, and taken over the pairwise exchange's 34.5).
    const double coreCopiesUs = copyOutUs + (severalNodes ? sendCopiesUs(roundBytes, 1) * shape.cpuShare : 0.0);
    // Slices pipelined: the first one's whole chain, then each next at the
    // pace of the slower of its ends (with its copies) and the wire.
    const double chainUs = latencyUs + (endsUs + wireUs + coreCopiesUs) / slices +
                           (slices - 1) * std::max(endsUs + coreCopiesUs / slices, wireUs / slices);
    us += std::max(chainUs, latencyUs + nicQueueUs);
    copiedBytes += 2 * roundBytes;
  }
  return us + copiedBytes / kLocalCopyBytesPerUs * shape.cpuShare;
}
}  // namespace

double modelCostUs(Coll coll, Algo algo, size_t bytesArg, const PlanShape &shape, Engine engine) {
  const bool rooted = coll == Coll::Bcast || coll == Coll::Reduce;
  if (coll == Coll::Alltoall)
    return engine == Engine::Host ? alltoallCostUs(algo, double(bytesArg), shape) : kCostNotApplicable;
  // The kernels' allreduce, bcast and reduce across GPU nodes whose NICs
  // are known: their GPU links and NICs (tuner_kernels.cc); the one-shot
  // keeps this model.
  if (engine == Engine::Kernels && shape.nnodes > 1 && shape.kernelsNodeNetBytesPerUs > 0 && algo != Algo::Direct) {
    if (coll == Coll::Allreduce) return kernelsAllreduceCostUs(algo, bytesArg, shape);
    if (rooted) return kernelsRootedCostUs(coll, algo, bytesArg, shape);
  }
  const double bytes = double(bytesArg), n = shape.nranks, nodes = shape.nnodes, m = shape.maxNodeRanks;
  const LinkClass net = netLinkOf(shape);
  const LinkClass &cross = shape.nnodes > 1 ? net : kShmLink;
  const double slot = double(paramInt(ParamId::ShmSlotSize));
  const double shmHops = m - 1;
  const double netHops = shape.nodeTreeDepth >= 0 ? shape.nodeTreeDepth : treeDepthOver(shape.nnodes);
  // Where the NICs are known (their bandwidth, not the measured loopback's),
  // the terms chorus_sim found for CPU nodes apply; the measured constants
  // already hold the played layouts'.  Some are the host engine's alone.
  const bool nicsKnown = shape.netLinkBytesPerUs > 0;
  const bool cpuNics = nicsKnown && engine == Engine::Host;
  const LinkClass shm = shmLinkOf(cpuNics);
  switch (algo) {
    case Algo::Direct: {  // one message to (or from) every peer: one latency, but
      // the rank writes every peer's copy and then copies every peer's out,
      // one after the other, where a ring step sends and receives at once.
      // Across nodes whose NICs are known, the node's ranks also queue
      // their vectors for every remote rank through those NICs (chorus_sim,
      // 2 nodes of 8 ranks with a core each, 8 KiB allgather: 62 us against
      // the ring's 43, which the copies alone had reversed).
      if (shape.nranks > kMaxDirectRanks) return kCostNotApplicable;
      if (rooted && cpuNics && shape.nnodes > 1) {
        // Rooted, only the root's NIC queues: a copy and a message for each
        // rank on another node.  A broadcast's receivers copy theirs out at
        // once; a reduce's root folds every rank's in turn (chorus_sim,
        // 4 x 1 ranks, 32 KiB broadcast: 17 us, where the allgather's
        // queue of every rank's vectors gave 29, and the tree, 1.4x
        // slower, was taken).  Slice after slice (all-peer ones), the root
        // ends a message to each peer while its NIC sends the remote ones:
        // the slower sets the pace (once for the whole vector, the model
        // had 2 x 8 H100 staged, 256 KiB, at 0.45x chorus_sim's time, and
        // 2 x 4 and 2 x 8 CPU ranks at 32 KiB took the tree at 1.11-1.13x).
        // (messageUs is both ends': the root's end of each, one other's.)
        const double remote = n - m;
        const double slices = allPeerSlicesOf(bytes, shape.nranks), slice = bytes / slices;
        const double rootEndsUs = (remote * net.messageUs + (m - 1) * shm.messageUs) / 2 * shape.cpuShare;
        const double nicUs = remote * slice / net.bytesPerUs;
        if (coll == Coll::Bcast) {
          // A broadcast root's core copies each slice into every send slot
          // before its NIC sends it (sendCopiesUs), so a slice's copies and
          // sends follow one another; the receivers copy each out as it
          // comes, the last one's after the rest (chorus_sim, 4 x 1 ranks,
          // 256 KiB in one slice: 172 us, where the slower of the copies
          // and the NIC's time gave 128 and the one-shot was taken over the
          // tree's 150).
          const double rootUs = rootEndsUs + sendCopiesUs(slice, n - 1);
          return net.latencyUs + (slices - 1) * std::max(rootUs, nicUs) + rootUs + nicUs +
                 net.messageUs / 2 * shape.cpuShare + slice / kShmLink.bytesPerUs;
        }
        return net.latencyUs + slices * std::max(rootEndsUs, nicUs) + net.messageUs / 2 * shape.cpuShare +
               (n - 1) * bytes / kShmLink.bytesPerUs;
      }
      const double nicQueueUs =
          shape.nnodes > 1 && shape.nodeNetBytesPerUs > 0 ? m * (n - m) * bytes / shape.nodeNetBytesPerUs : 0.0;
      if (cpuNics && shape.nnodes > 1 && m == 1 && coll == Coll::Allgather) {
        // Every rank its own CPU node: the vectors go in the all-peer
        // slices (16 KiB past 8 ranks), a message each to every peer, its
        // NIC's queue drains and the rank copies out each peer's: one after
        // the other (chorus_sim, 4 x 1 ranks, 8 MiB allgather: the one-shot
        // 3.7 ms against the ring's 4.9, modelled 4.0; 16 x 1: 29.7 ms, 15
        // messages a slice, modelled 34.4 against the ring's 27.0, where
        // the slower of the two alone gave 24.4 and the one-shot was taken).
        // (A reduce-scatter's one-shot folds each block after it came, not
        // beside its NIC: 4 x 1, 8 MiB, 5.7 ms, as the model had it.)
        const double slice = std::min(bytes, hostAllPeerSliceBytes(shape.nranks));
        const double slices = allPeerSlicesOf(bytes, shape.nranks);
        const double cpuUs = slices * (n - 1) * net.messageUs * shape.cpuShare + sendCopiesUs(bytes, n - 1) +
                             (n - 1) * bytes / kCpuCopyBytesPerUs;
        return net.latencyUs + cpuUs + nicQueueUs + slice / net.bytesPerUs;
      }
      // An allreduce's one-shot moves the whole vector as an allgather's
      // moves a block, each fold in place of a copy out (chorus_sim, 5 x 1
      // and 6 x 1 ranks, 32 KiB: 55-68 us where the general model gave
      // 41-51, taken over the ring's 43-51; 3 x 3, 8 B-512 B: the tree taken
      // at 1.4x).  At 2 ranks one exchange, whose wire the general model
      // fits (2 x 1, 32 KiB: 14.0 us).
      const bool allreduceAsBlocks = coll == Coll::Allreduce && shape.nranks > 2;
      if (cpuNics && shape.nnodes > 1 &&
          (coll == Coll::Allgather || coll == Coll::ReduceScatter || allreduceAsBlocks)) {
        // A rank pays each message's end at its link's price (shared
        // memory's for its node's m - 1 peers), a message for each all-peer
        // slice (16 KiB ones past 8 ranks); its copies come after its node's
        // NIC queue and, on the same core, after the messages' ends, which
        // with more ranks a node run while the queue drains (chorus_sim,
        // 2 x 8 ranks, 512 B-8 KiB allgather: 21-62 us, modelled 20-62,
        // where every message and copy at the network's price gave 36-94
        // and the ring was taken at 2 KiB; 4 x 2, 32 KiB-2 MiB: 69-4,027,
        // modelled 69-4,280, where the slower of the queue and the copies
        // alone took the one-shot over the ring, 1.1-1.4x slower).  With
        // NICs that drain at once, the host's plan on GPU nodes, the ends
        // and the copies add up (2 x 4 GH200, 2 MiB reduce-scatter: 3.7 ms,
        // where the slower of the two gave 2.3 and the one-shot was taken
        // over the ring's 3.1; 11 of the 12 rows flagged with every
        // collective staged).
        const double slices = allPeerSlicesOf(bytes, shape.nranks);
        const double endsUs = slices * ((n - m) * net.messageUs + (m - 1) * shm.messageUs) * shape.cpuShare;
        const double copiesUs = sendCopiesUs(bytes, n - 1) + (n - 1) * bytes / kCpuCopyBytesPerUs;
        return net.latencyUs + copiesUs + (m > 1 ? std::max(endsUs, nicQueueUs) : endsUs + nicQueueUs) +
               bytes / net.bytesPerUs;
      }
      return cross.latencyUs + (n - 1) * cross.messageUs * shape.cpuShare + 2 * (n - 1) * bytes / cross.bytesPerUs +
             nicQueueUs;
    }
    case Algo::RecursiveDoubling:  // log2(n) rounds, each one message each way
      // (At 2 ranks it is the one-shot's exchange: the one-shot stands.)
      if (shape.nranks < 4 || !isPowerOfTwo(shape.nranks)) return kCostNotApplicable;
      if (coll == Coll::Allreduce) return doublingRoundsUs(shape, bytes, shm, cpuNics);  // the whole vector
      // Allgather and reduce-scatter (recursive halving): 1, 2, 4... blocks
      // per round, n - 1 sent and n - 1 received in all, as the one-shot,
      // unsliced: only while all n blocks fit the smallest slice (else the
      // executor runs the ring).  With a core per rank it ties the one-shot
      // at 4 ranks (2 rounds against 1 round of 3 messages), and the
      // one-shot, first, stays.  Where the NICs are known, the slice the
      // executor will cut (the all-peer one) bounds it, not the smallest
      // (chorus_sim, 4 x 1 ranks, 32 KiB reduce-scatter: halving 28 us,
      // the ring taken at 32).
      if (coll != Coll::Allgather && coll != Coll::ReduceScatter) return kCostNotApplicable;
      if (n * bytes > (cpuNics ? hostAllPeerSliceBytes(shape.nranks) : double(kSmallFifoSlotBytes)))
        return kCostNotApplicable;
      // Across CPU nodes a round's blocks are copied into the send slot
      // and out at each end, and cross the NIC once (chorus_sim, 2 x 2
      // ranks, 32 KiB: 34.9 us, modelled 20.5, and taken over the ring's 30.4).
      if (cpuNics && shape.nnodes > 1)
        return doublingRoundsUs(shape, 0, shm, cpuNics) + (n - 1) * (bytes / cross.bytesPerUs + cpuHopBytesUs(bytes));
      return doublingRoundsUs(shape, 0, shm, cpuNics) + 2 * (n - 1) * bytes / cross.bytesPerUs;
    case Algo::Ring: {  // 2(n-1) steps of a 1/n block, each as slow as the network hop
      // On CPU nodes whose NICs are known, a rank's step is its copy into
      // the next one's FIFO and its copy (or fold) out of its own, and the
      // NIC streams beside them: the slower of the two (chorus_sim, 2 x 8
      // and 16 x 8 ranks, 16-64 MiB allreduce: 2.0-2.6x the NIC's time
      // alone, at 4.7 GB/s a rank; every rank its own node, 8 MiB
      // allgather: 4.9 ms, and the ring was taken over the one-shot's 3.7).
      // There a step's latency is that of the hops a block crosses going
      // round (each node's one network hop, its m - 1 in shared memory),
      // unless the network hop's credits hold it back: a FIFO's few slots
      // come back a network round trip after they were sent, and every
      // rank moves at the pace of the one that waits for them (chorus_sim,
      // 8 B on 2 x 64, 16 x 8 and 16 x 64 ranks: 1.58 us a step, 0.4x the
      // model's time where every step paid the network's).
      const double block = coll == Coll::Allreduce ? bytes / n : bytes;
      const double netShare = nodes > 1 ? nodes / n : 0.0;
      const double crossedUs =
          netShare * hopUs(cross, 0, shape.cpuShare) + (1 - netShare) * hopUs(shm, 0, shape.cpuShare);
      const double creditLoopUs =
          nodes > 1 ? (2 * cross.latencyUs + (cross.messageUs + shm.messageUs) * shape.cpuShare) /
                          double(paramInt(ParamId::ShmSlots))
                    : 0.0;
      const double stepUs =
          cpuNics ? std::max(creditLoopUs, crossedUs + std::max(block / cross.bytesPerUs, cpuHopBytesUs(block)))
                  : hopUs(cross, block, shape.cpuShare);
      if (coll == Coll::Allreduce) return 2 * (n - 1) * stepUs;
      if (coll == Coll::Allgather || coll == Coll::ReduceScatter) return (n - 1) * stepUs;
      return kCostNotApplicable;
    }
    case Algo::Chain: {  // pipelined slices: fill every hop once, then stream at the slowest link
      if (!rooted) return kCostNotApplicable;
      const double slice = bytes < slot ? bytes : slot;
      // A broadcast's hops in the node go one way, each rank forwarding as
      // soon as it runs: they do not pay the crowded node's wait for a rank
      // to be scheduled the way the hierarchical allreduce's back-and-forth
      // does.  2 nodes x 2 ranks on 2 cores, 8 B-4 KiB: the chain took
      // 5.0-8.4 us back to back (Open MPI 6.1-7.2) against the one-shot's
      // 10.0-16.5, and 47.6-49.3 per call after a barrier against 61-64.
      // A reduce's chain did not (12 us back to back, against 6 one-shot).
      const double shmShare = coll == Coll::Bcast ? 1.0 : shape.cpuShare;
      // Where the NICs are known (faster than the measured loopback), a CPU
      // rank's copies into and out of its FIFOs, not the NIC, set the
      // stream: chorus_sim, 2 x 8 ranks, 2-8 MiB broadcast, 9.6 GB/s.
      const double streamBytesPerUs = cpuNics ? std::min(cross.bytesPerUs, kShmLink.bytesPerUs) : cross.bytesPerUs;
      const double netHopUs = forwardingNetHopUs(cross, slice, slice, shape.cpuShare, cpuNics);
      return (n - nodes) * hopUs(shm, slice, shmShare) + (nodes - 1) * netHopUs +
             (bytes - slice) / streamBytesPerUs;
    }
    case Algo::Tree: {  // node tree + chains: log2(nodes) network hops; a head feeds two nodes
      if (shape.nnodes < 2 || !(rooted || coll == Coll::Allreduce)) return kCostNotApplicable;
      const double carried = coll == Coll::Allreduce ? bytes / 2 : bytes;  // each tree takes a half
      // A rooted tree on the host slices as the all-peer algorithms do: past
      // 8 ranks in 16 KiB slices, whose fill is short (chorus_sim, 2 x 8
      // ranks, 2 MiB broadcast: the tree 390 us against the chain's 988,
      // which a 256 KiB slice's fill had reversed).  Where the NICs are
      // known; the measured constants hold the played layouts'.
      const double treeSlot = rooted && cpuNics ? hostAllPeerSliceBytes(shape.nranks) : slot;
      const double slice = carried < treeSlot ? carried : treeSlot;
      // A head sends each slice to its two child nodes in turn; where the
      // NICs are known (their bandwidth, not the measured loopback's) that
      // second copy is what decides (chorus_sim, 4 CPU nodes, 128 KiB: the
      // tree 161 us against the ring's 62, which one copy a hop reversed).
      const double fanOut = nicsKnown ? 2.0 : 1.0;
      const double netHopUs = forwardingNetHopUs(net, fanOut * slice, slice, shape.cpuShare, cpuNics);
      // An allreduce's slice goes up both trees, then down both; a rank
      // takes the two halves' ways down in turn, so the second tree's waits
      // at each rank for the first's: about half a fill more (chorus_sim,
      // 16 nodes x 1 to 8 ranks, 16 B: 58-76 us against the 40-47 of one
      // fill each way).  Where the NICs are known; the measured constants
      // already hold the played layouts' waits.
      const double fills = coll != Coll::Allreduce ? 1.0 : nicsKnown ? 3.0 : 2.0;
      if (coll == Coll::Allreduce && cpuNics) {
        // Each slice comes down both trees before the next goes up
        // (allreduce_tree.h): slice after slice a round trip, each hop in
        // the node a CPU rank's two copies, not a stream (chorus_sim, 2 x 8
        // ranks, 16 MiB: 34.7 ms, 7.7x what a stream at shared memory's
        // speed gave; now 0.75x the model's, and 0.7-1.2x it from 4 x 1 to
        // 2 x 64 ranks at every size).
        const double cpuFill = netHops * netHopUs + shmHops * (hopUs(shm, 0, shape.cpuShare) + cpuHopBytesUs(slice));
        const double roundTrips = slice > 0 ? std::ceil(carried / slice) : 1.0;
        return roundTrips * fills * cpuFill;
      }
      // On CPU nodes whose NICs are known, the first slice also waits at
      // each head on its way for the head's other messages' ends: a
      // broadcast's head sends to its child nodes in turn; a reduce's
      // takes in every child node's slice and its chain's before it folds
      // and passes its own on (chorus_sim, 4 x 2 ranks, 8 B reduce: the
      // tree 10.1 us, where one message a hop gave 8.8 and it was taken
      // over the one-shot's 9.2).
      double waitsUs = 0;
      if (cpuNics && rooted) {
        const RootedTreeCost tree =
            shape.hostRootedTree.hops > 0 ? shape.hostRootedTree : rootedNodeTreeCostOf(int(nodes), false);
        const double laterEnds = (coll == Coll::Bcast ? tree.sends : tree.folds) - tree.hops;
        const double chainEnds = coll == Coll::Reduce && m > 1 ? tree.hops : 0;
        waitsUs = (laterEnds * net.messageUs / 2 + chainEnds * shm.messageUs / 2) * shape.cpuShare;
      }
      const double fill = netHops * netHopUs + shmHops * hopUs(shm, slice, shape.cpuShare) + waitsUs;
      // Streaming, a head sends each slice to two nodes; an allreduce's
      // tree also turns every slice around at the root, which the ring
      // never waits for: measured 1.5x the ring's time at 2 ranks, 16 MiB
      // (8.3 ms against 5.6, every rank its own node).
      // Every slice also runs the node's chain: the stream is as slow as
      // the slower of the network and shared memory.
      // A reduce's head on CPU nodes takes in and folds the slices of each
      // child node, two past 2 nodes (chorus_sim, 16 x 8 ranks, 32 MiB
      // reduce: the tree 19.1 ms, where a broadcast's 2 copies gave 9.6 and
      // it was taken over the chain's 11.9; 2 x 8, 2 MiB: 0.7 ms, as 2 give).
      const double childNodes = std::min(2.0, nodes - 1);
      const double streamCopies =
          coll == Coll::Allreduce ? 3 : coll == Coll::Reduce && cpuNics ? 1 + childNodes : 2;
      // A broadcast's head on CPU nodes sends each slice to its child nodes
      // (one on 2 nodes) while it copies it on, and pays each send's
      // message: in 16 KiB slices (past 8 ranks) the messages count
      // (chorus_sim, 2 x 64 ranks, 32 MiB: the tree 6.0 ms, where 2 copies
      // a slice gave 9.8 and the chain's 10.2 was taken; 2 x 8: the chain's
      // 4.3 against the tree's 5.7).
      const bool sendsCount = coll == Coll::Bcast && cpuNics && slice > 0;
      // The root's own sends are its core's copies (sendCopiesUs): one to
      // each child node (one on a power of two nodes, the tree's top
      // position) and one down its node's chain.
      int rootChildren[2];
      const double rootChildNodes = nodeTreeChildren(-1, 0, 0, int(nodes), rootChildren);
      const double stream =
          sendsCount ? (carried - slice) / slice *
                           (std::max({childNodes * slice / net.bytesPerUs, slice / kShmLink.bytesPerUs,
                                      sendCopiesUs(slice, rootChildNodes + (m > 1 ? 1 : 0))}) +
                            childNodes * net.messageUs / 2)
                     : streamCopies * (carried - slice) / std::min(net.bytesPerUs, kShmLink.bytesPerUs);
      return fills * fill + stream;
    }
    case Algo::Hierarchical:  // rings in the node around a ring among the nodes
      if (coll != Coll::Allreduce || !shape.equalNodes) return kCostNotApplicable;
      // Fewer elements than the node has ranks leave its blocks empty: the
      // tail, a flat ring over every rank, carries it all
      // (allreduce_hierarchical.h).  The plan does not know the element
      // size; below a double per rank of a node, that is what it is.
      // chorus_sim found it: 2 nodes x 8 ranks, 8 bytes, 53 us by the
      // hierarchy's flat ring against 28 by the tree (perf/RESULTS.md).
      if (bytes < kPlannedElementBytes * m) return modelCostUs(coll, Algo::Ring, bytesArg, shape);
      {
        // The node's m rings among the nodes run at once, through the
        // node's NICs where they are known (chorus_sim, 16 nodes x 8 ranks
        // with one NIC, 8 MiB: the hierarchy 4,433 us against the ring's
        // 3,801, where a NIC for each ring had put it at 2,400).
        LinkClass rails = net;
        if (cpuNics && shape.nodeNetBytesPerUs > 0)
          rails.bytesPerUs = std::min(net.bytesPerUs, shape.nodeNetBytesPerUs / m);
        // Each of the rings' steps in the node is a CPU rank's two copies
        // (into the FIFO, out of it or folded) where the NICs are known, as
        // the ring's (chorus_sim, 2 x 8 ranks, 16-64 MiB: 1.39x the model's
        // time with shared memory's one copy a step, 1.0x with both).
        const double shmStepUs = cpuNics ? hopUs(shm, 0, shape.cpuShare) + cpuHopBytesUs(bytes / m)
                                         : hopUs(shm, bytes / m, shape.cpuShare);
        // The elements past the last whole block take a flat ring's every
        // step after the phases (chorus_sim, 3 x 3 ranks, 4 KiB: the
        // hierarchy 52.8 us, the phases' 20.8 and the tail's 32; taken over
        // the tree's 26.1 without it).
        const double tailBytes = hierarchyTailBytes(bytes, shape.maxNodeRanks);
        return 2 * shmHops * shmStepUs + 2 * (nodes - 1) * hopUs(rails, bytes / (m * nodes), shape.cpuShare) +
               (tailBytes > 0 ? modelCostUs(coll, Algo::Ring, size_t(tailBytes), shape, engine) : 0.0);
      }
    default:
      return kCostNotApplicable;
  }
}

}  // namespace chorus
