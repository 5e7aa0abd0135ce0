// What the host primitives need from a network transport (ucx): FIFOs whose
// other end is on another node live in local memory on both sides, and the
// transport carries each message and each credit across.  The primitives
// call these hooks right after they post to such a FIFO, and the waits call
// progress() while they poll, so the receiver's primitives poll local
// memory exactly as they do for shared memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/common.h"

namespace chorus {

struct FifoEnd;

struct NetOps {
  // Message `msg` of the send FIFO `e` was just posted locally: `bytes` of
  // payload in its slot, or `lines` inline lines (flags included) when
  // inline (lines > 0).
  void (*postMessage)(void *net, const FifoEnd &e, uint64_t msg, size_t bytes, size_t lines);
  // The receive FIFO `e` consumed messages up to its step: tell the sender.
  void (*postCredit)(void *net, const FifoEnd &e);
  // The send FIFO `e` has waited long for its head to reach `need`: ask the
  // receiver to say when it has consumed that many (credits for inline
  // messages go lazily, see prims_host.h).
  void (*postCreditRequest)(void *net, const FifoEnd &e, uint64_t need);
  // Run the network: deliver what arrived, complete what was sent.  Not Ok
  // (with `text` filled) when `peer`, the rank the caller waits for, has
  // failed or left.  A peer leaving is no error by itself: its connections
  // close only once every rank is done with the communicator (the release
  // barrier, comm/context.cc), and a peer may still send it credits it no longer needs.
  // `seq` is the running collective's number: a peer's failure in a later
  // one (it ran ahead) does not fail this one.
  Status (*progress)(void *net, int peer, uint64_t seq, char *text, size_t len);
  // Wait until the transport has taken everything posted, so that no peer
  // waits for a message stuck here after collective `seq` returns (ucx:
  // its requests complete; what the network still owes, its progress
  // thread finishes, or this waits for it where there is no such thread).
  Status (*flush)(void *net, uint64_t seq, int64_t timeoutNs, char *text, size_t len);
  // Collective `seq` failed on this rank with `why` (`text` says more):
  // tell every peer on another node, so that ranks waiting for this one, or
  // for ranks that wait for it, stop within a round trip instead of
  // CHORUS_TIMEOUT, with the same error class (a mismatch stays a mismatch
  // on every rank).  Peers on this node see it in this rank's RankStatus.
  // Bounded, best effort.
  void (*abort)(void *net, uint64_t seq, Status why, const char *text);
  // Make the link to `peer` (its FIFO ends, marked remote, have no memory
  // until then): the transport links peers on first use, and the
  // primitives call this before they use an end that is not linked yet.
  // Not Ok (with `text` filled) when it cannot.
  Status (*link)(void *net, int peer, char *text, size_t len);
  // A collective starts / ends on this communicator: between the two, the
  // calling thread alone runs its network (ucx's progress thread serves it
  // only while idle); every other hook is called between them.
  void (*enter)(void *net);
  void (*leave)(void *net);
};

}  // namespace chorus
