#include <strings.h>

#include "coll/algorithms.h"
#include "coll/allreduce_direct.h"
#include "core/params.h"

namespace chorus {

const char *collName(Coll c) {
  static const char *const names[] = {"allreduce", "reduce", "bcast", "allgather", "reduce_scatter_block",
                                      "alltoall", "barrier"};
  return c < Coll::Count ? names[int(c)] : "?";
}

const char *algoName(Algo a) {
  static const char *const names[] = {"ring", "tree", "direct", "chain", "pairwise", "dissemination", "local",
                                      "publish", "hierarchical"};
  return a < Algo::Count ? names[int(a)] : "?";
}

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
size_t directMaxBytes(Coll coll, int nranks) {
  if (nranks <= 2) return 32 * 1024;
  if (coll == Coll::Allgather) return 16 * 1024;
  if (coll == Coll::Bcast) return nranks == 3 ? 128 * 1024 : 64 * 1024;
  return 64 * 1024;
}
constexpr size_t kTreeMaxBytes = 256 * 1024;
constexpr int kTreeMinRanks = 4;
// Publish (allgather, bcast, and the allgather half of a ring allreduce)
// saves writes only from 3 ranks: at 2 the ring and chain write each byte
// as often (twice).  4 ranks, allreduce, ring against ring + publish:
// 2 MiB 833 vs 692 us, 8 MiB 3777 vs 3222 (two runs each agree within 6%).  4 ranks, ring against
// publish: allgather 2 MiB 211 vs 156 us, 32 MiB 7653 vs 5816; bcast 2 MiB
// 170 vs 123, 32 MiB 5134 vs 4796.
constexpr int kPublishMinRanks = 3;

size_t limitFromParam(ParamId id, size_t measured) {
  int64_t v = paramInt(id);
  return v < 0 ? measured : size_t(v);
}

bool directFits(int nranks) { return nranks <= kMaxDirectRanks; }

enum class Forced { None, Ring, Tree, Direct, Publish, Hierarchical };

Forced forcedAlgo() {
  const char *algo = paramString(ParamId::Algo);
  if (!strcasecmp(algo, "ring")) return Forced::Ring;
  if (!strcasecmp(algo, "tree")) return Forced::Tree;
  if (!strcasecmp(algo, "direct")) return Forced::Direct;
  if (!strcasecmp(algo, "publish")) return Forced::Publish;
  if (!strcasecmp(algo, "hierarchical")) return Forced::Hierarchical;
  return Forced::None;
}

}  // namespace

Plan planCollective(Coll coll, size_t bytes, int nranks, bool equalNodes) {
  if (nranks == 1) return {Algo::Local, "a single rank"};
  if (coll == Coll::Barrier) return {Algo::Dissemination, "the only barrier"};
  if (coll == Coll::Alltoall) return {Algo::Pairwise, "the only alltoall"};

  const bool hasTree = coll == Coll::Allreduce;
  const Algo ringLike = (coll == Coll::Bcast || coll == Coll::Reduce) ? Algo::Chain : Algo::Ring;
  static const Forced forced = forcedAlgo();  // settings are read once per process
  if (forced == Forced::Ring) return {ringLike, "CHORUS_ALGO=ring"};
  if (forced == Forced::Tree && hasTree) return {Algo::Tree, "CHORUS_ALGO=tree"};
  if (forced == Forced::Direct && directFits(nranks)) return {Algo::Direct, "CHORUS_ALGO=direct"};
  const bool hasPublish = coll == Coll::Allgather || coll == Coll::Bcast || coll == Coll::Allreduce;
  if (forced == Forced::Publish && hasPublish) return {Algo::Publish, "CHORUS_ALGO=publish"};
  if (forced == Forced::Hierarchical && hasTree && equalNodes) return {Algo::Hierarchical, "CHORUS_ALGO=hierarchical"};

  const size_t directMax = limitFromParam(ParamId::DirectMaxBytes, directMaxBytes(coll, nranks));
  if (bytes <= directMax && directFits(nranks)) return {Algo::Direct, "small message: one-shot is fastest"};
  const size_t treeMax = limitFromParam(ParamId::TreeMaxBytes, kTreeMaxBytes);
  if (hasTree && nranks >= kTreeMinRanks && bytes <= treeMax)
    return {Algo::Tree, "latency-bound size: tree depth log2(n) beats the ring's n-1 steps"};
  if (hasTree && equalNodes)
    return {Algo::Hierarchical, "bandwidth-bound size on several nodes: reduce-scatter in the node, allreduce "
                                "across, allgather in the node"};
  if (hasPublish && nranks >= kPublishMinRanks)
    return {Algo::Publish, "large message: each finished slice written once, read by every rank"};
  return {ringLike, "bandwidth-bound size: pipelined ring"};
}

}  // namespace chorus
