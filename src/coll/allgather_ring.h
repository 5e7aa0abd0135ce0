// Ring allgather: each rank's block travels once around the ring; every
// rank copies what passes by into its place and forwards it.
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void allgatherRing(const CollArgs &a, Prims &prims) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  const int n = a.nranks;
  const Ring ring = ringOf(a);
  prims.connect1(ring.prev(), ring.next());

  for (size_t off = 0; off < a.count && prims.ok(); off += a.sliceElems) {
    const size_t len = minSize(a.sliceElems, a.count - off);
    auto at = [&](int block) { return blockAt(a, block) + off; };
    prims.copySend(src + off, dst + at(a.rank), len);
    for (int k = 1; k < n - 1; ++k) prims.recvCopySend(dst + at(ring.allgatherBlock(k)), len);
    prims.recv(dst + at(ring.allgatherBlock(n - 1)), len);
  }
}

}  // namespace chorus
