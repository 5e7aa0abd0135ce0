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
  static const char *const names[] = {"ring", "tree", "direct", "chain", "pairwise", "dissemination", "local"};
  return a < Algo::Count ? names[int(a)] : "?";
}

namespace {

// Provisional crossovers, not yet measured (the perf issue sweeps
// perf/allreduce_perf under CHORUS_ALGO=ring|tree|direct to set them): the
// one-shot algorithm while a message is small against one 256 KiB slot, the
// tree only for latency-bound sizes with more than 4 ranks.
constexpr size_t kDirectMaxBytes = 64 * 1024;
constexpr size_t kTreeMaxBytes = 256 * 1024;
constexpr int kTreeMinRanks = 5;

size_t limitFromParam(ParamId id, size_t measured) {
  int64_t v = paramInt(id);
  return v < 0 ? measured : size_t(v);
}

bool directFits(int nranks) { return nranks <= kMaxDirectRanks; }

enum class Forced { None, Ring, Tree, Direct };

Forced forcedAlgo() {
  const char *algo = paramString(ParamId::Algo);
  if (!strcasecmp(algo, "ring")) return Forced::Ring;
  if (!strcasecmp(algo, "tree")) return Forced::Tree;
  if (!strcasecmp(algo, "direct")) return Forced::Direct;
  return Forced::None;
}

}  // namespace

Plan planCollective(Coll coll, size_t bytes, int nranks) {
  if (nranks == 1) return {Algo::Local, "a single rank"};
  if (coll == Coll::Barrier) return {Algo::Dissemination, "the only barrier"};
  if (coll == Coll::Alltoall) return {Algo::Pairwise, "the only alltoall"};

  const bool hasTree = coll == Coll::Allreduce;
  const Algo ringLike = (coll == Coll::Bcast || coll == Coll::Reduce) ? Algo::Chain : Algo::Ring;
  static const Forced forced = forcedAlgo();  // settings are read once per process
  if (forced == Forced::Ring) return {ringLike, "CHORUS_ALGO=ring"};
  if (forced == Forced::Tree && hasTree) return {Algo::Tree, "CHORUS_ALGO=tree"};
  if (forced == Forced::Direct && directFits(nranks)) return {Algo::Direct, "CHORUS_ALGO=direct"};

  const size_t directMax = limitFromParam(ParamId::DirectMaxBytes, kDirectMaxBytes);
  if (bytes <= directMax && directFits(nranks)) return {Algo::Direct, "small message: one-shot is fastest"};
  const size_t treeMax = limitFromParam(ParamId::TreeMaxBytes, kTreeMaxBytes);
  if (hasTree && nranks >= kTreeMinRanks && bytes <= treeMax)
    return {Algo::Tree, "latency-bound size: tree depth log2(n) beats the ring's n-1 steps"};
  return {ringLike, "bandwidth-bound size: pipelined ring"};
}

}  // namespace chorus
