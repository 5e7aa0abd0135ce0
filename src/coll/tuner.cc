#include <strings.h>

#include <algorithm>
#include <cstdio>

#include "coll/algorithms.h"
#include "coll/allreduce_direct.h"
#include "coll/allreduce_recursive_doubling.h"
#include "coll/alltoall_single_copy.h"
#include "core/log.h"
#include "core/params.h"
#include "transport/fifo.h"

namespace chorus {

namespace {

// Crossovers, measured on the 2-core development machine (host memory,
// float sum, Open MPI 4.1 + Chorus 0018b9b, 2026-11-30):
//   for a in direct ring tree; do
//     CHORUS_ALGO=$a mpirun -np N --oversubscribe perf/allreduce_perf -b 4K -e 2M -f 2 -n 100 -c 0; done
// 2 ranks: one-shot fastest up to 32 KiB (3.8 us vs ring 4.0), ring from
//   64 KiB (6.5 vs 7.6); the tree never wins.
// 4 ranks (oversubscribed): one-shot up to 64 KiB (41.6 us vs tree 42.5,
//   ring 50.6), tree at 128 KiB (57.9 vs ring 64.8) and 256 KiB (tie),
//   ring from 512 KiB (146 vs tree 152, one-shot 230).
// Copy collectives from 3 ranks, one-shot against publish (2026-11-30,
// 4a: CHORUS_DIRECT_MAX_BYTES=64M, 4b: =0; sizes are whole messages):
//   CHORUS_DIRECT_MAX_BYTES=$m mpirun -np N --oversubscribe perf/allgather_perf -b 16K -e 1M -f 2
// allgather (the limit is one rank's block): 3 ranks, block 22 KiB: 9.7 us
//   one-shot vs 10.4 publish; 44 KiB: 15.3 vs 13.8.  4 ranks, block 16 KiB:
//   12.5 vs 12.9; 32 KiB: 16.9 vs 14.6; 64 KiB: 34.4 vs 20.7.
// bcast: 3 ranks, 128 KiB: 9.8 vs 12.3; 256 KiB: 24.3 vs 19.1.  4 ranks,
//   64 KiB: 7.4 vs 6.9; 128 KiB: 14.6 vs 11.4.
// Reduce-scatter (block per rank) keeps the allreduce limits: 2 ranks tie
// up to 1 MiB; 4 ranks, one-shot 28.8 us vs ring 38.8 at 64 KiB blocks,
// 108 vs 100 at 256 KiB.  CHORUS_DIRECT_MAX_BYTES and CHORUS_TREE_MAX_BYTES
// override every limit.
// Allreduce re-measured (2026-12-01, Chorus 4022677, issue 16; the one-shot
// and the FIFOs had changed since: small FIFOs, bulk links, inline
// messages), both timings, two to four runs each:
//   CHORUS_ALGO=$a mpirun -np N --oversubscribe --bind-to core:overload-allowed
//     perf/allreduce_perf -b 2K -e 1M -f 2 -n 100 -c 0 [--sync]
// 2 ranks: the one-shot now wins to 64 KiB back to back (2.7-3.5 us against
//   the ring's 3.2-3.8, 4 runs of 4) and ties per call; the ring from 256
//   KiB (10.2-12.5 against 11.0-16.6; at 128 KiB 5.3-6.8 against 6.0-6.6).
// 4 ranks: the one-shot to 32 KiB (9.4-12.7 against publish 10.1-12.2,
//   per call 8.7-9.0 against 11.3-14.0); from 64 KiB ring + publish wins
//   back to back (13.4-15.4 against tree 14.4-18.3, one-shot 17.3-21.3)
//   and ties per call; the tree no longer wins anywhere (128 KiB: publish
//   18.6-19.2, tree 22.1-28.9; per call 18.3-24.8 against 28.6-34.4).
// 2 ranks again (2026-12-04, after the FIFO and copy work since): above
//   the one-shot's 64 KiB the ring lost to recursive doubling (one exchange
//   of the whole vector, folded into recvbuf) at every size, both timings,
//   3 runs each (CHORUS_ALGO=ring|recursive_doubling chorus_allreduce_perf
//   -b 64K -e 16M -f 4 -d double -c 0 -I 0 [--sync], -np 2 --bind-to none):
//   256 KiB 24-26 us against 27-31, 1 MiB 70-93 against 112-175, 4 MiB
//   269-292 against 449-461, 16 MiB 1372-1727 against 1911-2186; the
//   one-shot was level with it (it folds into scratch and copies).  At 4
//   ranks (oversubscribed) recursive doubling lost from 1 MiB (288-532
//   against 228-283), so it is the choice at 2 ranks only.
// 8 ranks: the one-shot to 16 KiB (24-33 us against tree 33-39, publish
//   35-46; per call mixed), and 2x slower from 32 KiB (45-65 against tree
//   30-39); the tree to 64 KiB back to back (40 against publish 47-48, per
//   call 48-58 against 42-53), publish from 128 KiB (per call 51-57 against
//   tree 72-80; 512 KiB 131-155 against 238-382).
constexpr size_t kAllreduceDirectMax2 = 64 * 1024, kAllreduceDirectMax4 = 32 * 1024,
                 kAllreduceDirectMaxMore = 16 * 1024;
size_t directMaxBytes(Coll coll, int nranks) {
  if (coll == Coll::Allreduce)
    return nranks <= 2 ? kAllreduceDirectMax2 : nranks <= 4 ? kAllreduceDirectMax4 : kAllreduceDirectMaxMore;
  if (nranks <= 2) return 32 * 1024;
  if (coll == Coll::Allgather) return 16 * 1024;
  if (coll == Coll::Bcast) return nranks == 3 ? 128 * 1024 : 64 * 1024;
  return 64 * 1024;
}
// The tree on one node: from 8 ranks (at 4, ring + publish beats it at
// every size), to 64 KiB (measurements above).
constexpr size_t kTreeMaxBytes = 64 * 1024;
constexpr int kTreeMinRanks = 8;
// Those crossovers were all measured with ranks sharing the 2 cores, where
// a hop waits for its receiver to be scheduled.  On a node with a core for
// each rank, chorus_sim (2-socket preset, 8 to 64 ranks; perf/RESULTS.md,
// "Planner choices on a node of own cores, and across CPU nodes") puts
// recursive doubling (log2(n) exchanges of the whole vector) ahead of the one-shot and the tree (2 log2(n) hops) at
// latency-bound sizes with a power-of-two count (at 4 ranks from 1 KiB,
// the one-shot's 3 copies winning below), to 8 KiB up to 8 ranks, 1
// KiB a rank to 16 KiB, 512 B a rank beyond (64 ranks, 8 B: 4.8 us against
// the tree's 11.1; 32 KiB: 54 against 120); elsewhere the one-shot while
// the n blocks stay within 32 KiB (12 ranks, 4 KiB: 12.4 against publish's
// 13.9), or beyond its 16 ranks the tree to 192 B a rank (48 ranks, 8 KiB:
// 40 against 48; 16 KiB: 63 against 51); then ring + publish (8 ranks, 32
// KiB: 17 against the tree's 54).  Broadcast and allgather take publish
// (one write of each slice where the one-shot's core makes n - 1 copies;
// 8 ranks, 8 B: 0.8 us against 1.7; 64 KiB: 14 against 49), and from 16
// ranks (allgather 32) the reduce-scatter and allgather take recursive
// halving and doubling while their blocks fit a small slot (64 ranks, 8
// B: 4.9 us against the ring's 50).  A reduce takes the one-shot to 256 KiB
// (8 ranks, 128 KiB: 125 us against the chain's 212).  Setting CHORUS_DIRECT_MAX_BYTES or
// CHORUS_TREE_MAX_BYTES restores the measured rules.  Unmeasured: this
// machine has 2 cores.
constexpr size_t kOwnCoresDoublingSmallBytes = 8 * 1024, kOwnCoresDoublingBytesPerRank = 1024;
constexpr size_t kOwnCoresDirectBytes = 32 * 1024, kOwnCoresTreeBytesPerRank = 192;
constexpr size_t kOwnCoresReduceDirectBytes = 256 * 1024;
// Publish (allgather, bcast, and the allgather half of a ring allreduce)
// saves writes only from 3 ranks: at 2 the ring and chain write each byte
// as often (twice).  4 ranks, allreduce, ring against ring + publish:
// 2 MiB 833 vs 692 us, 8 MiB 3777 vs 3222 (two runs each agree within 6%).  4 ranks, ring against
// publish: allgather 2 MiB 211 vs 156 us, 32 MiB 7653 vs 5816; bcast 2 MiB
// 170 vs 123, 32 MiB 5134 vs 4796.
constexpr int kPublishMinRanks = 3;
// Alltoall, single copy against pairwise through the FIFOs (2026-12-01;
// sizes are the whole send buffer over all ranks, block = size / n^2):
//   CHORUS_ALGO=$a mpirun -np N --oversubscribe perf/alltoall_perf -b 64K -e 16M -f 4 [--sync] --mpi -w 3
// 4 ranks on 2 cores: the FIFOs win at every size, in both timings
// (16 MiB: 3.6-4.1 ms against 4.2-6.0; 4 MiB: 0.70-0.88 against
// 0.81-1.37), and stay 1.08x-3.6x Open MPI's.  8 ranks on 2 cores: from 1
// MiB (16 KiB blocks) the single copy ties or wins (16 MiB per call: 7.9-9.1
// ms against 9.4-9.8; 1 MiB 0.32-0.39 against 0.38-0.47; Open MPI's ratio
// 0.94-1.17 against 0.90-1.12), below it the FIFOs win (256 KiB: 91-109 us
// against 107-143).  So: ranks more than two to a core, blocks from 16 KiB.
constexpr size_t kSingleCopyMinBlock = size_t(16) << 10;
constexpr double kSingleCopyMinCpuShare = 2.0;

size_t limitFromParam(ParamId id, size_t measured) {
  int64_t v = paramInt(id);
  return v < 0 ? measured : size_t(v);
}

bool directFits(int nranks) { return nranks <= kMaxDirectRanks; }

enum class Forced { None, Ring, Tree, Direct, Publish, Hierarchical, RecursiveDoubling, Pairwise, SingleCopy, Bruck };

Forced forcedAlgo() {
  const char *algo = paramString(ParamId::Algo);
  if (!strcasecmp(algo, "ring")) return Forced::Ring;
  if (!strcasecmp(algo, "tree")) return Forced::Tree;
  if (!strcasecmp(algo, "direct")) return Forced::Direct;
  if (!strcasecmp(algo, "publish")) return Forced::Publish;
  if (!strcasecmp(algo, "hierarchical")) return Forced::Hierarchical;
  if (!strcasecmp(algo, "recursive_doubling")) return Forced::RecursiveDoubling;
  if (!strcasecmp(algo, "pairwise")) return Forced::Pairwise;
  if (!strcasecmp(algo, "single_copy")) return Forced::SingleCopy;
  if (!strcasecmp(algo, "bruck")) return Forced::Bruck;
  return Forced::None;
}
// CHORUS_ALGO, read once for both engines' plans.
Forced forcedSetting() {
  static const Forced forced = forcedAlgo();
  return forced;
}

const char *describeChoice(Algo best, double bestUs, const double *costs, const Algo *algos, int n) {
  thread_local char text[160];
  int len = snprintf(text, sizeof text, "cost model: %s %.1f us", algoName(best), bestUs);
  for (int i = 0; i < n && len > 0 && size_t(len) < sizeof text; ++i)
    if (algos[i] != best && costs[i] >= 0)
      len += snprintf(text + len, sizeof text - size_t(len), ", %s %.1f", algoName(algos[i]), costs[i]);
  return text;
}

// Reasons the own-cores rules and the measured ones share.
constexpr const char *kOneShotReason = "small message: one-shot is fastest";
constexpr const char *kTreeReason = "latency-bound size: tree depth log2(n) beats the ring's n-1 steps";

// Across nodes the model picks among the engine's algorithms (the kernels
// have no recursive doubling, and without a link to every remote peer no
// one-shot and no rooted tree); the size limits, when set, still bound the
// one-shot and the tree.
Plan cheapestAcrossNodes(Coll coll, size_t bytes, const PlanShape &shape, bool kernels, bool oneShot = true) {
  const bool rooted = coll == Coll::Bcast || coll == Coll::Reduce;
  const Algo ringLike = rooted ? Algo::Chain : Algo::Ring;
  const bool somePeers = kernels && !shape.kernelsEveryPeer;
  const bool directCapped =
      paramInt(ParamId::DirectMaxBytes) >= 0 &&
      bytes > limitFromParam(ParamId::DirectMaxBytes, directMaxBytes(coll, shape.nranks));
  const bool treeCapped =
      paramInt(ParamId::TreeMaxBytes) >= 0 && bytes > limitFromParam(ParamId::TreeMaxBytes, kTreeMaxBytes);
  const Algo candidates[] = {Algo::Direct, ringLike, Algo::Tree, Algo::Hierarchical, Algo::RecursiveDoubling};
  constexpr int kCandidates = int(sizeof candidates / sizeof candidates[0]);
  double costs[kCandidates];
  Algo best = ringLike;
  double bestUs = -1;
  for (int i = 0; i < kCandidates; ++i) {
    costs[i] = modelCostUs(coll, candidates[i], bytes, shape, kernels ? Engine::Kernels : Engine::Host);
    if ((candidates[i] == Algo::Direct && (directCapped || somePeers || !oneShot)) ||
        (candidates[i] == Algo::Tree && treeCapped) ||
        (candidates[i] == Algo::RecursiveDoubling && kernels))
      costs[i] = kCostNotApplicable;
    if (costs[i] >= 0 && (bestUs < 0 || costs[i] < bestUs)) {
      best = candidates[i];
      bestUs = costs[i];
    }
  }
  // Formatting the estimates costs more than the model: only for the log.
  if (!logEnabled(LogLevel::Info, kSubsysColl)) return {best, "cost model (CHORUS_DEBUG=INFO shows the estimates)"};
  return {best, describeChoice(best, bestUs, costs, candidates, kCandidates)};
}

// cpuRanks: the host engine's plan, whose ranks' cores do the copies (the
// kernels' take the measured rules, then planForKernels).
Plan planForHost(Coll coll, size_t bytes, const PlanShape &shape, bool cpuRanks) {
  const int nranks = shape.nranks;
  const bool severalNodes = shape.nnodes > 1;
  if (nranks == 1) return {Algo::Local, "a single rank"};
  // Settings are read once per process.  Those read here (CHORUS_ALGO and
  // the *_MAX_BYTES crossovers) are ParamScope::Agreed: a communicator's
  // set-up fails unless every rank has the same values, so every rank plans
  // alike (comm/settings_agree.h).
  const Forced forced = forcedSetting();
  if (coll == Coll::Alltoall) {
    const bool singleCopy = shape.singleCopy && nranks <= kMaxSingleCopyRanks;
    if (forced == Forced::SingleCopy && singleCopy) return {Algo::SingleCopy, "CHORUS_ALGO=single_copy"};
    if (forced == Forced::Bruck) return {Algo::Bruck, "CHORUS_ALGO=bruck"};
    // (A setting that names no alltoall algorithm leaves the choice here.)
    const bool planned = forced != Forced::Pairwise && forced != Forced::SingleCopy;
    if (planned && !allPeerLinksFit(shape))
      return {Algo::Bruck, "every remote peer's FIFO copies would pass 32 MiB: log2(n) rounds, 2 log2(n) peers"};
    // (From 8 ranks across nodes, 16 on one: below, a message to each
    // peer costs about as much as the rounds, which the model misses:
    // chorus_sim, 2socket, 8 B: 4 x 1 ranks pairwise 6.0 us, Bruck 8.0;
    // 1 x 4 and 1 x 8 pairwise 1.10 and 2.11, Bruck 1.61 and 2.42.
    // With a core per rank only: where ranks share cores each round waits
    // for its partner to be scheduled, and on 4 ranks on 2 cores, 2x2 and
    // every rank its own node over tcp, Bruck measured 0.85-1.0x
    // pairwise's time at 16 B blocks, 1.1-1.5x at 1 KiB: perf/RESULTS.md.)
    const bool manyRanks = nranks >= (severalNodes ? 8 : 16);
    if (planned && shape.cpuShare <= 1.0 && manyRanks &&
        modelCostUs(coll, Algo::Bruck, bytes, shape) < modelCostUs(coll, Algo::Pairwise, bytes, shape))
      return {Algo::Bruck, "cost model: log2(n) packed rounds cost less than a message to every peer"};
    if (forced == Forced::None && singleCopy && shape.cpuShare > kSingleCopyMinCpuShare && bytes >= kSingleCopyMinBlock)
      return {Algo::SingleCopy, "ranks crowd the cores: one copy per block and two hand-offs per peer, not one per slot"};
    return {Algo::Pairwise, "a FIFO message per slice, partners in turn"};
  }
  if (coll == Coll::Barrier) {
    if (forced == Forced::Direct && directFits(nranks)) return {Algo::Direct, "CHORUS_ALGO=direct"};
    if (forced == Forced::None && shape.cpuShare > 1 && directFits(nranks))
      return {Algo::Direct, "ranks share cores: the flat barrier's two hand-offs beat log2(n) pairwise rounds"};
    return {Algo::Dissemination, "log2(n) pairwise rounds"};
  }

  const bool rooted = coll == Coll::Bcast || coll == Coll::Reduce;
  // Across nodes bcast and reduce also have a tree (bcast_tree.h, reduce_tree.h).
  const bool hasTree = coll == Coll::Allreduce || (rooted && severalNodes);
  const Algo ringLike = rooted ? Algo::Chain : Algo::Ring;
  if (forced == Forced::Ring) return {ringLike, "CHORUS_ALGO=ring"};
  if (forced == Forced::Tree && hasTree) return {Algo::Tree, "CHORUS_ALGO=tree"};
  if (forced == Forced::Direct && directFits(nranks)) return {Algo::Direct, "CHORUS_ALGO=direct"};
  const bool hasPublish = !severalNodes && (coll == Coll::Allgather || coll == Coll::Bcast || coll == Coll::Allreduce);
  if (forced == Forced::Publish && hasPublish) return {Algo::Publish, "CHORUS_ALGO=publish"};
  const bool hasHierarchy = coll == Coll::Allreduce && shape.equalNodes;
  if (forced == Forced::Hierarchical && hasHierarchy) return {Algo::Hierarchical, "CHORUS_ALGO=hierarchical"};
  const bool hasRecursiveDoubling =
      (coll == Coll::Allreduce || coll == Coll::Allgather || coll == Coll::ReduceScatter) && isPowerOfTwo(nranks);
  if (forced == Forced::RecursiveDoubling && hasRecursiveDoubling)
    return {Algo::RecursiveDoubling, "CHORUS_ALGO=recursive_doubling"};

  const size_t directMax = limitFromParam(ParamId::DirectMaxBytes, directMaxBytes(coll, nranks));
  const size_t treeMax = limitFromParam(ParamId::TreeMaxBytes, kTreeMaxBytes);
  if (severalNodes) return cheapestAcrossNodes(coll, bytes, shape, false);

  // More than 2 ranks on a node with a core for each (the crossovers above
  // were measured with them sharing 2 cores): chorus_sim's rules first.
  const bool ownCores = cpuRanks && shape.cpuShare <= 1.0;
  const bool limitsSet = paramInt(ParamId::DirectMaxBytes) >= 0 || paramInt(ParamId::TreeMaxBytes) >= 0;
  if (ownCores && !limitsSet) {
    const size_t n = size_t(nranks), allBlocks = bytes * n;
    if (coll == Coll::Allreduce && nranks >= 4 && isPowerOfTwo(nranks) && (nranks > 4 || bytes > 1024) &&
        bytes <= std::min(std::max(kOwnCoresDoublingSmallBytes, kOwnCoresDoublingBytesPerRank * n),
                          std::max(2 * kOwnCoresDoublingSmallBytes, kOwnCoresDoublingBytesPerRank / 2 * n)))
      return {Algo::RecursiveDoubling, "a core per rank, latency-bound size: log2(n) exchanges"};
    const int halvingMinRanks = coll == Coll::Allgather ? 32 : 16;
    if ((coll == Coll::Allgather || coll == Coll::ReduceScatter) && nranks >= halvingMinRanks &&
        isPowerOfTwo(nranks) && allBlocks <= kSmallFifoSlotBytes)
      return {Algo::RecursiveDoubling, "a core per rank, many ranks: log2(n) exchanges of growing blocks"};
    if (coll == Coll::Reduce && nranks > 2 && directFits(nranks) && bytes <= kOwnCoresReduceDirectBytes)
      return {Algo::Direct, "a core per rank: the root folds every peer's vector as it comes"};
    if ((coll == Coll::Bcast || coll == Coll::Allgather) && hasPublish && nranks >= kPublishMinRanks)
      return {Algo::Publish, "a core per rank: each slice written once, read by every rank at once"};
    if (coll == Coll::Allreduce && nranks > 2) {
      if (directFits(nranks) && allBlocks <= kOwnCoresDirectBytes)
        return {Algo::Direct, kOneShotReason};
      if (!directFits(nranks) && nranks >= kTreeMinRanks && bytes <= kOwnCoresTreeBytesPerRank * n)
        return {Algo::Tree, kTreeReason};
      return {Algo::Publish, "a core per rank: ring + publish beats the one-shot's copies and the tree"};
    }
  }
  if (bytes <= directMax && directFits(nranks)) return {Algo::Direct, kOneShotReason};
  if (coll == Coll::Allreduce && nranks == 2)  // (a power of two: recursive doubling applies)
    return {Algo::RecursiveDoubling, "2 ranks: one exchange of the whole vector and a fold beat the ring's two half steps"};
  if (coll == Coll::Allreduce && nranks >= kTreeMinRanks && bytes <= treeMax)
    return {Algo::Tree, kTreeReason};
  if (hasPublish && nranks >= kPublishMinRanks)
    return {Algo::Publish, "large message: each finished slice written once, read by every rank"};
  return {ringLike, "bandwidth-bound size: pipelined ring"};
}

// What the kernels run where the host plan names an algorithm they lack
// (recursive doubling, publish, single copy): the ring, the chain for the
// rooted ones.  They have the trees across nodes and the hierarchical
// allreduce (rail-aligned between nodes: kernels_impl.cuh).
//
// Except the one-shots, which the kernels keep further than the host does
// (allreduce first, then, the same argument, the others with a one-shot:
// broadcast, reduce, allgather, reduce-scatter, 8 GPUs at 128 KiB: 4.7-7.3
// us against the host rules' 12): a GPU's one-shot takes (n - 1) vectors through its NVLink port
// in one latency, where the ring and tree pay 2(n - 1) or 2 log2(n) kernel
// hand-offs of about a microsecond.  chorus_sim (8xH100 preset, whose ring
// matches NCCL's published busbw within 8%) puts the crossover with the
// ring at 2 MiB on 2 GPUs, 512 KiB-1 MiB on 4 and 256-512 KiB on 8, where
// the host plan takes the ring from 64 KiB (2 ranks) and the tree at 32
// KiB on 8 (predicted 4x slower there); half that fan-in keeps a margin for
// the model's latencies, which no GPU has checked yet (perf/RESULTS.md,
// the scale simulator).  CHORUS_DIRECT_MAX_BYTES overrides it.
constexpr size_t kKernelsDirectFanInBytes = size_t(1) << 20;
// Across nodes a GPU's one-shot also queues the node's vectors through its
// NICs: m (n - m) of them each way, m ranks a node.  chorus_sim puts the
// crossover with the hierarchy, the tree and the ring where that queue
// takes 2.6-5.2 us (2 nodes: 8 H100 with 8 NICs of 400 Gb/s, 16-32 KiB;
// 4 GH200 with 4, 32-64 KiB; 8 A100 with 4 of 200 Gb/s, 8 KiB), where the
// fan-in rule alone kept it to 64 KiB, 1.1-2.1x slower there.
constexpr double kKernelsDirectNicQueueUs = 4.0;

Plan planForKernels(Coll coll, size_t bytes, const PlanShape &shape, const Plan &host) {
  const Forced forced = forcedSetting();
  const int n = shape.nranks;
  // Links to a few remote peers only (cuda/device_links.h): no one-shot,
  // which reaches beyond them, even where asked for; the model's cheapest
  // of what the links reach instead.  (Bcast and reduce trees keep to
  // them: patterns.h, nodeTreeOnLinks.)
  const bool somePeers = shape.nnodes > 1 && !shape.kernelsEveryPeer;
  const bool rooted = coll == Coll::Bcast || coll == Coll::Reduce;
  if (somePeers && host.algo == Algo::Direct) return cheapestAcrossNodes(coll, bytes, shape, true);
  // Where the nodes' NICs are known and no limit is set, the NICs' queue
  // bounds the one-shot across nodes too; past it, not even the host
  // plan's one-shot.
  const double m = shape.maxNodeRanks;
  const bool nicQueueLong = shape.nnodes > 1 && shape.kernelsNodeNetBytesPerUs > 0 &&
                            paramInt(ParamId::DirectMaxBytes) < 0 && forced == Forced::None &&
                            m * (n - m) * double(bytes) > kKernelsDirectNicQueueUs * shape.kernelsNodeNetBytesPerUs;
  const bool modelled = (coll == Coll::Allreduce || rooted) && shape.nnodes > 1 &&
                        shape.kernelsNodeNetBytesPerUs > 0 && forced == Forced::None;
  if (!somePeers && !nicQueueLong && coll != Coll::Alltoall && coll != Coll::Barrier && forced == Forced::None &&
      host.algo != Algo::Local && n >= 2 && directFits(n) &&
      bytes <= limitFromParam(ParamId::DirectMaxBytes, kKernelsDirectFanInBytes / size_t(n - 1))) {
    // A bcast or reduce across GPU nodes: the one-shot only where the
    // model has it cheaper than the tree and the chain (chorus_sim, 3 x 4
    // GH200, 8 B broadcast: the one-shot's 8 messages from the root's NIC
    // 11.6 us, the tree 9.4), unless CHORUS_DIRECT_MAX_BYTES says where.
    if (modelled && rooted && paramInt(ParamId::DirectMaxBytes) < 0) {
      const Plan other = cheapestAcrossNodes(coll, bytes, shape, true, false);
      if (modelCostUs(coll, other.algo, bytes, shape, Engine::Kernels) <
          kernelsRootedCostUs(coll, Algo::Direct, bytes, shape))
        return other;
    }
    return {Algo::Direct, "device buffers: one-shot while (n - 1) x the vector stays under 1 MiB"};
  }
  if (nicQueueLong && host.algo == Algo::Direct)
    return cheapestAcrossNodes(coll, bytes, shape, true, false);
  // Past the one-shot, an allreduce, bcast or reduce across GPU nodes
  // whose NICs are known takes the cheapest of its ring or chain, tree and
  // hierarchy by the kernels' own model, not the host plan's measured
  // constants (tuner_kernels.cc).
  if (modelled) return cheapestAcrossNodes(coll, bytes, shape, true, false);
  switch (host.algo) {
    case Algo::Local:
    case Algo::Direct:
    case Algo::Ring:
    case Algo::Chain:
    case Algo::Pairwise:
      return host;
    case Algo::Tree:  // (bcast and reduce have one across nodes: the node tree)
      return host;
    case Algo::Hierarchical:  // (nodes of equal size: the kernels have the rails)
      if (coll == Coll::Allreduce && shape.equalNodes) return host;
      break;
    case Algo::RecursiveDoubling:
      // Across nodes the next best by the same model, not the ring: at 16
      // nodes of 8 GPUs an 8-byte allreduce by the ring's 254 steps took
      // 440 us in chorus_sim, by the tree 59.
      if (shape.nnodes > 1 && forcedSetting() == Forced::None) return cheapestAcrossNodes(coll, bytes, shape, true);
      break;
    default:
      break;
  }
  if (coll == Coll::Alltoall) return {Algo::Pairwise, "device buffers: the kernels' pairwise exchange"};
  if (coll == Coll::Bcast || coll == Coll::Reduce) return {Algo::Chain, "device buffers: the kernels' chain"};
  return {Algo::Ring, "device buffers: the kernels' ring"};
}

}  // namespace

Plan planCollective(Coll coll, size_t bytes, const PlanShape &shape, Engine engine) {
  const Plan host = planForHost(coll, bytes, shape, engine == Engine::Host);
  return engine == Engine::Kernels ? planForKernels(coll, bytes, shape, host) : host;
}

}  // namespace chorus
