// Recursive-doubling allreduce for small messages across nodes, on a power
// of two ranks: in round k every rank exchanges its partial result with the
// rank 2^k away and folds the two, so after log2(n) rounds every rank holds
// the whole reduction.  Against the one-shot (allreduce_direct.h), each
// rank sends and receives log2(n) messages instead of n-1: across nodes
// every message costs the CPU a network send and a receive (4 ranks on UCX
// over tcp: 2 messages each way instead of 3), and the one-shot stops at
// kMaxDirectRanks where this goes on at log2(n) rounds.
//
// The fold is bitwise the same on every rank: in each round the partner
// holding the lower block of ranks goes first, so both compute
// lower ⊕ upper, and after the last round every rank has folded the same
// pairs in the same order.
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void allreduceRecursiveDoubling(const CollArgs &a, Prims &prims) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  for (size_t off = 0; off < a.count && prims.ok(); off += a.sliceElems) {
    const size_t len = minSize(a.sliceElems, a.count - off);
    const int first = a.rank ^ 1;
    prims.connect(nullptr, 0, &first, 1);
    prims.send(src + off, len);
    // Round k folds what the rank holds (its source at first, then its
    // partial result in dst) with the partner's, and, but in the last
    // round, sends the result straight on to the next partner.
    const T *held = src + off;
    for (int span = 1; span < a.nranks && prims.ok(); span <<= 1) {
      const int partner = a.rank ^ span;
      const int position = (a.rank & span) ? 1 : 0;  // the lower block folds first
      const int next = a.rank ^ (span << 1);
      if ((span << 1) < a.nranks) {
        prims.connect(&partner, 1, &next, 1, position);
        prims.recvReduceLocalSend(held, dst + off, len);
      } else {
        prims.connect(&partner, 1, nullptr, 0, position);
        prims.recvReduceCopy(held, dst + off, len);
      }
      held = dst + off;
    }
  }
}

}  // namespace chorus
