// Hierarchical allreduce, for communicators spanning several nodes of equal
// size m: a ring reduce-scatter inside each node leaves local rank i with
// the node's sum of block i; a ring allreduce among the ranks of local index
// i (one per node) completes that block; a ring allgather inside each node
// gives everyone every block.  Only 2(m-1)/m of the data crosses the node
// boundary per rank-pair, instead of a flat ring's every hop that leaves a
// node, and the inter-node rings are nnodes long, not nranks.
//
// Each phase runs the ordinary template on a group: CollArgs with the
// group's rank and size, and the channel's `group` mapping the group's
// indices to communicator ranks (HostPrims::connect).  Elements past the
// last whole block (count % m) go through a flat ring allreduce.
// Host executor only: device buffers never span nodes.
#pragma once

#include "coll/allgather_ring.h"
#include "coll/allreduce_ring.h"
#include "coll/functors.h"
#include "coll/host_channel.h"
#include "coll/prims_host.h"
#include "coll/reduce_scatter_ring.h"

namespace chorus {

// The functor of the first phase: AVG must not divide there (the second
// phase's finalize divides the full sum by nranks).
template <typename Func> struct PartialSum { using type = Func; };
template <typename T> struct PartialSum<FuncAvg<T>> { using type = FuncSum<T>; };

template <typename T, typename Func>
void allreduceHierarchical(const CollArgs &a, HostChannel &ch) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  const int m = ch.nlocal, li = ch.localIndex;
  const size_t q = a.count / size_t(m);  // elements per block
  auto inGroup = [&](const int *ranks, int index, int size) {
    CollArgs g = a;
    g.rank = index;
    g.nranks = size;
    g.ringOrder = g.ringWhere = nullptr;  // a group's ring runs in its own order
    g.nodes = nullptr;
    ch.group = ranks;
    return g;
  };
  if (q > 0) {
    {  // 1. node: block li of the node's sum, in place at its final offset
      HostPrims<T, typename PartialSum<Func>::type> prims(ch);
      CollArgs g = inGroup(ch.localRanks, li, m);
      g.sendbuf = src;
      g.recvbuf = dst + size_t(li) * q;
      g.count = q;
      reduceScatterRing<T>(g, prims);
    }
    if (ch.error == Status::Ok) {  // 2. across nodes: block li complete (and finalized)
      HostPrims<T, Func> prims(ch);
      CollArgs g = inGroup(ch.crossRanks, ch.crossIndex, ch.ncross);
      g.sendbuf = g.recvbuf = dst + size_t(li) * q;
      g.count = q;
      allreduceRing<T>(g, prims);
    }
    if (ch.error == Status::Ok) {  // 3. node: every block to every local rank
      HostPrims<T, Func> prims(ch);
      CollArgs g = inGroup(ch.localRanks, li, m);
      g.sendbuf = dst + size_t(li) * q;
      g.recvbuf = dst;
      g.count = q;
      allgatherRing<T>(g, prims);
    }
  }
  ch.group = nullptr;
  const size_t rest = a.count - q * size_t(m);
  if (rest > 0 && ch.error == Status::Ok) {  // the tail: a flat ring over everyone
    HostPrims<T, Func> prims(ch);
    CollArgs g = a;
    g.sendbuf = src + q * size_t(m);
    g.recvbuf = dst + q * size_t(m);
    g.count = rest;
    allreduceRing<T>(g, prims);
  }
}

}  // namespace chorus
