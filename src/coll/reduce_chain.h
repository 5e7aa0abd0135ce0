// Pipelined chain reduce along the ring ending at the root: the rank after
// the root starts, every rank folds its slice in and forwards, the root
// folds the last contribution into its receive buffer.
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void reduceChain(const CollArgs &a, Prims &prims) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  const Ring ring = ringOf(a);
  // Position along the chain: the root's successor is first, the root last.
  const int pos = mod(ring.distanceFrom(a.root) - 1, a.nranks);
  const bool first = pos == 0, root = a.rank == a.root;
  prims.connect1(first ? -1 : ring.prev(), root ? -1 : ring.next());

  for (size_t off = 0; off < a.count && prims.ok(); off += a.sliceElems) {
    const size_t len = minSize(a.sliceElems, a.count - off);
    if (first) prims.send(src + off, len);
    else if (root) prims.recvReduceCopy(src + off, dst + off, len);
    else prims.recvReduceSend(src + off, len);
  }
}

}  // namespace chorus
