// Bruck's alltoall: ceil(log2 n) rounds instead of n - 1 partners.  In
// round k (k = 1, 2, 4, ...) each rank sends to rank + k and receives from
// rank - k every block whose distance still to go has bit k set, packed
// into slices.  A rank so reaches 2 log2(n) peers, not all of them: across
// many nodes that bounds its links' memory (every remote peer's FIFO
// copies take 2 GiB a rank at 16,384 ranks; bulk_links.h), and small
// blocks cost log2(n) messages, not n - 1.  Each block travels up to
// log2(n) times, so large blocks stay with the pairwise exchange.
//
// The blocks are moved inside recvbuf: the block for distance i (rank +
// i's, at first) sits at position (rank + i) mod n throughout, and after
// the last round holds rank - i's block for this rank, which a swap of
// positions rank + i and rank - i puts in place.  Position `rank` is never
// touched, so skipOwnBlock and MPI_IN_PLACE need nothing more.
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

// Where a round's packing has got to: the distances it moves are the runs
// [k, 2k), [3k, 4k), ... below n, each cut where its positions wrap past
// n (and into single blocks when the blocks are not back to back).
struct BruckCursor {
  int distance;   // the first distance of the piece being moved; n when done
  size_t offset;  // bytes of that piece already moved
};

CHORUS_HOST_DEVICE inline int bruckMin(int x, int y) { return x < y ? x : y; }

// Round k's peers: the rank it sends to (rank + k) and the one it
// receives from (rank - k); comm/footprint.cc counts their links.
CHORUS_HOST_DEVICE inline int bruckSendPeer(int rank, int k, int n) { return mod(rank + k, n); }
CHORUS_HOST_DEVICE inline int bruckRecvPeer(int rank, int k, int n) { return mod(rank - k, n); }

// The distance where the piece starting at `distance` ends.
CHORUS_HOST_DEVICE inline int bruckPieceEnd(const CollArgs &a, int k, int distance) {
  const int n = a.nranks;
  const int runEnd = bruckMin((distance / k + 1) * k, n);
  const int wrapEnd = distance + (n - mod(a.rank + distance, n));
  const bool backToBack = a.blockStride == 0 || a.blockStride == a.count;
  return backToBack ? bruckMin(runEnd, wrapEnd) : distance + 1;
}

// The blocks round k moves each way: the distances below n with bit k
// set, k of every 2k and the last period's excess over k (the cost model,
// tuner_model.cc, counts them too).
CHORUS_HOST_DEVICE inline size_t bruckRoundBlocks(int n, int k) {
  const int tail = n % (2 * k) - k;
  return size_t(n / (2 * k)) * size_t(k) + size_t(tail > 0 ? tail : 0);
}
CHORUS_HOST_DEVICE inline size_t bruckRoundBytes(const CollArgs &a, int k) {
  return bruckRoundBlocks(a.nranks, k) * a.count;
}

// Copies up to `room` bytes of round k's pieces between `buffer` and
// `packed` (into packed when `pack`), from where `at` stands; returns the
// bytes copied.
template <typename Prims>
CHORUS_HOST_DEVICE size_t bruckMove(const CollArgs &a, Prims &prims, int k, BruckCursor &at, uint8_t *buffer,
                                    uint8_t *packed, size_t room, bool pack) {
  size_t moved = 0;
  while (at.distance < a.nranks && moved < room && prims.ok()) {
    const int end = bruckPieceEnd(a, k, at.distance);
    const size_t pieceBytes = size_t(end - at.distance) * a.count;
    const size_t len = minSize(pieceBytes - at.offset, room - moved);
    uint8_t *inBuffer = buffer + blockAt(a, mod(a.rank + at.distance, a.nranks)) + at.offset;
    if (pack) prims.localCopy(inBuffer, packed + moved, len);
    else prims.localCopy(packed + moved, inBuffer, len);
    moved += len;
    at.offset += len;
    if (at.offset == pieceBytes) {
      // The next piece: the rest of this run, or the next run's start.
      at.distance = end % k == 0 ? end + k : end;
      at.offset = 0;
    }
  }
  return moved;
}

// `scratch`: a slice (a.sliceElems bytes) of private memory, for packing
// and for the final swaps.  Bytes only (`a.count` in bytes).
template <typename Prims>
CHORUS_HOST_DEVICE void alltoallBruck(const CollArgs &a, Prims &prims, uint8_t *scratch) {
  const uint8_t *src = static_cast<const uint8_t *>(a.sendbuf);
  uint8_t *dst = static_cast<uint8_t *>(a.recvbuf);
  const int n = a.nranks, r = a.rank;
  if (src != dst)
    for (int b = 0; b < n; ++b)
      if (b != r || !a.skipOwnBlock) prims.localCopy(src + blockAt(a, b), dst + blockAt(a, b), a.count);
  for (int k = 1; k < n && prims.ok(); k *= 2) {
    prims.connect1(bruckRecvPeer(r, k, n), bruckSendPeer(r, k, n));
    // Slices pipelined (a send copies its slice out of `scratch`): one at a
    // time, each slice waited a whole hop (chorus_sim, 16 x 1 ranks of
    // 2socket, 4 slices a round: 4x the time of one).  A slice from rank - k
    // lands in positions whose own slice went out before it.
    BruckCursor out{k, 0}, in{k, 0};
    exchangeSlicesAhead(
        prims, bruckRoundBytes(a, k), a.sliceElems,
        [&](size_t, size_t len) {
          bruckMove(a, prims, k, out, dst, scratch, len, true);
          prims.send(scratch, len);
        },
        [&](size_t, size_t len) {
          prims.recv(scratch, len);
          bruckMove(a, prims, k, in, dst, scratch, len, false);
        });
  }
  for (int i = 1; i < n - i && prims.ok(); ++i) {
    uint8_t *mine = dst + blockAt(a, mod(r + i, n)), *theirs = dst + blockAt(a, mod(r - i, n));
    for (size_t off = 0; off < a.count; off += a.sliceElems) {
      const size_t len = minSize(a.sliceElems, a.count - off);
      prims.localCopy(mine + off, scratch, len);
      prims.localCopy(theirs + off, mine + off, len);
      prims.localCopy(scratch, theirs + off, len);
    }
  }
}

}  // namespace chorus
