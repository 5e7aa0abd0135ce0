// The ucx transport's state for one communicator context, shared by its
// sources: ucx.cc (set-up, sending, progress, teardown), ucx_put.cc
// (zero-copy full slots), ucx_arrival.cc (the receive handlers and their
// checks) and ucx_faults.cc (the test-only fault injection).
#pragma once

#include <mpi.h>
#include <ucp/api/ucp.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "transport/transport.h"
#include "transport/ucx/ucx.h"
#include "transport/ucx/ucx_wire.h"

namespace chorus {

// Arrivals on one receive FIFO from another node.  UCX promises no order
// between active messages: a small one runs its handler on arrival, a large
// one once reassembled, and several rails (UCX_MAX_EAGER_RAILS) or another
// protocol choice let a later message overtake an earlier one.  So each
// message lands in the slot its number names, and the FIFO's tail advances
// only over a contiguous run of arrived messages.  A sender runs at most
// kInlineSlots (64) messages ahead of what the receiver consumed, so the
// messages past the contiguous run fit in one 64-bit mask.
struct NetArrivals {
  uint64_t contiguous = 0;  // messages 0..contiguous-1 have all arrived (= the local tail)
  uint64_t beyond = 0;      // bit i: message contiguous + i has arrived
};

// A data message held back by the reorder fault (ucx_faults.cc).
struct HeldMessage {
  bool held = false;
  unsigned id = kAmData;  // or kAmPut: the notice of a put already made
  NetHeader header{};
  const void *data = nullptr;
  size_t bytes = 0;
};

// Where this rank puts full slots for one peer on another node
// (ucx_put.cc): its own copy of the FIFO to it (a slot's offset there is
// the slot's offset in the peer's copy: both take the link's shape), and the
// peer's receive copy, registered there, with its rkey.  No rkey: the peer
// registered nothing (it failed to, or has no memory to give), and its
// full slots go as active messages.
struct PutTarget {
  const char *sendCopy = nullptr;
  uint64_t remoteRecvCopy = 0;
  ucp_rkey_h rkey = nullptr;
  bool native = false;  // UCX has an RMA lane to it (not its emulation over active messages)
};

struct UcxState {
  PeerLinks *ctx = nullptr;
  ucp_context_h ucp = nullptr;    // the process's (ucx.cc)
  ucp_worker_h worker = nullptr;
  uint64_t token = 0;             // the communicator's (ucx_wire.h)
  std::vector<ucp_ep_h> eps;      // by rank; null for ranks on this node
  char *memory = nullptr;         // the FIFO copies: [remote peer][send, recv]
  size_t memoryBytes = 0;
  std::vector<char *> sendCopy, recvCopy;  // by rank: our copies of the FIFOs to and from it (in memory)
  // Zero-copy full slots (ucx_put.cc, CHORUS_NET_PROTO): `memory`
  // registered with UCX, its packed rkey, and each peer's target.
  ucp_mem_h memh = nullptr;
  std::vector<char> packedRkey;
  std::vector<PutTarget> putTo;   // by rank
  size_t putMinBytes = ~size_t(0);  // full slots of at least this many bytes go as puts
  struct Pending {
    void *request;
    NetHeader *header;  // read by UCX until the request completes (none for a put)
  };
  std::vector<Pending> pending;   // send requests not yet complete
  std::vector<NetHeader *> freeHeaders;
  std::vector<ucs_status_t> failed;  // by rank: why its endpoint failed (UCS_OK: alive)
  std::vector<int> creditReplies; // ranks that asked for a credit we can give now (sent after progress)
  std::vector<NetArrivals> arrivals;  // by rank
  // The first message that broke the transport's contract (a duplicate, a
  // number outside the FIFO's window, a size that does not fit): every
  // wait on this communicator fails with it from then on, since a FIFO
  // that received it can no longer be trusted.
  Status violation = Status::Ok;
  char violationText[320] = "";
  // The first abort message from a peer on another node (kAmAbort): every
  // wait on the communicator fails with it from then on.
  int abortFrom = -1;
  uint64_t abortSeq = 0;          // the collective it failed in: ours from that one on fail too
  Status abortStatus = Status::PeerFailed;  // the sender's error class
  char abortText[kAbortTextMax + 96] = "";
  bool abortSent = false;         // this rank told its peers of its own failure
  char abortOut[kAbortTextMax + 1] = "";  // what it told them
  UcxCounters counters;
  bool forgedWarned = false;
  unsigned faults = 0;            // kNetFault* (ucx.h), tests only
  uint64_t faultCountdown = 0;    // data messages until the next one-shot fault
  uint64_t forgeTick = 0;         // data messages sent under the forge fault
  std::vector<HeldMessage> held;  // by rank: the reorder fault's held message
  bool sentSinceFlush = false;    // a collective on this node only needs no flush
  // Held by a collective from start to end (NetOps::enter/leave), by the
  // progress thread while it serves the idle worker (ucx_progress.cc).
  std::mutex busy;
  std::atomic<int64_t> idleSince{0};  // CLOCK_MONOTONIC ns at the end of the last collective
  int progressEfd = -1;           // the worker's event descriptor, while the progress thread watches it
  MPI_Request closing = MPI_REQUEST_NULL;  // the barrier ucxFree waits for (ucxBeginFree)
  bool closingStarted = false;
};

// Arrival handlers (ucx_arrival.cc), registered by ucxSetup.
ucs_status_t ucxOnData(void *arg, const void *header, size_t headerLength, void *data, size_t length,
                       const ucp_am_recv_param_t *param);
ucs_status_t ucxOnCredit(void *arg, const void *header, size_t headerLength, void *data, size_t length,
                         const ucp_am_recv_param_t *param);
ucs_status_t ucxOnPut(void *arg, const void *header, size_t headerLength, void *data, size_t length,
                      const ucp_am_recv_param_t *param);
ucs_status_t ucxOnAbort(void *arg, const void *header, size_t headerLength, void *data, size_t length,
                        const ucp_am_recv_param_t *param);
ucs_status_t ucxOnCreditWanted(void *arg, const void *header, size_t headerLength, void *data, size_t length,
                               const ucp_am_recv_param_t *param);

// Zero-copy full slots (ucx_put.cc).  ucxRegisterFifos, in connect:
// registers `memory` and packs its rkey (a failure only means no puts to
// this rank).  ucxExchangeRkeys, in postConnect, on every rank of the
// communicator: each tells each peer on another node where its receive
// copy is, with the rkey.  ucxPutSlot: puts full slot `msg` of `e` into
// the peer's copy, behind a fence, when the protocol and size say so;
// true when it did (the notice, kAmPut, follows).  ucxReleasePuts: the
// rkeys and the registration, before the endpoints and the memory go.
void ucxRegisterFifos(UcxState &st);
Status ucxExchangeRkeys(UcxState &st);
bool ucxPutSlot(UcxState &st, const FifoEnd &e, uint64_t msg, size_t bytes);
void ucxReleasePuts(UcxState &st);

// The progress thread (ucx_progress.cc): attach once the communicator is
// set up (after postConnect), detach before its teardown touches the
// worker.  Without an event descriptor or epoll, attach warns and the
// worker progresses only inside collectives, as before.
Status ucxProgressAttach(UcxState &st);
void ucxProgressDetach(UcxState &st);
// Runs the worker once, bounded, then what its handlers left to do
// (credits to send, finished sends to free) (ucx.cc).  Not Ok when `peer`
// (>= 0), the rank waited for, or the communicator failed.
Status ucxProgress(void *net, int peer, uint64_t seq, char *text, size_t len);

// Posts one active message (ucx.cc).
void ucxSend(UcxState &st, int peer, unsigned id, const NetHeader &h, const void *data, size_t bytes);
// Test faults (ucx_faults.cc): sends data message `h` with the faults
// chosen, or plainly (`id`: kAmData, or kAmPut for a put's notice); and sends whatever the reorder fault still holds.
void ucxSendData(UcxState &st, int peer, unsigned id, const NetHeader &h, const void *data, size_t bytes);
void ucxReleaseHeld(UcxState &st);
unsigned ucxParseFaults(const char *text);

}  // namespace chorus
