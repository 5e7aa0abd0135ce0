// Single-copy alltoall (host memory, one machine): every rank tells every
// peer where its send buffer is, copies its own blocks straight out of
// the peers' buffers (cross-memory attach: HostPrims::readPeer), and tells
// each peer when it is done with that peer's buffer.  Each block is copied
// once, by its reader, whether or not the owner is running; through the
// FIFOs every slot is a hand-off between writer and reader, which with
// ranks sharing cores means a trip through the scheduler (8 ranks on 2
// cores, 16 MiB per rank: about 600 context switches per rank and call,
// against about 30 here).
// Not in place: a rank's block j is both what peer j reads and where the
// block from peer j lands.  MPI_IN_PLACE is given on every rank or none,
// so the executor takes the pairwise algorithm for it on every rank.
#pragma once

#include <cstdint>

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

// The ranks one call keeps track of (on the stack); more run pairwise.
constexpr int kMaxSingleCopyRanks = 512;

template <typename T, typename Prims>
void alltoallSingleCopy(const CollArgs &a, Prims &prims) {
  static_assert(sizeof(T) == 1, "runs on bytes: the addresses travel as messages");
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  const int n = a.nranks, r = a.rank;
  // Each FIFO carries two messages of this call, the address and the
  // "done", and every FIFO has two slots: no send waits for its receiver.
  const uint64_t where = uint64_t(uintptr_t(src));
  for (int k = 1; k < n && prims.ok(); ++k) {
    prims.connect1(-1, mod(r + k, n));
    prims.send(reinterpret_cast<const T *>(&where), sizeof where);
  }
  for (size_t off = 0; off < a.count && !a.skipOwnBlock; off += a.sliceElems)
    prims.localCopy(src + blockAt(a, r) + off, dst + blockAt(a, r) + off, minSize(a.sliceElems, a.count - off));
  // Copy from each peer as soon as its address is here, in whatever order
  // they come: with ranks sharing cores, the next peer in line may not
  // have run yet while others have.  When none is here, wait for the
  // first still pending (a plain receive: it yields, and times out).
  const T done = 1;
  int pending[kMaxSingleCopyRanks];
  int npending = 0;
  for (int k = 1; k < n; ++k) pending[npending++] = mod(r - k, n);
  while (npending > 0 && prims.ok()) {
    int pick = 0;  // if none has arrived: wait for the first
    for (int i = 0; i < npending; ++i)
      if (prims.arrived(pending[i], sizeof(uint64_t))) {
        pick = i;
        break;
      }
    const int from = pending[pick];
    pending[pick] = pending[--npending];
    uint64_t theirs = 0;
    prims.connect1(from, from);
    prims.recv(reinterpret_cast<T *>(&theirs), sizeof theirs);
    prims.readPeer(from, reinterpret_cast<const T *>(uintptr_t(theirs)) + blockAt(a, r),
                   dst + blockAt(a, from), a.count);
    prims.send(&done, 1);
  }
  // Our send buffer is the caller's again once every peer has read it.
  T ack;
  for (int k = 1; k < n && prims.ok(); ++k) {
    prims.connect1(mod(r + k, n), -1);
    prims.recv(&ack, 1);
  }
}

}  // namespace chorus
