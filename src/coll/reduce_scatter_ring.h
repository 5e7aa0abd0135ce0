// Ring reduce-scatter (MPI_Reduce_scatter_block): block b of every rank's
// input is reduced into rank b's output.  At step k rank r folds block
// r-1-k and passes it on; after nranks-1 steps its own block is complete.
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void reduceScatterRing(const CollArgs &a, Prims &prims) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  const int n = a.nranks;
  const Ring ring = ringOf(a);
  prims.connect1(ring.prev(), ring.next());

  for (size_t off = 0; off < a.count && prims.ok(); off += a.sliceElems) {
    const size_t len = minSize(a.sliceElems, a.count - off);
    auto at = [&](int block) { return blockAt(a, block) + off; };
    prims.send(src + at(ring.reduceScatterBlock(0)), len);
    for (int k = 1; k < n - 1; ++k) prims.recvReduceSend(src + at(ring.reduceScatterBlock(k)), len);
    prims.recvReduceCopy(src + at(a.rank), dst + off, len);
  }
}

}  // namespace chorus
