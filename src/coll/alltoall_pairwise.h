// Pairwise alltoall: n steps; at step k each rank trades one block with a
// partner chosen so that the pairing is symmetric (see pairwisePartner).
// Slices go out before the matching incoming slice lands, so in-place
// works without staging.
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

// Blocks that fit one FIFO message: every send first, then every receive,
// one round for the whole exchange.  Pairwise steps wait for each partner in
// turn (n-1 waits in a row, each a hand-off between processes that may not
// be running: 4 ranks on 2 cores, 8 B, per call after a barrier, 0.6-0.8x
// Open MPI).  No send blocks: a receiver took every message of earlier
// calls before entering this one, so once both ends are here a FIFO holds
// this call's one message at most, and every FIFO has two slots or more.  Every send reads its block before any
// receive writes, so MPI_IN_PLACE still needs no staging.
template <typename T, typename Prims>
CHORUS_HOST_DEVICE void alltoallOneRound(const CollArgs &a, Prims &prims) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  const int n = a.nranks, r = a.rank;
  for (int k = 1; k < n && prims.ok(); ++k) {
    const int to = mod(r + k, n);
    prims.connect1(-1, to);
    prims.send(src + blockAt(a, to), a.count);
  }
  if (src != dst && !a.skipOwnBlock) prims.localCopy(src + blockAt(a, r), dst + blockAt(a, r), a.count);
  for (int k = 1; k < n && prims.ok(); ++k) {
    const int from = mod(r - k, n);
    prims.connect1(from, -1);
    prims.recv(dst + blockAt(a, from), a.count);
  }
}

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void alltoallPairwise(const CollArgs &a, Prims &prims) {
  if (a.count <= a.sliceElems) return alltoallOneRound<T>(a, prims);
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  for (int k = 0; k < a.nranks && prims.ok(); ++k) {
    const int partner = pairwisePartner(k, a.rank, a.nranks);
    const size_t block = blockAt(a, partner);
    if (partner == a.rank) {
      for (size_t off = 0; off < a.count && !a.skipOwnBlock; off += a.sliceElems)
        prims.localCopy(src + blockAt(a, a.rank) + off, dst + blockAt(a, a.rank) + off,
                        minSize(a.sliceElems, a.count - off));
      continue;
    }
    prims.connect1(partner, partner);
    // (Slices one at a time: chorus_sim, a 2socket node of 8 ranks, 32 KiB
    // blocks, 63 us, where Bruck, moving each block up to three times, took
    // 55; pipelined, 47.)
    exchangeSlicesAhead(
        prims, a.count, a.sliceElems, [&](size_t off, size_t len) { prims.send(src + block + off, len); },
        [&](size_t off, size_t len) { prims.recv(dst + block + off, len); });
  }
}

}  // namespace chorus
