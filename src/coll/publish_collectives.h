// Allgather, broadcast and the allgather half of ring allreduce through
// publish rings (transport/fifo.h), for large messages on three ranks or
// more: each slice is written once into
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
    prims.publish(src + off, dst + blockAt(a, a.rank) + off, len);
    // Start at the next rank so the readers of one ring are staggered.
    for (int k = 1; k < a.nranks; ++k) {
      const int peer = mod(a.rank + k, a.nranks);
      prims.readPublished(peer, dst + blockAt(a, peer) + off, len);
    }
  }
}

// Ring allreduce whose allgather half goes through the publish rings: the
// reduce-scatter half is the ring's (same fold order, so the same bits as
// allreduceRing), then each rank publishes its finished block slice once
// and copies every other rank's straight into dst, instead of forwarding
// n-2 slices that it writes twice each.
template <typename T, typename Prims>
void allreduceRingPublish(const CollArgs &a, Prims &prims) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  const int n = a.nranks;
  const Ring ring = ringOf(a);
  const BlockPartition blocks(a.count, n);

  for (size_t off = 0; off < blocks.blockElems && prims.ok(); off += a.sliceElems) {
    auto slice = [&](int block, size_t &at) { return blocks.slice(block, off, a.sliceElems, &at); };
    size_t at;
    prims.connect1(ring.prev(), ring.next());
    size_t len = slice(ring.reduceScatterBlock(0), at);
    prims.send(src + at, len);
    for (int k = 1; k < n - 1; ++k) {
      len = slice(ring.reduceScatterBlock(k), at);
      prims.recvReduceSend(src + at, len);
    }
    // The last fold completes our own block (reduceScatterBlock(n-1) is
    // this rank's): into dst only, then out to everyone at once.
    prims.connect1(ring.prev(), -1);
    len = slice(a.rank, at);
    prims.recvReduceCopy(src + at, dst + at, len);
    prims.publish(dst + at, nullptr, len);
    for (int k = 1; k < n; ++k) {
      const int peer = mod(a.rank + k, n);
      len = slice(peer, at);
      prims.readPublished(peer, dst + at, len);
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
