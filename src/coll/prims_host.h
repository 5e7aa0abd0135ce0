// The primitives of the host executor: every verb the algorithms speak,
// over FIFOs in shared memory.  One generic step does it all: wait for the
// inputs (local source and/or messages from the receive peers) and for free
// slots at the send peers, fold the inputs with the reduction functor, write
// the result to the local destination and/or the send peers' slots, then
// post.  Algorithms never see a counter or a fence.  (Small messages sent
// or received as they are take a short cut: sendSmall, recvSmall.)
#pragma once

#include <cstdio>
#include <cstring>

#include "coll/checksum.h"
#include "coll/functors.h"
#include "coll/host_channel.h"
#include "coll/prims_limits.h"
#include "core/log.h"
#include "transport/shm/cma.h"

namespace chorus {

template <typename T, typename Func>
class HostPrims {
 public:
  explicit HostPrims(HostChannel &ch) : ch_(ch) {}

  // Elements that fit in a full FIFO's slot: the largest slice of a streaming algorithm.
  size_t maxElems() const { return ch_.slotBytes / sizeof(T); }
  bool ok() const { return ch_.error == Status::Ok; }
  int rank() const { return ch_.rank; }
  int nranks() const { return ch_.nranks; }

  // Choose the peers of the following calls.  `srcPosition` places the
  // local source in the fold: 0 folds it first, k after the k-th receive
  // peer (the direct algorithms fold in rank order so every rank computes
  // bitwise the same result).
  void connect(const int *recvPeers, int nrecv, const int *sendPeers, int nsend, int srcPosition = 0) {
    nrecv_ = nrecv;
    nsend_ = nsend;
    // Peers are group indices while a hierarchical phase runs (ch_.group).
    const int *g = ch_.group;
    for (int i = 0; i < nrecv; ++i) recv_[i] = linked(ch_.recvFrom[g ? g[recvPeers[i]] : recvPeers[i]]);
    for (int i = 0; i < nsend; ++i) send_[i] = linked(ch_.sendTo[g ? g[sendPeers[i]] : sendPeers[i]]);
    srcPosition_ = srcPosition;
  }
  void connect1(int recvPeer, int sendPeer) {
    const int r[1] = {recvPeer}, s[1] = {sendPeer};
    connect(r, recvPeer < 0 ? 0 : 1, s, sendPeer < 0 ? 0 : 1);
  }

  void send(const T *src, size_t n) {
    if (!sendSmall(src, nullptr, n)) step(src, nullptr, n, kSrc | kSend);
  }
  void recv(T *dst, size_t n) {
    if (!recvSmall(dst, n)) step(nullptr, dst, n, kRecv | kDst);
  }
  void recvReduceSend(const T *src, size_t n) { step(src, nullptr, n, kRecv | kSrc | kSend); }
  void recvReduceCopy(const T *src, T *dst, size_t n) { step(src, dst, n, kRecv | kSrc | kDst | kFinal); }
  void recvReduceCopySend(const T *src, T *dst, size_t n) { step(src, dst, n, kRecv | kSrc | kDst | kSend | kFinal); }
  void recvCopySend(T *dst, size_t n) { step(nullptr, dst, n, kRecv | kDst | kSend); }
  // Send `src` and keep a copy in `dst` (a bcast root that is not in place).
  void copySend(const T *src, T *dst, size_t n) {
    if (!sendSmall(src, dst, n)) step(src, dst, n, kSrc | kDst | kSend);
  }
  // Fold every receive peer's message with `src` into private scratch (no
  // send, no finalize); the direct algorithms then localCopy scratch out.
  void recvReduceLocal(const T *src, T *dst, size_t n) { step(src, dst, n, kRecv | kSrc | kDst); }
  // The same, and send the fold on (a round of recursive doubling that is
  // not the last: no finalize yet).
  void recvReduceLocalSend(const T *src, T *dst, size_t n) { step(src, dst, n, kRecv | kSrc | kDst | kSend); }

