// Pairwise alltoall: n steps; at step k each rank trades one block with a
// partner chosen so that the pairing is symmetric (see pairwisePartner).
// Slices go out before the matching incoming slice lands, so in-place
// works without staging.
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void alltoallPairwise(const CollArgs &a, Prims &prims) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  for (int k = 0; k < a.nranks && prims.ok(); ++k) {
    const int partner = pairwisePartner(k, a.rank, a.nranks);
    const size_t block = size_t(partner) * a.count;
    if (partner == a.rank) {
      for (size_t off = 0; off < a.count; off += a.sliceElems)
        prims.localCopy(src + size_t(a.rank) * a.count + off, dst + size_t(a.rank) * a.count + off,
                        minSize(a.sliceElems, a.count - off));
      continue;
    }
    prims.connect1(partner, partner);
    for (size_t off = 0; off < a.count && prims.ok(); off += a.sliceElems) {
      const size_t len = minSize(a.sliceElems, a.count - off);
      prims.send(src + block + off, len);
      prims.recv(dst + block + off, len);
    }
  }
}

}  // namespace chorus
