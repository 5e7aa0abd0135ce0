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

// Crossovers, measured on the 2-core development machine (host memory,
// float sum, Open MPI 4.1 + Chorus 0018b9b, 2026-11-30):
//   for a in direct ring tree; do CHORUS_ALGO=$a mpirun -np N --oversubscribe \
//     perf/allreduce_perf -b 4K -e 2M -f 2 -n 100 -c 0; done
// 2 ranks: one-shot fastest up to 32 KiB (3.8 us vs ring 4.0), ring from
//   64 KiB (6.5 vs 7.6); the tree never wins.
// 4 ranks (oversubscribed): one-shot up to 64 KiB (41.6 us vs tree 42.5,
//   ring 50.6), tree at 128 KiB (57.9 vs ring 64.8) and 256 KiB (tie),
//   ring from 512 KiB (146 vs tree 152, one-shot 230).
// The allgather, broadcast and reduce-scatter one-shots use the same
// limits (not measured separately).  CHORUS_DIRECT_MAX_BYTES and
// CHORUS_TREE_MAX_BYTES override them.
size_t directMaxBytes(int nranks) { return nranks <= 2 ? 32 * 1024 : 64 * 1024; }
constexpr size_t kTreeMaxBytes = 256 * 1024;
constexpr int kTreeMinRanks = 4;

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

  const size_t directMax = limitFromParam(ParamId::DirectMaxBytes, directMaxBytes(nranks));
  if (bytes <= directMax && directFits(nranks)) return {Algo::Direct, "small message: one-shot is fastest"};
  const size_t treeMax = limitFromParam(ParamId::TreeMaxBytes, kTreeMaxBytes);
  if (hasTree && nranks >= kTreeMinRanks && bytes <= treeMax)
    return {Algo::Tree, "latency-bound size: tree depth log2(n) beats the ring's n-1 steps"};
  return {ringLike, "bandwidth-bound size: pipelined ring"};
}

}  // namespace chorus