  // Purely local: dst = finalize(src) (e.g. a one-rank allreduce with AVG).
  // Without a finalize, a plain copy: the packing of Bruck's alltoall and
  // the copies in and out of scratch make n calls or more of a block each,
  // and step()'s message bookkeeping cost 14 ns a call of 8 B against memcpy's 2-3.
  void localCopy(const T *src, T *dst, size_t n) {
    if (Func::kNeedsFinalize) return step(src, dst, n, kSrc | kDst | kFinal);
    if (ok() && n > 0 && src != dst) memcpy(dst, src, n * sizeof(T));
  }

  // Publish rings (fifo.h): every rank must read every slice published.
  bool canPublish() const { return ch_.publish != nullptr; }
  // Write n elements of src into our publish ring for all other ranks, and
  // keep a copy in dst (when not null and not src).
  void publish(const T *src, T *dst, size_t n) {
    if (!ok()) return;
    FifoEnd &ring = ch_.publish[ch_.rank];
    // The slot was last filled nslots slices ago: every reader must be done.
    const uint64_t need = ring.step + 1 - uint64_t(ring.nslots);
    if (static_cast<int64_t>(need) > 0 && ring.seen < need) {
      uint64_t least = ~uint64_t(0);  // the slowest reader's count, as credit for later slices
      for (int q = 0; q < ch_.nranks; ++q) {
        if (q == ch_.rank) continue;
        const uint64_t *consumed = &publishConsumed(ring, q)->value;
        if (!wait(consumed, need, q, false)) return;
        const uint64_t c = loadAcquire(consumed);
        least = c < least ? c : least;
      }
      ring.seen = least;
    }
    T *slot = reinterpret_cast<T *>(ring.slot(ring.step));
    memcpy(slot, src, n * sizeof(T));
    if (ring.sums) {
      ring.sums[ring.step % kInlineSlots] = messageChecksum(slot, n * sizeof(T));
      if (ch_.corruptPublished == ring.step + 1 && n > 0) {  // tests only (HostChannel)
        ch_.corruptPublished = 0;
        reinterpret_cast<unsigned char *>(slot)[0] ^= 0x01;
      }
    }
    storeRelease(&ring.header->tail, ++ring.step);
    if (dst && dst != src) memcpy(dst, src, n * sizeof(T));
  }
  // Copy the next slice `peer` published into dst.
  void readPublished(int peer, T *dst, size_t n) {
    if (!ok()) return;
    FifoEnd &ring = ch_.publish[peer];
    if (!wait(&ring.header->tail.value, ring.step + 1, peer, true)) return;
    if (ring.sums && !checksumMatches(ring, ring.slot(ring.step), n * sizeof(T), "publish ring")) return;
    memcpy(dst, ring.slot(ring.step), n * sizeof(T));
    storeRelease(publishConsumed(ring, ch_.rank), ++ring.step);
  }

  // Whether the next message of n elements from `peer` has arrived: a
  // rank that talks to every peer can take them in the order they come.
  // One node only (a FIFO from another node fills only when progressed).
  bool arrived(int peer, size_t n) const {
    const FifoEnd &e = ch_.recvFrom[peer];
    const bool inlined = n * sizeof(T) <= kInlineMaxBytes;
    if (!inlined) return loadAcquire(&e.header->tail) >= e.step + 1;
    return loadAcquire(&e.inlineSlot(e.step)[inlineLines(n * sizeof(T)) - 1].flag) >= messageHeader(e.step + 1, 0);
  }

  // Cross-memory attach (transport/shm/cma.h): every peer's memory can be
  // read, and the reading: n elements at `remote`, an address in `peer`'s
  // memory that the peer sent, into dst.
  bool canReadPeers() const { return ch_.singleCopy; }
  void readPeer(int peer, const T *remote, T *dst, size_t n) {
    if (!ok()) return;
    char why[192];
    const Status s = cmaRead(ch_.watchedPids[peer], peer, remote, dst, n * sizeof(T), why, sizeof why);
    if (s == Status::Ok) return;
    snprintf(ch_.errorText, sizeof ch_.errorText, "%s (%s algorithm): rank %d: %s", collName(ch_.coll),
             algoName(ch_.algo), ch_.rank, why);
    CHORUS_WARN("%s", ch_.errorText);
    ch_.error = s;
  }

