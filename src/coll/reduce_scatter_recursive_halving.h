// Recursive-halving reduce-scatter for small messages across nodes, on a
// power of two ranks: in the round with span s every rank sends the s
// blocks its partner (the rank s away) will keep, of its partial sums over
// the 2s blocks still in play, and folds the partner's partial sums of the
// s blocks it keeps itself; after log2(n) rounds each rank holds its own
// block, reduced over every rank.  log2(n) messages per rank instead of the
// one-shot's n-1 (see allgather_recursive_doubling.h for why that counts
// across nodes).
//
// In every fold the partner holding the lower block of ranks goes first,
// as in allreduce_recursive_doubling.h, so the result does not depend on
// which rank computed it.  Partial sums live in `scratch` (a slot); the
// first round sends straight from the input, and every message is unsliced,
// so it runs only when all n blocks fit one slice.
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

// Its messages span runs of blocks: they must lie back to back (no channel pieces).
CHORUS_HOST_DEVICE inline bool reduceScatterRecursiveHalvingFits(const CollArgs &a) {
  return (a.blockStride == 0 || a.blockStride == a.count) && a.nranks >= 2 && isPowerOfTwo(a.nranks) && a.count * size_t(a.nranks) <= a.sliceElems;
}

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void reduceScatterRecursiveHalving(const CollArgs &a, Prims &prims, T *scratch) {
  const size_t block = a.count;
  const T *held = static_cast<const T *>(a.sendbuf);  // partial sums of blocks [low, low + 2 span)
  T *dst = static_cast<T *>(a.recvbuf);
  int low = 0;
  for (int span = a.nranks / 2; span >= 1 && prims.ok(); span >>= 1) {
    const int partner = a.rank ^ span;
    const bool upper = (a.rank & span) != 0;
    const int keep = upper ? low + span : low, give = upper ? low : low + span;
    prims.connect(nullptr, 0, &partner, 1);
    prims.send(held + size_t(give - low) * block, size_t(span) * block);
    prims.connect(&partner, 1, nullptr, 0, upper ? 1 : 0);  // the lower block folds first
    if (span == 1) {
      prims.recvReduceCopy(held + size_t(keep - low) * block, dst, block);
    } else {
      prims.recvReduceLocal(held + size_t(keep - low) * block, scratch, size_t(span) * block);
      held = scratch;
    }
    low = keep;
  }
}

}  // namespace chorus
