// Allgather and broadcast through publish rings (transport/fifo.h), for
// large messages on three ranks or more: each slice is written once into
// its owner's ring and every other rank copies it straight into its
// buffer.  Forwarding along a ring writes every byte twice on every rank
// that passes it on (its buffer and the next FIFO); here a rank writes its
// own block once more and nothing else.  4 ranks, allgather: 5/4 of the
// message written per rank instead of 7/4.  Host memory only: the
// primitives must offer publish/readPublished.
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

template <typename T, typename Prims>
void allgatherPublish(const CollArgs &a, Prims &prims) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  for (size_t off = 0; off < a.count && prims.ok(); off += a.sliceElems) {
    const size_t len = minSize(a.sliceElems, a.count - off);
    prims.publish(src + off, dst + size_t(a.rank) * a.count + off, len);
    // Start at the next rank so the readers of one ring are staggered.
    for (int k = 1; k < a.nranks; ++k) {
      const int peer = mod(a.rank + k, a.nranks);
      prims.readPublished(peer, dst + size_t(peer) * a.count + off, len);
    }
  }
}

template <typename T, typename Prims>
void bcastPublish(const CollArgs &a, Prims &prims) {
  T *buf = static_cast<T *>(a.recvbuf);
  for (size_t off = 0; off < a.count && prims.ok(); off += a.sliceElems) {
    const size_t len = minSize(a.sliceElems, a.count - off);
    if (a.rank == a.root) prims.publish(buf + off, nullptr, len);
    else prims.readPublished(a.root, buf + off, len);
  }
}

}  // namespace chorus
