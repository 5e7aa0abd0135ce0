// What the ucx transport puts on the wire: the active-message ids and the
// header every message carries.  Kept apart so that the test forger
// (tests/mpi/net_forger.cc), a process outside the job, speaks the same
// format when it tries to inject messages.
#pragma once

#include <cstdint>

namespace chorus {

// kAmAbort: the sender failed in collective `value` of the communicator
// with the Status in `credit`; its payload is the error's text (at most
// kAbortTextMax bytes).  kAmPut: a data message whose full slot the
// sender already put into the receiver's slot (CHORUS_NET_PROTO, ucx_put.cc);
// header only, sent behind a fence, so the slot's bytes are there first.
// kAmRkey: where the sender's receive copy of our FIFO to it is (`value`),
// registered for our puts; its payload is the packed rkey (at most
// kRkeyMax bytes).  Sent once, when the sender links us (ucx_put.cc).
enum : unsigned { kAmData = 11, kAmCredit = 12, kAmCreditWanted = 13, kAmAbort = 14, kAmPut = 15, kAmRkey = 16 };
constexpr unsigned kRkeyMax = 1024;
constexpr unsigned kAbortTextMax = 240;

// Header of every active message.  For data, `value` is the message's
// number on its FIFO (0-based: the FIFO step it fills); for credits, the
// receiver's consumed count; for credit requests, the consumed count the
// sender waits to hear of.  Data also carries `credit`, the sender's
// consumed count of the FIFO going the other way: where data flows both
// ways (allreduce, allgather, alltoall) credits then need no message of
// their own.
//
// `token` is the communicator's: a random number every rank draws at set-up
// and that the bootstrap allgather (over the user's MPI communicator, which
// no process outside the job sees) combines.  A message without it did not
// come from a rank of this communicator: it is dropped and counted.
struct NetHeader {
  uint64_t token;
  int32_t src;     // the sender's rank in the communicator
  uint32_t lines;  // inline lines carried (0: a full-slot message)
  uint64_t value;
  uint64_t credit;
  uint64_t sum;    // data with CHORUS_CHECKSUM: the message's checksum (FifoEnd::sums)
  uint64_t first;  // data in a full slot: its header (fifo.h), the flag of its inline slot's line 0
};

}  // namespace chorus
