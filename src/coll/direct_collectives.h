// One-shot algorithms for the other collectives (small node-local
// messages): every transfer goes straight to the rank that needs it, one
// step instead of the ring's n-1.  Reductions fold in rank order.
#pragma once

#include "coll/allreduce_direct.h"

namespace chorus {

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void reduceDirect(const CollArgs &a, Prims &prims, T *scratch) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  int peers[kMaxDirectRanks];
  const int npeers = directPeers(a.rank, a.nranks, peers);
  for (size_t off = 0; off < a.count && prims.ok(); off += a.sliceElems) {
    const size_t len = minSize(a.sliceElems, a.count - off);
    if (a.rank == a.root) {
      directGatherReduce(src + off, dst + off, scratch, len, peers, npeers, a.rank, prims);
    } else {
      prims.connect1(-1, a.root);
      prims.send(src + off, len);
    }
  }
}

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void bcastDirect(const CollArgs &a, Prims &prims) {
  T *buf = static_cast<T *>(a.recvbuf);
  int peers[kMaxDirectRanks];
  const int npeers = directPeers(a.rank, a.nranks, peers);
  if (a.rank == a.root) prims.connect(nullptr, 0, peers, npeers);
  else prims.connect1(a.root, -1);
  for (size_t off = 0; off < a.count && prims.ok(); off += a.sliceElems) {
    const size_t len = minSize(a.sliceElems, a.count - off);
    if (a.rank == a.root) prims.send(buf + off, len);
    else prims.recv(buf + off, len);
  }
}

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void allgatherDirect(const CollArgs &a, Prims &prims) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  int peers[kMaxDirectRanks];
  const int npeers = directPeers(a.rank, a.nranks, peers);
  for (size_t off = 0; off < a.count && prims.ok(); off += a.sliceElems) {
    const size_t len = minSize(a.sliceElems, a.count - off);
    prims.connect(nullptr, 0, peers, npeers);
    prims.copySend(src + off, dst + blockAt(a, a.rank) + off, len);
    for (int i = 0; i < npeers; ++i) {
      prims.connect1(peers[i], -1);
      prims.recv(dst + blockAt(a, peers[i]) + off, len);
    }
  }
}

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void reduceScatterDirect(const CollArgs &a, Prims &prims, T *scratch) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  int peers[kMaxDirectRanks];
  const int npeers = directPeers(a.rank, a.nranks, peers);
  for (size_t off = 0; off < a.count && prims.ok(); off += a.sliceElems) {
    const size_t len = minSize(a.sliceElems, a.count - off);
    for (int i = 0; i < npeers; ++i) {
      prims.connect1(-1, peers[i]);
      prims.send(src + blockAt(a, peers[i]) + off, len);
    }
    directGatherReduce(src + blockAt(a, a.rank) + off, dst + off, scratch, len, peers, npeers, a.rank,
                       prims);
  }
}

}  // namespace chorus
