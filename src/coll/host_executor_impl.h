// Template bodies of the host executor, included by the host_exec_*.cc
// instantiation units only.
#pragma once

#include "coll/allgather_recursive_doubling.h"
#include "coll/allgather_ring.h"
#include "coll/allreduce_direct.h"
#include "coll/allreduce_hierarchical.h"
#include "coll/allreduce_recursive_doubling.h"
#include "coll/allreduce_ring.h"
#include "coll/allreduce_tree.h"
#include "coll/alltoall_pairwise.h"
#include "coll/alltoall_single_copy.h"
#include "coll/barrier_dissemination.h"
#include "coll/barrier_flat.h"
#include "coll/bcast_chain.h"
#include "coll/bcast_tree.h"
#include "coll/direct_collectives.h"
#include "coll/functors.h"
#include "coll/host_executor.h"
#include "coll/prims_host.h"
#include "coll/publish_collectives.h"
#include "coll/reduce_chain.h"
#include "coll/reduce_tree.h"
#include "coll/reduce_scatter_recursive_halving.h"
#include "coll/reduce_scatter_ring.h"
#include "coll/type_table.h"

namespace chorus {

inline CollArgs makeArgs(const HostChannel &ch, const CollRequest &req, size_t elemSize) {
  CollArgs a;
  a.sendbuf = req.sendbuf;
  a.recvbuf = req.recvbuf;
  a.count = req.count;
  a.root = req.root;
  a.rank = ch.rank;
  a.nranks = ch.nranks;
  // The streaming algorithms run on full FIFOs only; the all-peer ones may
  // meet small FIFOs (bulk_links.h), so they cut smaller slices, and so do
  // the rooted trees across nodes, whose links move with the root.  (Local
  // runs on no FIFO at all.)
  const bool rootedTree = req.algo == Algo::Tree && (req.coll == Coll::Bcast || req.coll == Coll::Reduce);
  const bool allPeers = req.algo == Algo::Direct || req.algo == Algo::Pairwise || req.algo == Algo::SingleCopy ||
                        req.algo == Algo::Dissemination ||
                        req.algo == Algo::RecursiveDoubling || rootedTree;
  a.sliceElems = (allPeers ? ch.allPeerSliceBytes : ch.slotBytes) / elemSize;
  a.ringOrder = ch.ringOrder;
  a.ringWhere = ch.ringWhere;
  a.nodes = ch.nodes;
  a.skipOwnBlock = req.skipOwnBlock;
  return a;
}

template <typename T, typename Func>
Status runReduction(HostChannel &ch, const CollRequest &req) {
  HostPrims<T, Func> prims(ch);
  const CollArgs a = makeArgs(ch, req, sizeof(T));
  T *scratch = reinterpret_cast<T *>(ch.scratch);
  switch (req.coll) {
    case Coll::Allreduce:
      if (req.algo == Algo::Local) {
        const T *src = static_cast<const T *>(a.sendbuf);
        for (size_t off = 0; off < a.count; off += a.sliceElems)
          prims.localCopy(src + off, static_cast<T *>(a.recvbuf) + off, minSize(a.sliceElems, a.count - off));
      } else if (req.algo == Algo::Tree) {
        allreduceTree<T>(a, prims);
      } else if (req.algo == Algo::Direct) {
        allreduceDirect<T>(a, prims, scratch);
      } else if (req.algo == Algo::Publish && prims.canPublish()) {
        allreduceRingPublish<T>(a, prims);
      } else if (req.algo == Algo::RecursiveDoubling && isPowerOfTwo(a.nranks)) {
        allreduceRecursiveDoubling<T>(a, prims);
      } else if (req.algo == Algo::Hierarchical && ch.nlocal > 1) {
        allreduceHierarchical<T, Func>(a, ch);
      } else {
        allreduceRing<T>(a, prims);
      }
      break;
    case Coll::Reduce:
      if (req.algo == Algo::Direct || req.algo == Algo::Local) reduceDirect<T>(a, prims, scratch);
      else if (req.algo == Algo::Tree && a.nodes) reduceTree<T>(a, prims);
      else reduceChain<T>(a, prims);
      break;
    case Coll::ReduceScatter:
      if (req.algo == Algo::RecursiveDoubling && reduceScatterRecursiveHalvingFits(a))
        reduceScatterRecursiveHalving<T>(a, prims, scratch);
      else if (req.algo == Algo::Direct || req.algo == Algo::Local) reduceScatterDirect<T>(a, prims, scratch);
      else reduceScatterRing<T>(a, prims);
      break;
    default:
      return Status::InternalError;
  }
  return ch.error;
}

// One element type: its valid ops from the shared op table.
template <DataType D>
Status hostExecuteType(HostChannel &ch, const CollRequest &req) {
  using T = typename TypeOf<D>::type;
  switch (req.op) {
#define CHORUS_HOST_OP_CASE(O)                                                  \
  case RedOp::O:                                                                \
    if constexpr (IsValidTypeOp<D, RedOp::O>::value)                            \
      return runReduction<T, typename FuncOf<RedOp::O, T>::type>(ch, req);      \
    else                                                                        \
      return Status::InternalError; /* the API validated (type, op) already */
    CHORUS_OP_TABLE(CHORUS_HOST_OP_CASE)
#undef CHORUS_HOST_OP_CASE
    default: return Status::InternalError;
  }
}

template <int Group>
Status hostExecuteGroup(HostChannel &ch, const CollRequest &req) {
  switch (req.type) {
#define CHORUS_HOST_TYPE_CASE(D, T, G)                      \
  case DataType::D:                                         \
    if constexpr (G == Group)                               \
      return hostExecuteType<DataType::D>(ch, req);         \
    else                                                    \
      return Status::InternalError;
    CHORUS_TYPE_TABLE(CHORUS_HOST_TYPE_CASE)
#undef CHORUS_HOST_TYPE_CASE
    default: return Status::InternalError;
  }
}

}  // namespace chorus
