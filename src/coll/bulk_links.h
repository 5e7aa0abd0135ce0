// Which FIFOs carry bulk data.  Every rank keeps an inbound FIFO from every
// peer, but only the streaming algorithms pipeline large messages through
// full ones (CHORUS_SHM_SLOTS x CHORUS_SHM_SLOT_SIZE): a ring or chain
// receives from the previous rank of the ring, the double binary tree from
// its parent and children in both trees, the hierarchical allreduce from the
// previous rank of its node ring and of its cross-node ring.  The all-peer
// algorithms (one-shot direct, pairwise alltoall, dissemination barrier)
// talk to everyone and get small FIFOs, so memory per rank stops growing by
// a full FIFO per peer.
//
// Decided statically from the algorithms' rank arithmetic, not lazily on
// first use: any rank computes the shape of any FIFO of the communicator,
// so a sender finds its FIFO in the receiver's segment and both ends agree
// on its slot size without another exchange; the memory is reserved once
// at set-up (a lazy link would allocate inside a collective, where a full
// /dev/shm becomes an error mid-call, and would need a handshake between
// the two ranks); and the set is small and fixed (at most 7 full inbound
// FIFOs per rank, whatever the size of the communicator).  (Across nodes
// the ucx transport does make its FIFO copies on first use, ucx.cc: they
// are its own process's memory, and a failed allocation there fails the
// collective with a named error; their shapes still come from here.)  An
// algorithm that starts streaming over new links must add them here.
// Header-only and free of I/O, so unit tests cover it without hardware.
#pragma once

#include "coll/patterns.h"

namespace chorus {

// What the rank arithmetic needs about a communicator.
struct LinkLayout {
  int nranks = 1;
  // The rings' order of the ranks and its inverse, as in Ring (null: rank order).
  const int *ringOrder = nullptr, *ringWhere = nullptr;
  // Hierarchical allreduce (nodes of equal size; null otherwise): by rank,
  // the previous rank of its node ring and of its cross-node ring.
  const int *localPrev = nullptr, *crossPrev = nullptr;
  // Several nodes: the double binary tree links nodes (nodeTree); null: the
  // trees over rank order (makeTree).
  const NodeLayout *nodes = nullptr;
};

// Whether the FIFO from `sender` into `receiver` carries bulk data.
inline bool carriesBulk(const LinkLayout &l, int receiver, int sender) {
  if (receiver == sender) return false;
  // Rings, chains, and the reduce-scatter half of the publish allreduce.
  const Ring ring{receiver, l.nranks, l.ringOrder, l.ringWhere};
  if (ring.prev() == sender) return true;
  // Double binary tree: reduced up from the children, broadcast down from
  // the parent, in each of the two trees.
  for (int which = 0; which < 2; ++which) {
    const BinaryTree t = l.nodes ? nodeTree(which, receiver, -1, *l.nodes) : makeTree(which, receiver, l.nranks);
    if (t.parent == sender) return true;
    for (int c = 0; c < t.nchildren; ++c)
      if (t.children[c] == sender) return true;
  }
  // (The trees of bcast and reduce across nodes hang from the root, so
  // their links change with it: they cut small slices, as the all-peer
  // algorithms do.)
  if (l.localPrev && l.localPrev[receiver] == sender) return true;
  return l.crossPrev && l.crossPrev[receiver] == sender;
}

}  // namespace chorus
