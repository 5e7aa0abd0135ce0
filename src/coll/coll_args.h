// The arguments every algorithm receives: a plain POD shared by host and
// device executors.  Counts are in elements of the algorithm's type.
#pragma once

#include "coll/patterns.h"
#include "core/common.h"

namespace chorus {

struct CollArgs {
  const void *sendbuf;  // never MPI_IN_PLACE here: the API resolves it
  void *recvbuf;
  size_t count;         // allreduce/reduce/bcast: whole vector;
                        // allgather/reduce-scatter/alltoall: one rank's block
                        // (of this call, or of this channel: blockStride)
  int root;
  int rank;
  int nranks;
  size_t sliceElems;    // largest slice one primitive call moves (<= a FIFO slot)
  // The ring's order of the ranks and its inverse (Ring); null: rank order.
  const int *ringOrder = nullptr;
  const int *ringWhere = nullptr;
  // Ranks grouped by node (several nodes only): the trees then link nodes
  // through one head rank each (nodeTree); null: trees over rank order.
  const NodeLayout *nodes = nullptr;
  // Bcast and reduce trees across nodes over the rootless trees' links
  // (nodeTreeOnLinks): the kernels' where they link only the streaming
  // algorithms' peers.  Otherwise the tree hangs from the root (nodeTree).
  bool rootedTreeOnLinks = false;
  // Allgather, reduce-scatter, alltoall: elements from one rank's block to
  // the next in the buffers that hold a block per rank; 0: `count` (blocks
  // back to back).  A device channel runs the same columns of every block
  // (kernels_impl.cuh: channelArgs): its buffers start at its piece of
  // block 0 and `count` is its piece, while the blocks stay the call's
  // count apart.
  size_t blockStride = 0;
  // Alltoall: this rank's own block is not copied to recvbuf (the caller
  // reads it from sendbuf; the exact mode's owners do).
  bool skipOwnBlock = false;
};

// Where rank `block`'s block starts in a buffer of one block per rank.
CHORUS_HOST_DEVICE inline size_t blockAt(const CollArgs &a, int block) {
  return size_t(block) * (a.blockStride ? a.blockStride : a.count);
}

// This rank's tree `which` (0, 1) of the double binary tree.
CHORUS_HOST_DEVICE inline BinaryTree treeOf(const CollArgs &a, int which) {
  return a.nodes ? nodeTree(which, a.rank, -1, *a.nodes) : makeTree(which, a.rank, a.nranks);
}

// This rank's tree of a bcast or reduce across nodes.
CHORUS_HOST_DEVICE inline BinaryTree rootedTreeOf(const CollArgs &a) {
  return a.rootedTreeOnLinks ? nodeTreeOnLinks(a.rank, a.root, *a.nodes) : nodeTree(-1, a.rank, a.root, *a.nodes);
}

CHORUS_HOST_DEVICE inline Ring ringOf(const CollArgs &a) { return Ring{a.rank, a.nranks, a.ringOrder, a.ringWhere}; }

}  // namespace chorus
