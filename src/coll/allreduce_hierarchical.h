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
// through a flat ring allreduce.  Host executor and simulator only: device
// buffers never span nodes.
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

// This rank's two groups: the ranks of its node (local index i of m), and
// the ranks of local index i on every node (cross).
struct HierarchyGroups {
  const int *localRanks;
  int nlocal, localIndex;
  const int *crossRanks;
  int ncross, crossIndex;
};

// `onGroup(ranks, partialSum, body)` runs body(prims) with primitives whose
// peers are indices into `ranks` (with partialSum, a sum that AVG does not
// divide yet) and returns whether the collective is still ok.
template <typename T, typename OnGroup>
void allreduceHierarchical(const CollArgs &a, const HierarchyGroups &h, OnGroup &&onGroup) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  const int m = h.nlocal, li = h.localIndex;
  const size_t q = a.count / size_t(m);  // elements per block
  auto inGroup = [&](int index, int size) {
    CollArgs g = a;
    g.rank = index;
    g.nranks = size;
    g.ringOrder = g.ringWhere = nullptr;  // a group's ring runs in its own order
    g.nodes = nullptr;
    return g;
  };
  bool ok = true;
  if (q > 0) {
    // 1. node: block li of the node's sum, in place at its final offset
    CollArgs g = inGroup(li, m);
    g.sendbuf = src;
    g.recvbuf = dst + size_t(li) * q;
    g.count = q;
    ok = onGroup(h.localRanks, true, [&](auto &prims) { reduceScatterRing<T>(g, prims); });
    if (ok) {  // 2. across nodes: block li complete (and finalized)
      g = inGroup(h.crossIndex, h.ncross);
      g.sendbuf = g.recvbuf = dst + size_t(li) * q;
      g.count = q;
      ok = onGroup(h.crossRanks, false, [&](auto &prims) { allreduceRing<T>(g, prims); });
    }
    if (ok) {  // 3. node: every block to every local rank
      g = inGroup(li, m);
      g.sendbuf = dst + size_t(li) * q;
      g.recvbuf = dst;
      g.count = q;
      ok = onGroup(h.localRanks, false, [&](auto &prims) { allgatherRing<T>(g, prims); });
    }
  }
  const size_t rest = a.count - q * size_t(m);
  if (rest > 0 && ok) {  // the tail: a flat ring over everyone
    CollArgs g = a;
    g.sendbuf = src + q * size_t(m);
    g.recvbuf = dst + q * size_t(m);
    g.count = rest;
    onGroup(nullptr, false, [&](auto &prims) { allreduceRing<T>(g, prims); });
  }
}

}  // namespace chorus