 private:
  // A link to another node is made on its first use (NetOps::link): until
  // then its end has no memory.  Should that fail, the channel fails and
  // every primitive is a no-op.
  FifoEnd *linked(FifoEnd &e) {
    if (e.remote && !e.header && ok()) {
      const Status s = ch_.netOps->link(ch_.net, e.peer, ch_.errorText, sizeof ch_.errorText);
      if (s != Status::Ok) {
        CHORUS_WARN("%s", ch_.errorText);
        ch_.error = s;
      }
    }
    return &e;
  }
  enum : unsigned { kRecv = 1, kSend = 2, kSrc = 4, kDst = 8, kFinal = 16 };

  // The two verbs of most small collectives, an inline message sent as it
  // is or received as it is, between ranks of this node without checksums,
  // taken without step()'s generality: 300 instructions a step there, 2
  // ranks, 8 B allgather, a third of the whole call (callgrind), and the
  // call's length is what a call timed on its own pays.  Each does what
  // step() would, in the same order; false (nothing done) when the message
  // is not such a one.
  bool sendSmall(const T *src, T *dst, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes > kInlineMaxBytes || nsend_ == 0 || !ok()) return false;
    for (int i = 0; i < nsend_; ++i)
      if (send_[i]->sums || send_[i]->remote) return false;
    const size_t lines = inlineLines(bytes);
    for (int i = 0; i < nsend_; ++i)
      if (!waitForSlot(*send_[i], kInlineSlots)) return true;
    const uint32_t tag = messageTag(ch_.tag, bytes);
    for (int i = 0; i < nsend_; ++i) {
      FifoEnd &e = *send_[i];
      scatterInline(reinterpret_cast<const unsigned char *>(src), e.inlineSlot(e.step), bytes, messageHeader(e.step + 1, tag));
      storeRelease(&e.header->tail, ++e.step);
      prefetchForWrite(e.inlineSlot(e.step + kInlinePrefetchAhead), lines);
    }
    if (dst && dst != src && n > 0) memcpy(dst, src, bytes);
    return true;
  }
  bool recvSmall(T *dst, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes > kInlineMaxBytes || nrecv_ != 1 || !ok()) return false;
    FifoEnd &e = *recv_[0];
    if (e.sums || e.remote) return false;
    const size_t lines = inlineLines(bytes);
    const InlineLine *slot = e.inlineSlot(e.step);
    prefetchForRead(slot, lines - 1);
    const uint64_t header = messageHeader(e.step + 1, messageTag(ch_.tag, bytes));
    if (!waitMessage(e, &slot[lines - 1].flag, header, bytes)) return true;
    gatherInline(slot, reinterpret_cast<unsigned char *>(dst), bytes);
    storeRelease(&e.header->head, ++e.step);
    prefetchForRead(e.inlineSlot(e.step), lines);
    return true;
  }

  // Wait until the slot of e's next message is free: the message that
  // took it last, `depth` messages ago, was credited.  False on an error.
  bool waitForSlot(FifoEnd &e, uint64_t depth) {
    const uint64_t need = e.step + 1 - depth;
    if (static_cast<int64_t>(need) <= 0 || e.seen >= need) return true;
    if (!wait(&e.header->head.value, need, e.peer, false)) return false;
    e.seen = loadAcquire(&e.header->head);
    return true;
  }

  void step(const T *src, T *dst, size_t n, unsigned flags) {
    if (!ok()) return;
    const bool doRecv = (flags & kRecv) && nrecv_ > 0;
    const bool doSend = (flags & kSend) && nsend_ > 0;
    // Both ends of a message know its size, so they agree on the format.
    const bool inlined = (doRecv || doSend) && n * sizeof(T) <= kInlineMaxBytes;
    const size_t lines = inlined ? inlineLines(n * sizeof(T)) : 0;
    const uint32_t tag = messageTag(ch_.tag, n * sizeof(T));
    // Fetch the leading lines of every inline message while we wait for
    // the last line's flag: the misses overlap instead of following it.
    for (int i = 0; doRecv && inlined && i < nrecv_; ++i)
      prefetchForRead(recv_[i]->inlineSlot(recv_[i]->step), lines - 1);
    for (int i = 0; doRecv && i < nrecv_; ++i) {
      FifoEnd &e = *recv_[i];
      if (!inlined && n * sizeof(T) > e.slotBytes) return sliceTooLarge(e, n * sizeof(T));
      const uint64_t header = messageHeader(e.step + 1, tag);
      const uint64_t *arrived = inlined ? &e.inlineSlot(e.step)[lines - 1].flag : &e.header->tail.value;
      if (!waitMessage(e, arrived, header, n * sizeof(T))) return;
    }
    for (int i = 0; doSend && i < nsend_; ++i) {
      FifoEnd &e = *send_[i];
      if (!inlined && n * sizeof(T) > e.slotBytes) return sliceTooLarge(e, n * sizeof(T));
      if (!waitForSlot(e, inlined ? uint64_t(kInlineSlots) : uint64_t(e.nslots))) return;
    }

    // Inline messages are gathered from (and scattered to) their lines
    // through this stack buffer: one per receive peer, the last for sends.
    // (Untouched, so free, when the message is not inline.)
    alignas(kInlineLineBytes) unsigned char staged[kMaxPrimPeers + 1][kInlineMaxBytes];

    const bool pureReceive = flags == (kRecv | kDst) && nrecv_ == 1 && n > 0;
    const bool finalize = Func::kNeedsFinalize && (flags & kFinal);
    // Gather the inputs in fold order.
    const T *in[kMaxPrimPeers + 1];
    int nin = 0;
    for (int i = 0; doRecv && i < nrecv_; ++i) {
      if ((flags & kSrc) && i == srcPosition_) in[nin++] = src;
      FifoEnd &e = *recv_[i];
      if (inlined) {
        // A plain receive gathers straight into dst: no second copy.  (With
        // checksums the message is checked before dst is touched.)
        unsigned char *into = pureReceive && !e.sums ? reinterpret_cast<unsigned char *>(dst) : staged[i];
        gatherInline(e.inlineSlot(e.step), into, n * sizeof(T));
        in[nin++] = reinterpret_cast<const T *>(into);
      } else {
        in[nin++] = reinterpret_cast<const T *>(e.slot(e.step));
      }
      // Checked before anything is folded, written or credited: a corrupt
      // message leaves every output untouched.
      if (e.sums && !checksumMatches(e, in[nin - 1], n * sizeof(T), inlined ? "inline" : "full slot")) return;
    }
    if ((flags & kSrc) && (!doRecv || srcPosition_ >= nrecv_)) in[nin++] = src;

    // The result lands in the send slots first (or the staging of an
    // inline send), the peers are told, and only then is the local copy
    // made: the peers copy out while we do.  (2 ranks, 2 MiB: the
    // receiver of a broadcast or allgather slice no longer waits for the
    // sender's own copy.)
    T *out[kMaxPrimPeers];
    int nout = 0;
    // An inline send of one unchanged input scatters straight from it.
    if (inlined && doSend)
      out[nout++] = nin == 1 && !finalize ? const_cast<T *>(in[0]) : reinterpret_cast<T *>(staged[kMaxPrimPeers]);
    for (int i = 0; !inlined && doSend && i < nsend_; ++i)
      out[nout++] = reinterpret_cast<T *>(send_[i]->slot(send_[i]->step));
    const bool toDst = (flags & kDst) && n > 0 && nin > 0;
    if (nout == 0 && toDst) out[nout++] = dst;  // nothing to send: fold straight into dst
    // Where dst's copy comes from once the sends are posted (nullptr: done).
    const T *dstFrom = nullptr;

    if (n > 0 && nout > 0 && nin > 0) {
      if (nin == 1) {
        if (out[0] != in[0]) memcpy(out[0], in[0], n * sizeof(T));
      } else {
        reduceInto<T, Func>(out[0], in[0], in[1], n);
        for (int i = 2; i < nin; ++i) reduceInto<T, Func>(out[0], out[0], in[i], n);
      }
      if (finalize)
        for (size_t k = 0; k < n; ++k) out[0][k] = Func::finalize(out[0][k], ch_.nranks);
      for (int i = 1; i < nout; ++i) memcpy(out[i], out[0], n * sizeof(T));
      // A plain copy reads its source again (no need to read back what we
      // just sent); a fold reads the result from the first send slot, which
      // stays ours to read until our next send.
      if (toDst && out[0] != dst) dstFrom = (nin == 1 && !finalize) ? in[0] : out[0];
    }

    // Every send slot holds a copy of out[0] (or the inline staging): one sum for all.
    const uint64_t sum = (doSend && send_[0]->sums) ? messageChecksum(nout > 0 ? out[0] : nullptr, n * sizeof(T)) : 0;
    for (int i = 0; doSend && i < nsend_; ++i) {
      FifoEnd &e = *send_[i];
      const unsigned char *inlineFrom = inlined && nout > 0 ? reinterpret_cast<const unsigned char *>(out[0]) : nullptr;
      alignas(kInlineLineBytes) unsigned char flipped[kInlineMaxBytes];
      if (e.sums) {
        e.sums[e.step % kInlineSlots] = sum;
        if (ch_.corruptPeer == e.peer && ch_.corruptMessage == e.step + 1 && n > 0)
          inlineFrom = corruptOnTheWay(e, inlined, inlineFrom, flipped, n, dst, dstFrom);
      }
      const uint64_t header = messageHeader(e.step + 1, tag);
      if (inlined) scatterInline(inlineFrom, e.inlineSlot(e.step), n * sizeof(T), header);
      else __atomic_store_n(&e.inlineSlot(e.step)[0].flag, header, __ATOMIC_RELAXED);  // its header (fifo.h)
      // Inline receivers do not read the tail, but later full-size messages
      // on this FIFO wait for it to count every message.
      storeRelease(&e.header->tail, ++e.step);
      if (e.remote) ch_.netOps->postMessage(ch_.net, e, e.step - 1, n * sizeof(T), inlined ? lines : 0);
      if (inlined) prefetchForWrite(e.inlineSlot(e.step + kInlinePrefetchAhead), lines);
    }
    if (dstFrom && dstFrom != dst) memcpy(dst, dstFrom, n * sizeof(T));
    // Credits go back only now: dst's copy may still have read the slots.
    for (int i = 0; doRecv && i < nrecv_; ++i) {
      FifoEnd &e = *recv_[i];
      storeRelease(&e.header->head, ++e.step);
      // Across nodes a credit costs a message: messages going back to the
      // sender carry our count for free, and a credit of its own goes only
      // once half a FIFO has been consumed untold, or when the sender asked.
      if (e.remote && (e.step - e.credited >= creditEvery(e, inlined) || e.step >= e.creditWanted)) {
        e.credited = e.step;
        e.creditWanted = ~uint64_t(0);
        ch_.netOps->postCredit(ch_.net, e);
      }
      // A sender running ahead (a broadcast root) has likely written the
      // next message already: start fetching it.
      if (inlined) prefetchForRead(e.inlineSlot(e.step), lines);
    }
  }

  // Ask for ownership of the lines of the inline message `kInlinePrefetchAhead`
  // ahead now, so that its stores find them owned.  Without it every inline
  // send's stores wait for the line to be taken from the receiver's cache,
  // stores retire in order, and a broadcast root that runs ahead of its
  // peers spends its time stalled on its own stores (2 ranks, 8 B: 89% of
  // the root's time in the primitive stood on its first stack store).  Far
  // enough ahead that the receiver is not spinning on those lines.
  static constexpr uint64_t kInlinePrefetchAhead = 4;
  static void prefetchForRead(const InlineLine *lines, size_t n) {
    for (size_t l = 0; l < n; ++l) __builtin_prefetch(lines + l, 0, 3);
  }
  static void prefetchForWrite(const InlineLine *lines, size_t n) {
    for (size_t l = 0; l < n; ++l) {
#if defined(__x86_64__) || defined(__i386__)
      // PREFETCHW; a no-op on the few x86 CPUs that lack it.
      asm volatile("prefetchw %0" : : "m"(*reinterpret_cast<const char *>(lines + l)));
#else
      __builtin_prefetch(lines + l, 1, 3);
#endif
    }
  }

  // Half the depth the sender runs ahead by: full slots, or the 64 inline
  // ones.  Inline credits are lazy (a one-way stream of small messages, a
  // broadcast's, then needs one credit per 32 messages instead of one per 2:
  // 4 ranks on 4 nodes, 8 B back to back, 4.56 sends per call became 3.1).
  // A full message after inline ones may then find its slot uncredited
  // (credits lag by up to 31, the slots are fewer): its sender asks after a
  // while (hostWaitCounter), and the receiver credits as soon as it has
  // consumed what was asked for.
  static uint64_t creditEvery(const FifoEnd &e, bool inlined) {
    if (inlined) return uint64_t(kInlineSlots / 2);
    return e.nslots >= 4 ? uint64_t(e.nslots / 2) : 1;
  }

  // Lines of an inline message (an empty one still carries its flag).
  static size_t inlineLines(size_t bytes) {
    return bytes == 0 ? 1 : (bytes + kInlineLinePayload - 1) / kInlineLinePayload;
  }

  // Whole lines by a copy of constant size, which the compiler inlines;
  // a copy of variable size is a call per line.
  static void gatherInline(const InlineLine *lines, unsigned char *to, size_t bytes) {
    const size_t whole = bytes / kInlineLinePayload;
    for (size_t l = 0; l < whole; ++l) memcpy(to + l * kInlineLinePayload, lines[l].payload, kInlineLinePayload);
    if (const size_t tail = bytes - whole * kInlineLinePayload) memcpy(to + whole * kInlineLinePayload, lines[whole].payload, tail);
  }

  // Payload first, then the flag of each line (the message's header): the
  // release store of the last line's flag publishes the whole message.
  static void scatterInline(const unsigned char *from, InlineLine *lines, size_t bytes, uint64_t header) {
    const size_t nlines = inlineLines(bytes);
    for (size_t l = 0; l < nlines; ++l) {
      const size_t off = l * kInlineLinePayload;
      if (bytes - off >= kInlineLinePayload) memcpy(lines[l].payload, from + off, kInlineLinePayload);
      else if (off < bytes) memcpy(lines[l].payload, from + off, bytes - off);
      storeRelease(&lines[l].flag, header);
    }
  }

  // CHORUS_CHECKSUM: whether message `e.step` of a receive FIFO (or publish
  // ring) is what its sender summed; if not, the error names the link.
  bool checksumMatches(const FifoEnd &e, const void *msg, size_t bytes, const char *kind) {
    const uint64_t sent = e.sums[e.step % kInlineSlots];
    const uint64_t got = messageChecksum(msg, bytes);
    if (got == sent) return true;
    snprintf(ch_.errorText, sizeof ch_.errorText,
             "%s (%s algorithm): message %llu on the link rank %d -> rank %d (%zu bytes, %s) arrived corrupted: "
             "checksum %016llx, sent as %016llx (CHORUS_CHECKSUM)",
             collName(ch_.coll), algoName(ch_.algo), (unsigned long long)(e.step + 1), e.peer, ch_.rank, bytes, kind,
             (unsigned long long)got, (unsigned long long)sent);
    CHORUS_WARN("%s", ch_.errorText);
    ch_.error = Status::DataCorrupt;
    return false;
  }

  // Tests only (HostChannel::corruptPeer): flip the first byte of the
  // message going to e.peer, after its checksum was taken.  An inline
  // message goes out from a flipped copy; a full slot is flipped in place,
  // after this rank's own copy of the result has been taken from it, so
  // that only the transfer is hurt.
  __attribute__((noinline)) const unsigned char *corruptOnTheWay(const FifoEnd &e, bool inlined,
                                                                 const unsigned char *inlineFrom,
                                                                 unsigned char *flipped, size_t n, T *dst,
                                                                 const T *&dstFrom) {
    ch_.corruptPeer = -1;
    if (inlined) {
      memcpy(flipped, inlineFrom, n * sizeof(T));
      flipped[0] ^= 0x01;
      return flipped;
    }
    char *slot = e.slot(e.step);
    if (dstFrom && reinterpret_cast<const char *>(dstFrom) == slot) {
      if (dstFrom != dst) memcpy(dst, dstFrom, n * sizeof(T));
      dstFrom = nullptr;
    }
    slot[0] ^= 0x01;
    return inlineFrom;
  }

  // An algorithm cut a slice larger than a FIFO on its way (a small FIFO:
  // bulk_links.h does not list a link the algorithm streams on).  A bug,
  // caught before anything is written past the slot.
  void sliceTooLarge(const FifoEnd &e, size_t bytes) {
    snprintf(ch_.errorText, sizeof ch_.errorText,
             "%s (%s algorithm): rank %d: a %zu-byte message does not fit the %zu-byte slots of its FIFO with rank %d",
             collName(ch_.coll), algoName(ch_.algo), ch_.rank, bytes, e.slotBytes, e.peer);
    CHORUS_WARN("%s", ch_.errorText);
    ch_.error = Status::InternalError;
  }

  bool wait(const uint64_t *counter, uint64_t target, int peer, bool forData) {
    if (static_cast<int64_t>(target) <= 0 || loadAcquire(counter) >= target) return true;
    Status s = hostWaitCounter(ch_, counter, target, peer, forData);
    if (s != Status::Ok) ch_.error = s;
    return s == Status::Ok;
  }

  // Wait for message e.step of the receive FIFO e on `word` (its last inline
  // line's flag, or the tail for a full slot) and check its header: a
  // message of another call (fifo.h) fails the collective with a mismatch
  // before anything is read from it.
  bool waitMessage(FifoEnd &e, const uint64_t *word, uint64_t header, size_t bytes) {
    const bool onTail = word == &e.header->tail.value;
    const uint64_t target = onTail ? e.step + 1 : messageHeader(headerMessage(header), 0);
    if (loadAcquire(word) < target) {
      const AwaitedMessage awaited = {&e, header, bytes};
      const Status s = hostWaitCounter(ch_, word, target, e.peer, true, &awaited);
      if (s != Status::Ok) {
        ch_.error = s;
        return false;
      }
    }
    // Read after the acquire of `word`: a full slot's header was stored before its tail.
    const uint64_t got = onTail ? __atomic_load_n(&e.inlineSlot(e.step)[0].flag, __ATOMIC_RELAXED)
                                : __atomic_load_n(word, __ATOMIC_RELAXED);
    if (__builtin_expect(got == header, 1)) return true;
    ch_.error = hostMismatch(ch_, e, got, header, bytes);
    return false;
  }

  HostChannel &ch_;
  // Left uninitialised on purpose: connect() fills what step() reads, and
  // zeroing 256 bytes (rep stos) per collective cost 5% of an 8-byte one.
  FifoEnd *recv_[kMaxPrimPeers];
  FifoEnd *send_[kMaxPrimPeers];
  int nrecv_ = 0, nsend_ = 0, srcPosition_ = 0;
};

}  // namespace chorus
