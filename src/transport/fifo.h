// A connection is a FIFO of `nslots` slots living in the receiver's memory,
// with a tail counter (messages posted, written by the sender) and a head
// counter (messages consumed, written by the receiver: credits back).  Both
// counters only grow, across collectives, so nothing is reset per call.
// The layout is plain data shared by host and device code.
#pragma once

#include "core/common.h"

namespace chorus {

constexpr int kMaxFifoSlots = 64;
constexpr size_t kFifoAlign = 128;  // keep writer-owned words on their own lines

struct alignas(kFifoAlign) FifoCounter {
  uint64_t value;
};

struct FifoHeader {
  FifoCounter tail;                 // sender -> receiver: messages posted
  FifoCounter head;                 // receiver -> sender: messages consumed
  uint64_t bytes[kMaxFifoSlots];    // payload size of the message in each slot
};

// Bytes of one FIFO (header + slots), rounded so FIFOs can be packed back to back.
CHORUS_HOST_DEVICE constexpr size_t fifoFootprint(size_t slotBytes, int nslots) {
  return ((sizeof(FifoHeader) + kFifoAlign - 1) / kFifoAlign) * kFifoAlign + slotBytes * size_t(nslots);
}

// One side's view of a FIFO.  `step` is this side's private count of
// messages sent (sender) or received (receiver).
struct FifoEnd {
  FifoHeader *header;
  char *slots;
  size_t slotBytes;
  int nslots;
  int peer;  // the rank at the other end, for error messages
  uint64_t step;
  // The other side's counter as last read (sender: head).  A sender with
  // credits left from its last look needs not read the receiver's line
  // again: one cache-line transfer less per message.
  uint64_t seen;

  CHORUS_HOST_DEVICE char *slot(uint64_t s) const { return slots + (s % uint64_t(nslots)) * slotBytes; }
};

CHORUS_HOST_DEVICE inline FifoEnd makeFifoEnd(char *fifoBase, size_t slotBytes, int nslots, int peer) {
  FifoEnd e;
  e.header = reinterpret_cast<FifoHeader *>(fifoBase);
  e.slots = fifoBase + ((sizeof(FifoHeader) + kFifoAlign - 1) / kFifoAlign) * kFifoAlign;
  e.slotBytes = slotBytes;
  e.nslots = nslots;
  e.peer = peer;
  e.step = 0;
  e.seen = 0;
  return e;
}

}  // namespace chorus
