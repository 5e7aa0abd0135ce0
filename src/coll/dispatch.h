// Which algorithm template runs a collective: one dispatch for every engine
// that speaks the primitives' verbs, the host executor (HostPrims,
// host_executor.cc) and the simulator (SimPrims, tools/sim), so that what
// the simulator times is the library's own schedule, message for message.
// The choice of `algo` is the planner's (tuner.cc); here a plan the data or
// the channel cannot run (publish without rings, a tree without a node
// layout...) falls back as the executor always has.
#pragma once

#include "coll/allgather_recursive_doubling.h"
#include "coll/allgather_ring.h"
#include "coll/allreduce_direct.h"
#include "coll/allreduce_recursive_doubling.h"
#include "coll/allreduce_ring.h"
#include "coll/allreduce_tree.h"
#include "coll/alltoall_bruck.h"
#include "coll/alltoall_pairwise.h"
#include "coll/alltoall_single_copy.h"
#include "coll/barrier_dissemination.h"
#include "coll/barrier_flat.h"
#include "coll/bcast_chain.h"
#include "coll/bcast_tree.h"
#include "coll/direct_collectives.h"
#include "coll/publish_collectives.h"
#include "coll/reduce_chain.h"
#include "coll/reduce_scatter_recursive_halving.h"
#include "coll/reduce_scatter_ring.h"
#include "coll/reduce_tree.h"
#include "core/collective.h"

namespace chorus {

// Allreduce, reduce and reduce-scatter, but for the hierarchical allreduce
// (allreduce_hierarchical.h), which needs groups of ranks and which the
// caller runs itself when it applies; here it falls back to the ring.
template <typename T, typename Prims>
void runReductionAlgorithm(const CollArgs &a, Coll coll, Algo algo, Prims &prims, T *scratch) {
  switch (coll) {
    case Coll::Allreduce:
      if (algo == Algo::Local) {
        const T *src = static_cast<const T *>(a.sendbuf);
        for (size_t off = 0; off < a.count; off += a.sliceElems)
          prims.localCopy(src + off, static_cast<T *>(a.recvbuf) + off, minSize(a.sliceElems, a.count - off));
      } else if (algo == Algo::Tree) {
        allreduceTree<T>(a, prims);
      } else if (algo == Algo::Direct) {
        allreduceDirect<T>(a, prims, scratch);
      } else if (algo == Algo::Publish && prims.canPublish()) {
        allreduceRingPublish<T>(a, prims);
      } else if (algo == Algo::RecursiveDoubling && isPowerOfTwo(a.nranks)) {
        allreduceRecursiveDoubling<T>(a, prims);
      } else {
        allreduceRing<T>(a, prims);
      }
      break;
    case Coll::Reduce:
      if (algo == Algo::Direct || algo == Algo::Local) reduceDirect<T>(a, prims, scratch);
      else if (algo == Algo::Tree && a.nodes) reduceTree<T>(a, prims);
      else reduceChain<T>(a, prims);
      break;
    case Coll::ReduceScatter:
      if (algo == Algo::RecursiveDoubling && reduceScatterRecursiveHalvingFits(a))
        reduceScatterRecursiveHalving<T>(a, prims, scratch);
      else if (algo == Algo::Direct || algo == Algo::Local) reduceScatterDirect<T>(a, prims, scratch);
      else reduceScatterRing<T>(a, prims);
      break;
    default:
      break;
  }
}

// Broadcast, allgather, alltoall and barrier: bytes only (`a.count` in
// bytes), the reduction functor never applied.  `scratch`: a slice of
// private memory (Bruck's packing).
template <typename Prims>
void runCopyAlgorithm(const CollArgs &a, Coll coll, Algo algo, Prims &prims, uint8_t *scratch) {
  using Bytes = uint8_t;
  switch (coll) {
    case Coll::Bcast:
      if (algo == Algo::Direct) bcastDirect<Bytes>(a, prims);
      else if (algo == Algo::Publish && prims.canPublish()) bcastPublish<Bytes>(a, prims);
      else if (algo == Algo::Tree && a.nodes) bcastTree<Bytes>(a, prims);
      else if (algo != Algo::Local) bcastChain<Bytes>(a, prims);
      break;
    case Coll::Allgather:
      if (algo == Algo::RecursiveDoubling && allgatherRecursiveDoublingFits(a)) allgatherRecursiveDoubling<Bytes>(a, prims);
      else if (algo == Algo::Direct || algo == Algo::Local) allgatherDirect<Bytes>(a, prims);
      else if (algo == Algo::Publish && prims.canPublish()) allgatherPublish<Bytes>(a, prims);
      else allgatherRing<Bytes>(a, prims);
      break;
    case Coll::Alltoall:
      if (algo == Algo::SingleCopy && prims.canReadPeers() && a.sendbuf != a.recvbuf && a.nranks <= kMaxSingleCopyRanks)
        alltoallSingleCopy<Bytes>(a, prims);
      else if (algo == Algo::Bruck) alltoallBruck(a, prims, scratch);
      else alltoallPairwise<Bytes>(a, prims);
      break;
    case Coll::Barrier:
      if (algo == Algo::Direct && a.nranks <= kMaxDirectRanks) barrierFlat(a.rank, a.nranks, prims);
      else barrierDissemination(a.rank, a.nranks, prims);
      break;
    default:
      break;
  }
}

}  // namespace chorus
