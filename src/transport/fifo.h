// A connection is a FIFO of `nslots` slots living in the receiver's memory,
// with a tail counter (messages posted, written by the sender) and a head
// counter (messages consumed, written by the receiver: credits back).  Both
// counters only grow, across collectives, so nothing is reset per call.
// The layout is plain data shared by host and device code.
#pragma once

#include "core/common.h"

namespace chorus {

constexpr size_t kFifoAlign = 128;  // keep writer-owned words on their own lines

struct alignas(kFifoAlign) FifoCounter {
  uint64_t value;
};

struct FifoHeader {
  FifoCounter tail;                 // sender -> receiver: messages posted
  FifoCounter head;                 // receiver -> sender: messages consumed
};

// Small messages travel inline: in 64-byte lines of 56 payload bytes and
// an 8-byte flag, the message number, stored last with release semantics.
// A receiver polls the flag of the message's last line instead of the tail
// counter, so an 8-byte message costs one cache-line transfer instead of
// two (tail, then data).  Flag words only ever hold message numbers, which
// grow, so a stale flag can never look like the awaited one.
constexpr size_t kInlineLineBytes = 64;
constexpr size_t kInlineLinePayload = 56;
constexpr int kInlineLines = 8;
constexpr size_t kInlineMaxBytes = kInlineLines * kInlineLinePayload;  // 448
constexpr size_t kInlineSlotBytes = kInlineLines * kInlineLineBytes;   // 512
// Inline slots per FIFO, deeper than the full-size ring (CHORUS_SHM_SLOTS):
// message s uses inline slot s % kInlineSlots or full slot s % nslots, and a
// sender may run that far ahead of the receiver's consumed count (head).
// Back-to-back small broadcasts pipeline through it: 4 ranks on 2 cores,
// 8 B, 3.6 us per call with 4 slots, 0.7 us with 64.
constexpr int kInlineSlots = 64;

struct alignas(kInlineLineBytes) InlineLine {
  unsigned char payload[kInlineLinePayload];
  uint64_t flag;
};

// Every message's header word: its number on the FIFO (1-based) in the
// high bits, so that flags still only grow, and a tag in the low bits
// saying which call sent it: the collective, its sequence number modulo
// 16 and a hash of the call's arguments and of the message's size.  Inline
// messages carry it as the flag of every line, full ones as the flag of
// line 0 of their inline slot (unused by them; free once the full slot
// is).  A receiver compares it with the tag it expects, always: a rank in
// another call, or in the same one with another count, fails with a
// mismatch where it would have folded the wrong message (HostPrims).
// Costs no load or store of its own on an inline message.  2^44 messages
// per FIFO before the number wraps: 190 days at 1 per microsecond.
constexpr int kTagBits = 20;
constexpr uint32_t kTagMask = (1u << kTagBits) - 1;
constexpr int kTagCollShift = 4;     // bits 0-3: the call's sequence number, mod 16
constexpr uint32_t kTagAbortColl = 7;  // bits 4-6: the collective, or this: the sender gave up (below)
constexpr int kTagHashShift = 7;     // bits 7-19: the arguments' and size's hash
CHORUS_HOST_DEVICE constexpr uint64_t messageHeader(uint64_t message, uint32_t tag) {
  return (message << kTagBits) | tag;
}
CHORUS_HOST_DEVICE constexpr uint64_t headerMessage(uint64_t header) { return header >> kTagBits; }
CHORUS_HOST_DEVICE constexpr uint32_t headerTag(uint64_t header) { return uint32_t(header & kTagMask); }
CHORUS_HOST_DEVICE constexpr uint32_t tagColl(uint32_t tag) { return (tag >> kTagCollShift) & 7u; }
CHORUS_HOST_DEVICE constexpr uint32_t tagSeq(uint32_t tag) { return tag & 15u; }
// The tag of a call (collective `coll` numbered `seq`, its arguments hashed
// into `args`); messageTag adds a message's size.
CHORUS_HOST_DEVICE constexpr uint32_t callTag(uint32_t coll, uint64_t seq, uint64_t args) {
  return uint32_t(seq & 15u) | (coll & 7u) << kTagCollShift | uint32_t((args * 0x9E3779B97F4A7C15ull) >> 51) << kTagHashShift;
}
CHORUS_HOST_DEVICE constexpr uint32_t messageTag(uint32_t call, size_t bytes) {
  return call ^ (uint32_t(uint32_t(bytes) * 0x9E3779B1u) >> 19) << kTagHashShift;
}
// A rank that found a mismatch writes one message of this tag into every
// FIFO it sends on, on all the lines of its inline slot, so that a peer
// waiting for its data learns it failed (the peer's wait, on any line or
// on the tail, sees it) instead of waiting out CHORUS_TIMEOUT; line 0's
// payload holds the failed call's sequence number.
constexpr uint32_t kAbortTag = kTagAbortColl << kTagCollShift;

CHORUS_HOST_DEVICE constexpr size_t fifoHeaderBytes() {
  return ((sizeof(FifoHeader) + kFifoAlign - 1) / kFifoAlign) * kFifoAlign;
}

// Bytes of one FIFO (header, inline slots, slots), rounded so FIFOs can be
// packed back to back.
CHORUS_HOST_DEVICE constexpr size_t fifoFootprint(size_t slotBytes, int nslots) {
  return fifoHeaderBytes() + kInlineSlotBytes * size_t(kInlineSlots) + slotBytes * size_t(nslots);
}

// The slots of a FIFO.  Full FIFOs (the settings: CHORUS_SHM_SLOTS x
// CHORUS_SHM_SLOT_SIZE) sit on the links that stream bulk data
// (coll/bulk_links.h); every other link gets a small one, for the
// all-peer algorithms, which run small messages (and large ones cut in
// small slices when forced).  Small FIFOs keep all the inline slots, so
// messages up to kInlineMaxBytes pipeline exactly as on full ones.  32
// ranks on a node, defaults: 5 full inbound FIFOs at most, the publish ring
// and 26 small ones, 7.8 MiB per rank instead of 33 MiB.  (Communicators
// whose full FIFOs fit in 8 MiB per rank keep them on every link: context.cc.)
struct FifoShape {
  size_t slotBytes;
  int nslots;
};
constexpr size_t kSmallFifoSlotBytes = 16 * 1024;
constexpr int kSmallFifoSlots = 2;
// A communicator whose ranks fit a full FIFO from every peer in this much
// (the memory target of large nodes) keeps them (comm/context.cc): the
// one-shot algorithms then move a message in one slice, as when the
// planner's crossovers were measured.  With the defaults, up to 7 ranks.
// 4 ranks on 2 cores, one-shot allreduce, whole against 16 KiB slices
// (CHORUS_SHM_SLOTS=7 against 8, which crosses this limit; two runs each):
// 32 KiB 9.4-10.0 us against 11.5-11.7, 64 KiB 17.4-17.9 against 23.6-29.2.
constexpr size_t kEveryFifoFullMaxBytes = size_t(8) << 20;

CHORUS_HOST_DEVICE constexpr size_t fifoFootprint(FifoShape shape) { return fifoFootprint(shape.slotBytes, shape.nslots); }

// Whether a communicator of `nranks` keeps a full FIFO on every link
// (PeerLinks::everyFifoFull); else the all-peer algorithms move in the
// small FIFOs' slices.  The planner's model and chorus_sim ask the same.
constexpr bool everyFifoFullFits(int nranks, FifoShape full) {
  return size_t(nranks) * fifoFootprint(full) <= kEveryFifoFullMaxBytes;
}

// One side's view of a FIFO.  `step` is this side's private count of
// messages sent (sender) or received (receiver).  Both ends of a FIFO see
// the same slotBytes and nslots, which may differ from one FIFO to the next
// (FifoShape): no message may exceed its FIFO's slotBytes.
struct FifoEnd {
  FifoHeader *header;
  InlineLine *inlineSlots;  // [kInlineSlots][kInlineLines]
  char *slots;
  size_t slotBytes;
  int nslots;
  int peer;  // the rank at the other end, for error messages
  // 1 when the other end is on another node: the FIFO is this side's copy,
  // and the host primitives hand each message or credit to the network
  // transport (transport/net.h) to carry across.
  int remote;
  uint64_t step;
  // The other side's counter as last read (sender: head).  A sender with
  // credits left from its last look needs not read the receiver's line
  // again: one cache-line transfer less per message.
  uint64_t seen;
  // Receiver across nodes: the count of consumed messages last told to the
  // sender, by a credit or riding on a message going back (ucx.cc), and the
  // count the sender asked to be told of once reached (UINT64_MAX: none).
  uint64_t credited;
  uint64_t creditWanted;
  // Sender across nodes: the head it last asked the receiver for.
  uint64_t creditAsked;
  // CHORUS_CHECKSUM (host FIFOs only; null when off): the checksum of
  // message s at sums[s % kInlineSlots], written by the sender before it
  // posts the message.  A sender never runs more than kInlineSlots messages
  // ahead of the receiver (inline depth; full slots are fewer), so an entry
  // is not overwritten before the receiver has checked it.
  uint64_t *sums;

