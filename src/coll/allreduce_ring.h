// Ring allreduce: a pipelined reduce-scatter followed by an allgather on the
// same ring.  Data is cut in nranks blocks; each pass of the loop moves one
// slice of every block, so the FIFOs keep the ring busy.
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void allreduceRing(const CollArgs &a, Prims &prims) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  const int n = a.nranks;
  const Ring ring = ringOf(a);
  const BlockPartition blocks(a.count, n);
  prims.connect1(ring.prev(), ring.next());

  for (size_t off = 0; off < blocks.blockElems && prims.ok(); off += a.sliceElems) {
    auto slice = [&](int block, size_t &at) { return blocks.slice(block, off, a.sliceElems, &at); };
    size_t at;
    size_t len = slice(ring.reduceScatterBlock(0), at);
    prims.send(src + at, len);
    for (int k = 1; k < n - 1; ++k) {
      len = slice(ring.reduceScatterBlock(k), at);
      prims.recvReduceSend(src + at, len);
    }
    // Our own block is complete: keep it and start the allgather with it.
    len = slice(ring.reduceScatterBlock(n - 1), at);
    prims.recvReduceCopySend(src + at, dst + at, len);
    for (int k = 1; k < n - 1; ++k) {
      len = slice(ring.allgatherBlock(k), at);
      prims.recvCopySend(dst + at, len);
    }
    len = slice(ring.allgatherBlock(n - 1), at);
    prims.recv(dst + at, len);
  }
}

}  // namespace chorus
