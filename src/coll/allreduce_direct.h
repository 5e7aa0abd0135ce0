// One-shot allreduce for small messages: every rank sends its whole vector
// to every peer and folds the n contributions itself, in rank order, so
// every rank computes bitwise the same result in a single step.
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

// The direct algorithms keep one FIFO per peer busy at once.
constexpr int kMaxDirectRanks = 16;

// Peers of rank `rank` in rank order (self excluded); returns how many.
CHORUS_HOST_DEVICE inline int directPeers(int rank, int nranks, int *peers) {
  int n = 0;
  for (int p = 0; p < nranks; ++p)
    if (p != rank) peers[n++] = p;
  return n;
}

// Fold slices of every rank's `src` into `dst` on `rank`: receive from all
// the others and insert the local source at its rank position.
template <typename T, typename Prims>
CHORUS_HOST_DEVICE void directGatherReduce(const T *src, T *dst, T *scratch, size_t len, const int *peers,
                                           int npeers, int rank, Prims &prims) {
  prims.connect(peers, npeers, nullptr, 0, rank);
  if (src != dst) {
    prims.recvReduceCopy(src, dst, len);
    return;
  }
  // In place, folding straight into dst would clobber src (the fold reads
  // it after the first peer): fold into scratch, then copy.
  prims.recvReduceLocal(src, scratch, len);
  prims.localCopy(scratch, dst, len);
}

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void allreduceDirect(const CollArgs &a, Prims &prims, T *scratch) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  int peers[kMaxDirectRanks];
  const int npeers = directPeers(a.rank, a.nranks, peers);
  for (size_t off = 0; off < a.count && prims.ok(); off += a.sliceElems) {
    const size_t len = minSize(a.sliceElems, a.count - off);
    prims.connect(nullptr, 0, peers, npeers);
    prims.send(src + off, len);
    directGatherReduce(src + off, dst + off, scratch, len, peers, npeers, a.rank, prims);
  }
}

}  // namespace chorus
