// Pipelined chain broadcast along the ring, starting at the root: each rank
// copies a slice into its buffer and forwards it to the next, so large
// messages stream through all ranks at link bandwidth.
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void bcastChain(const CollArgs &a, Prims &prims) {
  T *buf = static_cast<T *>(a.recvbuf);
  const Ring ring = ringOf(a);
  const int pos = ring.distanceFrom(a.root);
  const bool last = pos == a.nranks - 1;
  prims.connect1(pos == 0 ? -1 : ring.prev(), last ? -1 : ring.next());

  for (size_t off = 0; off < a.count && prims.ok(); off += a.sliceElems) {
    const size_t len = minSize(a.sliceElems, a.count - off);
    if (pos == 0) prims.send(buf + off, len);
    else if (last) prims.recv(buf + off, len);
    else prims.recvCopySend(buf + off, len);
  }
}

}  // namespace chorus
