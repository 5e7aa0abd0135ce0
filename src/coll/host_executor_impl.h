// Template bodies of the host executor, included by the host_exec_*.cc
// instantiation units only.
#pragma once

#include "coll/allreduce_hierarchical.h"
#include "coll/dispatch.h"
#include "coll/functors.h"
#include "coll/host_executor.h"
#include "coll/prims_host.h"
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
                        req.algo == Algo::Bruck ||
                        req.algo == Algo::Dissemination ||
                        req.algo == Algo::RecursiveDoubling || rootedTree;
  a.sliceElems = (allPeers ? ch.allPeerSliceBytes : ch.slotBytes) / elemSize;
  a.ringOrder = ch.ringOrder;
  a.ringWhere = ch.ringWhere;
  a.nodes = ch.nodes;
  a.skipOwnBlock = req.skipOwnBlock;
  return a;
}

// The hierarchical allreduce's phases on the channel's groups
// (HostChannel::group maps a group's indices to communicator ranks).
template <typename T, typename Func>
void allreduceHierarchicalOnHost(const CollArgs &a, HostChannel &ch) {
  const HierarchyGroups groups{ch.localRanks, ch.nlocal, ch.localIndex, ch.crossRanks, ch.ncross, ch.crossIndex};
  allreduceHierarchical<T>(a, groups, [&ch](const int *ranks, bool partialSum, auto &&body) {
    ch.group = ranks;
    if (partialSum) {
      HostPrims<T, typename PartialSum<Func>::type> prims(ch);
      body(prims);
    } else {
      HostPrims<T, Func> prims(ch);
      body(prims);
    }
    ch.group = nullptr;
    return ch.error == Status::Ok;
  });
}

template <typename T, typename Func>
Status runReduction(HostChannel &ch, const CollRequest &req) {
  if (req.coll != Coll::Allreduce && req.coll != Coll::Reduce && req.coll != Coll::ReduceScatter)
    return Status::InternalError;
  const CollArgs a = makeArgs(ch, req, sizeof(T));
  if (req.coll == Coll::Allreduce && req.algo == Algo::Hierarchical && ch.nlocal > 1) {
    allreduceHierarchicalOnHost<T, Func>(a, ch);
    return ch.error;
  }
  HostPrims<T, Func> prims(ch);
  runReductionAlgorithm<T>(a, req.coll, req.algo, prims, reinterpret_cast<T *>(ch.scratch));
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