  CHORUS_HOST_DEVICE char *slot(uint64_t s) const { return slots + (s % uint64_t(nslots)) * slotBytes; }
  CHORUS_HOST_DEVICE InlineLine *inlineSlot(uint64_t s) const {
    return inlineSlots + (s % uint64_t(kInlineSlots)) * kInlineLines;
  }
};

// Publish rings.  The FIFO a rank keeps for itself carries no messages, so
// it doubles as the rank's publish ring: the rank writes a slice into its
// slots once and every other rank copies it out (allgather and broadcast of
// large messages: one write for n-1 readers, where forwarding writes every
// byte into every reader's FIFO).  The header's tail counts slices
// published; the inline area holds one consumed counter per reader, each on
// its own line, written by that reader.
constexpr int kMaxPublishReaders = int(kInlineSlotBytes * size_t(kInlineSlots) / sizeof(FifoCounter));

// The checksum area that follows a host FIFO when CHORUS_CHECKSUM is on
// (see FifoEnd::sums); one line-aligned block of kInlineSlots words.
constexpr size_t kFifoChecksumBytes = size_t(kInlineSlots) * sizeof(uint64_t);

CHORUS_HOST_DEVICE inline FifoCounter *publishConsumed(const FifoEnd &ring, int reader) {
  return reinterpret_cast<FifoCounter *>(ring.inlineSlots) + reader;
}

CHORUS_HOST_DEVICE inline FifoEnd makeFifoEnd(char *fifoBase, size_t slotBytes, int nslots, int peer) {
  FifoEnd e;
  e.header = reinterpret_cast<FifoHeader *>(fifoBase);
  e.inlineSlots = reinterpret_cast<InlineLine *>(fifoBase + fifoHeaderBytes());
  e.slots = fifoBase + fifoHeaderBytes() + kInlineSlotBytes * size_t(kInlineSlots);
  e.slotBytes = slotBytes;
  e.nslots = nslots;
  e.peer = peer;
  e.remote = 0;
  e.step = 0;
  e.seen = 0;
  e.credited = 0;
  e.creditWanted = ~uint64_t(0);
  e.creditAsked = 0;
  e.sums = nullptr;
  return e;
}

}  // namespace chorus
