// Recursive-doubling allgather for small messages across nodes, on a power
// of two ranks: in round k every rank sends the 2^k blocks it holds to the
// rank 2^k away and receives that rank's 2^k, so after log2(n) rounds every
// rank holds all n.  Against the one-shot (direct_collectives.h), each rank
// sends log2(n) messages instead of n-1: 4 ranks on 4 played nodes sharing
// 2 cores, 512 B, the one-shot made 3.00 sends per rank per call against
// Open MPI's 2.00, and there every send is CPU the other ranks wait for.
//
// The blocks a rank holds after round k are those of its aligned group of
// 2^(k+1) ranks, contiguous in recvbuf: one message per round, the whole
// thing unsliced.  So it runs only when all n blocks fit one slice
// (allgatherRecursiveDoublingFits); the planner offers it for small blocks.
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

// Its messages span runs of blocks: they must lie back to back (no channel pieces).
CHORUS_HOST_DEVICE inline bool allgatherRecursiveDoublingFits(const CollArgs &a) {
  return (a.blockStride == 0 || a.blockStride == a.count) && a.nranks >= 2 && isPowerOfTwo(a.nranks) && a.count * size_t(a.nranks) <= a.sliceElems;
}

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void allgatherRecursiveDoubling(const CollArgs &a, Prims &prims) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  const size_t block = a.count;
  T *own = dst + size_t(a.rank) * block;
  const int first = a.rank ^ 1;
  prims.connect(nullptr, 0, &first, 1);
  // In place (MPI_IN_PLACE) the block is where it belongs already.
  if (src != own) prims.copySend(src, own, block);
  else prims.send(own, block);
  for (int span = 1; span < a.nranks && prims.ok(); span <<= 1) {
    const int partner = a.rank ^ span;
    const size_t theirs = size_t(partner & ~(span - 1)) * block;
    prims.connect(&partner, 1, nullptr, 0);
    prims.recv(dst + theirs, size_t(span) * block);
    const int wider = span << 1;
    if (wider < a.nranks) {
      const int next = a.rank ^ wider;
      prims.connect(nullptr, 0, &next, 1);
      prims.send(dst + size_t(a.rank & ~(wider - 1)) * block, size_t(wider) * block);
    }
  }
}

}  // namespace chorus
