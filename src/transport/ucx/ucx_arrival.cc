// ucx transport: what arrives, checked before one byte of it is used.
//
// A message reaches a communicator only if it carries its token (the
// shared worker's handlers find the communicator by it, ucx_worker.cc;
// otherwise it came from outside the job: dropped and counted), and is
// accepted only if it names a sender in the communicator, and fits: its
// number inside its FIFO's window and not already received, its size
// within a slot, its inline line count within an inline slot, its credit
// within what was sent.  A message with the token that fails a check is a
// broken contract (a bug, or memory corruption on the way): the
// communicator fails with a named error (UcxState::violation), and nothing
// is copied.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "core/log.h"
#include "transport/ucx/ucx_state.h"

namespace chorus {

namespace {

void raiseHead(FifoHeader *fifo, uint64_t consumed) {
  if (fifo && consumed > fifo->head.value) __atomic_store_n(&fifo->head.value, consumed, __ATOMIC_RELEASE);
}

// Records the first broken contract; later ones add nothing new.
__attribute__((format(printf, 2, 3))) void violate(UcxState &st, const char *format, ...) {
  if (st.violation != Status::Ok) return;
  st.violation = Status::DataCorrupt;
  int n = snprintf(st.violationText, sizeof st.violationText, "rank %d: ", st.ctx->rank);
  va_list args;
  va_start(args, format);
  vsnprintf(st.violationText + n, sizeof st.violationText - size_t(n), format, args);
  va_end(args);
  CHORUS_WARN("%s", st.violationText);
}

// A header with this communicator's token that names a sender on another
// node in it (the others never use this transport).  Anything else is
// dropped and counted, with one warning per communicator.
bool acceptSender(UcxState &st, const NetHeader &h) {
  if (h.src >= 0 && h.src < st.ctx->nranks && st.isRemote[size_t(h.src)]) return true;
  ++st.counters.forgedDropped;
  if (!st.forgedWarned) {
    st.forgedWarned = true;
    CHORUS_WARN("rank %d dropped a UCX message with this communicator's token that names rank %d, not one on "
                "another node; such messages are dropped and counted", st.ctx->rank, int(h.src));
  }
  return false;
}

// A credit from `src`: it consumed `consumed` messages of our FIFO to it,
// which cannot be more than we sent (none where we never linked it).
bool creditFits(UcxState &st, int src, uint64_t consumed) {
  const FifoEnd &e = st.ctx->sendTo[size_t(src)];
  if (consumed <= e.step) return true;
  violate(st, "rank %d credited %llu messages on its FIFO from this rank, which sent it only %llu", src,
          (unsigned long long)consumed, (unsigned long long)e.step);
  return false;
}

// A data message from `h.src`, its payload `data` (`length` bytes) or, for
// a put (kAmPut), already in its slot: checked, placed, and the tail raised
// over what is now contiguous.
void acceptData(UcxState &st, const NetHeader &h, const void *data, size_t length, bool put) {
  const int src = h.src;
  // The first message of a peer that linked us before we linked it.
  if (ucxLinkPeer(st, src) != Status::Ok) {
    violate(st, "no memory for the FIFO copies of the UCX link from rank %d: its message %llu is lost", src,
            (unsigned long long)h.value);
    return;
  }
  FifoEnd &e = st.ctx->recvFrom[size_t(src)];
  NetArrivals &a = st.arrivals[size_t(src)];
  const uint64_t m = h.value;
  // The sender had a credit for this message: every message that used its
  // slot before was consumed here.
  const uint64_t depth = h.lines ? uint64_t(kInlineSlots) : uint64_t(e.nslots);
  if (m < a.contiguous || (m - a.contiguous < 64 && (a.beyond >> (m - a.contiguous) & 1))) {
    violate(st, "message %llu from rank %d arrived twice (UCX duplicated it, or the sender sent it again)",
            (unsigned long long)m, src);
    return;
  }
  if (m >= e.step + depth || m - a.contiguous >= 64) {
    violate(st, "message %llu from rank %d is outside its FIFO's window (%llu consumed, %llu %s slots)",
            (unsigned long long)m, src, (unsigned long long)e.step, (unsigned long long)depth,
            h.lines ? "inline" : "full");
    return;
  }
  // A put fills a full slot only, and its notice carries nothing.
  if (put ? (h.lines != 0 || length != 0)
          : h.lines ? (h.lines > unsigned(kInlineLines) || length != size_t(h.lines) * kInlineLineBytes)
                    : length > e.slotBytes) {
    violate(st, "message %llu from rank %d does not fit: %zu bytes in %u inline lines%s, where a slot holds %zu "
            "bytes and %d lines", (unsigned long long)m, src, length, h.lines, put ? " with a put" : "",
            e.slotBytes, kInlineLines);
    return;
  }
  // Slots in device memory (GPUDirect RDMA) are the NIC's to fill: a CPU
  // copy into them would be wrong, so a full slot must come by put (an
  // empty message has nothing to copy: it comes as a header).
  if (st.slotsApart && !put && !h.lines && length > 0) {
    violate(st, "message %llu from rank %d: a full slot as an active message, where this link's slots are device "
            "memory that only puts fill (CHORUS_NET_GDR must be alike on every rank)", (unsigned long long)m, src);
    return;
  }
  if (!creditFits(st, src, h.credit)) return;
  // A put's bytes may still be on their way into the GPU (GPUDirect RDMA).
  if (put && st.slotsApart && st.ctx->netMemory.slotsFlush) st.ctx->netMemory.slotsFlush();
  if (h.lines) memcpy(e.inlineSlot(m), data, length);
  else if (length) memcpy(e.slot(m), data, length);
  if (!h.lines) __atomic_store_n(&e.inlineSlot(m)[0].flag, h.first, __ATOMIC_RELAXED);
  if (e.sums) e.sums[m % kInlineSlots] = h.sum;
  a.beyond |= uint64_t(1) << (m - a.contiguous);
  const uint64_t before = a.contiguous;
  while (a.beyond & 1) {
    a.beyond >>= 1;
    ++a.contiguous;
  }
  if (a.contiguous != before) __atomic_store_n(&e.header->tail.value, a.contiguous, __ATOMIC_RELEASE);
  raiseHead(st.ctx->sendTo[size_t(src)].header, h.credit);
}

// The notice of a put (kAmPut): the sender fenced it behind the put, so
// UCX wrote the slot before this handler runs (ucp_worker_fence's
// contract).  The checks are those of any data message; only the copy is
// gone.  A put is possible only with this communicator's rkey, which only
// its ranks hold (exchanged over the user's MPI communicator).
void onData(UcxState &st, const NetHeader &h, const void *data, size_t length, bool rendezvous, bool put) {
  if (put) {
    acceptData(st, h, data, rendezvous ? ~size_t(0) : length, true);  // a payload: does not fit
    return;
  }
  if (rendezvous) {
    // Ours are sent eager; a rendezvous one is not of this protocol.
    violate(st, "rank %d sent a rendezvous active message, which this transport never sends", h.src);
    return;
  }
  acceptData(st, h, data, length, false);
}

// A peer on another node failed in collective h.value: its waits ended,
// so ours on it (or on ranks that wait for it) never would.  The text is
// the peer's own error, bounded and made printable before it is kept.
void onAbort(UcxState &st, const NetHeader &h, const void *data, size_t length, bool rendezvous) {
  if (st.abortFrom >= 0) return;
  char why[kAbortTextMax + 1] = "";
  if (!rendezvous) {
    const size_t n = std::min(length, size_t(kAbortTextMax));
    memcpy(why, data, n);
    why[n] = '\0';
    for (size_t i = 0; i < n && why[i]; ++i)
      if (why[i] < ' ' || why[i] > '~') why[i] = '?';
  }
  st.abortFrom = h.src;
  st.abortSeq = h.value;
  // Its class, where it is one a failure can have (a peer's death otherwise).
  if (h.credit > uint64_t(Status::Ok) && h.credit <= uint64_t(Status::Mismatch) &&
      Status(h.credit) != Status::Aborted && Status(h.credit) != Status::InvalidArgument)
    st.abortStatus = Status(h.credit);
  snprintf(st.abortText, sizeof st.abortText, "rank %d (on another node) failed in collective #%llu: %s", h.src,
           (unsigned long long)h.value, why[0] ? why : "no reason given");
  CHORUS_INFO(kSubsysNet, "rank %d: %s", st.ctx->rank, st.abortText);
}

// The sender waits for us to have consumed h.value messages of its FIFO.
// Answered at once (after the worker's progress: no sends from a handler)
// when we have, else by the consuming primitive when we get there.
void onCreditWanted(UcxState &st, const NetHeader &h) {
  // (It may overtake the first message it waits on: UCX keeps no order.)
  if (ucxLinkPeer(st, h.src) != Status::Ok) return;  // that message fails the communicator
  FifoEnd &e = st.ctx->recvFrom[size_t(h.src)];
  if (e.credited >= h.value) return;  // told already: that credit is on its way
  if (e.step >= h.value) st.creditReplies.push_back(h.src);
  else e.creditWanted = std::min(e.creditWanted, h.value);
}

}  // namespace

void ucxArrive(UcxState &st, unsigned id, const NetHeader &h, const void *data, size_t length, bool rendezvous) {
  if (!acceptSender(st, h)) return;
  switch (id) {
    case kAmData: onData(st, h, data, length, rendezvous, false); break;
    case kAmPut: onData(st, h, data, length, rendezvous, true); break;
    case kAmCredit:
      if (creditFits(st, h.src, h.value)) raiseHead(st.ctx->sendTo[size_t(h.src)].header, h.value);
      break;
    case kAmCreditWanted: onCreditWanted(st, h); break;
    case kAmAbort: onAbort(st, h, data, length, rendezvous); break;
    // Where a peer's receive copy of our FIFO to it is, and the rkey to put
    // there: it linked us.  A second one for the same link is ignored.
    case kAmRkey:
      if (!rendezvous) ucxTakeRkey(st, h.src, h.value, data, length);
      break;
    default: break;
  }
}

}  // namespace chorus
