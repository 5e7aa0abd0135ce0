// Hierarchical allreduce, for communicators spanning several nodes of equal
// size m: a ring reduce-scatter inside each node leaves local rank i with
// the node's sum of block i; a ring allreduce among the ranks of local index
// i (one per node) completes that block; a ring allgather inside each node
// gives everyone every block.  Only 2(m-1)/m of the data crosses the node
// boundary per rank-pair, instead of a flat ring's every hop that leaves a
// node, and the inter-node rings are nnodes long, not nranks.
//
// Each phase runs the ordinary template on a group: CollArgs with the
// group's rank and size, and primitives that map the group's indices to
// communicator ranks (HostPrims through HostChannel::group; the simulator's
// through its own map).  Elements past the last whole block (count % m) go
// through a flat ring allreduce.  The host executor, the simulator and the
// kernels run it (kernels_impl.cuh: a launch per phase, the groups' ranks
// in device memory); on the kernels the middle phase is rail-aligned,
// local rank i of each node talking only to local rank i of the others,
// over the device proxy's links.
#pragma once

#include "coll/allgather_ring.h"
#include "coll/allreduce_ring.h"
#include "coll/functors.h"
#include "coll/reduce_scatter_ring.h"

namespace chorus {

// The functor of the first phase: AVG must not divide there (the second
// phase's finalize divides the full sum by nranks).
template <typename Func> struct PartialSum { using type = Func; };
template <typename T> struct PartialSum<FuncAvg<T>> { using type = FuncSum<T>; };

// The four phases, each a ring on a group (the tail on everyone).
constexpr int kHierarchyPhases = 4;
struct HierarchyPhase {
  CollArgs args;      // the group's rank and size, the phase's buffers
  const int *ranks;   // the group (indices into it are its ranks); null: everyone
  bool partialSum;    // AVG must not divide yet
};

// Phase `phase` of the allreduce `a`; false: it has nothing to do (no whole
// block, or no tail).
template <typename T>
CHORUS_HOST_DEVICE bool hierarchyPhase(const CollArgs &a, const HierarchyGroups &h, int phase, HierarchyPhase *out) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  const int m = h.nlocal, li = h.localIndex;
  const size_t q = a.count / size_t(m);  // elements per block
  CollArgs g = a;
  g.count = q;
  g.ringOrder = g.ringWhere = nullptr;  // a group's ring runs in its own order
  g.nodes = nullptr;
  g.rank = li;
  g.nranks = m;
  out->ranks = h.localRanks;
  out->partialSum = false;
  switch (phase) {
    case 0:  // node: block li of the node's sum, in place at its final offset
      g.sendbuf = src;
      g.recvbuf = dst + size_t(li) * q;
      out->partialSum = true;
      break;
    case 1:  // across nodes: block li complete (and finalized)
      g.rank = h.crossIndex;
      g.nranks = h.ncross;
      g.sendbuf = g.recvbuf = dst + size_t(li) * q;
      out->ranks = h.crossRanks;
      break;
    case 2:  // node: every block to every local rank
      g.sendbuf = dst + size_t(li) * q;
      g.recvbuf = dst;
      break;
    default:  // the tail: a flat ring over everyone
      g = a;
      g.sendbuf = src + q * size_t(m);
      g.recvbuf = dst + q * size_t(m);
      g.count = a.count - q * size_t(m);
      out->ranks = nullptr;
      out->args = g;
      return g.count > 0;
  }
  out->args = g;
  return q > 0;
}

// Phase `phase`'s ring, with primitives on its group.
template <typename T, typename Prims>
CHORUS_HOST_DEVICE void runHierarchyPhase(int phase, const CollArgs &g, Prims &prims) {
  if (phase == 0) reduceScatterRing<T>(g, prims);
  else if (phase == 2) allgatherRing<T>(g, prims);
  else allreduceRing<T>(g, prims);
}

// `onGroup(ranks, partialSum, body)` runs body(prims) with primitives whose
// peers are indices into `ranks` (with partialSum, a sum that AVG does not
// divide yet) and returns whether the collective is still ok.  (The
// kernels run the phases themselves: kernels_impl.cuh.)
template <typename T, typename OnGroup>
void allreduceHierarchical(const CollArgs &a, const HierarchyGroups &h, OnGroup &&onGroup) {
  bool ok = true;
  for (int phase = 0; phase < kHierarchyPhases && ok; ++phase) {
    HierarchyPhase p;
    if (!hierarchyPhase<T>(a, h, phase, &p)) continue;
    ok = onGroup(p.ranks, p.partialSum, [&](auto &prims) { runHierarchyPhase<T>(phase, p.args, prims); });
  }
}

}  // namespace chorus
