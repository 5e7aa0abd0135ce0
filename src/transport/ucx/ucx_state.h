// The ucx transport's state for one communicator context, shared by its
// sources: ucx.cc (set-up, sending, progress, teardown), ucx_worker.cc (the
// process's context and worker, which every communicator shares, and the
// registry of their tokens), ucx_put.cc (zero-copy full slots),
// ucx_arrival.cc (the receive handlers and their checks) and ucx_faults.cc
// (the test-only fault injection).
#pragma once

#include <mpi.h>
#include <ucp/api/ucp.h>

#include <cstdint>
#include <mutex>
#include <thread>
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
// (ucx_put.cc): the peer's receive copy of our FIFO to it, registered
// there, and the rkey to reach it, which the peer sends (kAmRkey) once it
// has linked us (ucxLinkPeer).  A slot's offset in the peer's copy is its
// offset in our send copy: both take the link's shape.  Until the rkey is
// here (or when the peer registered nothing), full slots to it go as
// active messages.
struct PutTarget {
  uint64_t remoteRecvCopy = 0;
  std::vector<char> packedRkey;  // as it arrived; unpacked on first use (it needs the endpoint)
  ucp_rkey_h rkey = nullptr;
  bool native = false;  // UCX has an RMA lane to it (not its emulation over active messages)
};

// A message that arrived on a thread that may not touch its communicator's
// state (ucx_worker.cc), copied until that state's owner takes it in.
struct DeferredArrival {
  unsigned id;
  NetHeader header;
  std::vector<char> data;
  size_t length;  // (data is empty for a rendezvous message, which is refused)
  bool rendezvous;
};

// Every field below that a handler reads or writes is accessed under
// ucxWorkerLock (ucx_worker.cc), and the FIFO ends a handler fills only by
// the state's owner, or by any thread while it has none.
struct UcxState {
  PeerLinks *ctx = nullptr;
  ucp_context_h ucp = nullptr;    // the process's (ucx_worker.cc)
  ucp_worker_h worker = nullptr;  // the process's, shared by its communicators
  uint64_t token = 0;             // the communicator's (ucx_wire.h)
  // The thread running this communicator's collective (NetOps::enter to
  // leave), set-up (ucxConnect to the end of ucxPostConnect) or teardown
  // (ucxFree); none between them.  Its primitives touch the FIFO ends
  // without the worker lock, so only it may run the handlers on them.
  std::thread::id owner;
  std::vector<DeferredArrival> deferred;  // arrived on another thread while owned
  bool registered = false;        // its token is accepted (ucxRegister to ucxUnregister)
  bool connected = false;         // every peer registered our token: messages may go (ucxPostConnect)
  uint64_t droppedAtStart = 0;    // the process's unknown-token drops when this registered
  std::vector<ucp_ep_h> eps;      // by rank, on the shared worker; null until first used, and for ranks on this node
  std::vector<char> isRemote;     // by rank: on another node (linked by this transport)
  // Links are made on first use (ucxLinkPeer), or all at set-up under
  // CHORUS_NET_CONNECT=eager: for each linked peer one allocation holds our
  // send copy of the FIFO to it and, after it, our receive copy of its FIFO
  // to us, registered with UCX for its puts.
  std::vector<char *> sendCopy, recvCopy;  // by rank; null: not linked
  std::vector<ucp_mem_h> linkMemh;         // by rank: the registration (null: none)
  std::vector<int> rkeysOwed;     // linked peers not yet told where their puts go (sent after progress)
  std::vector<std::vector<char>> rkeyOut;  // by rank: what we told it, read by UCX until sent
  // Zero-copy full slots (ucx_put.cc, CHORUS_NET_PROTO).
  std::vector<PutTarget> putTo;   // by rank
  size_t putMinBytes = ~size_t(0);  // full slots of at least this many bytes go as puts...
  bool putNativeOnly = false;       // ...and only where UCX has an RMA lane (auto)
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
  bool progressAttached = false;  // the progress thread finishes what a collective's flush leaves
  bool wakeProgress = false;      // the collective left UCX a flush to finish: wake the thread at its end
  // The links' slots in an allocation of their own (NetCopyMemory::slotAlloc,
  // GPUDirect RDMA): full slots come and go by put only.
  bool slotsApart = false;
};
// What the by-rank tables above keep for each rank of the communicator
// (ucxConnect sizes them all to nranks), for the footprint: a vector added
// by rank belongs here too.
constexpr size_t kUcxBytesPerPeer = sizeof(ucp_ep_h) + sizeof(char) + sizeof(char *) * 2 + sizeof(ucp_mem_h) +
                                    sizeof(std::vector<char>) + sizeof(PutTarget) + sizeof(ucs_status_t) +
                                    sizeof(NetArrivals) + sizeof(HeldMessage);

// The process's UCX (ucx_worker.cc).  The lock: held around every UCX call
// and every access to a state that handlers also make (recursive: the
// transport's entries nest).  Acquire/release: the context and worker,
// created for the first communicator context and destroyed with the last;
// acquire fills st.ucp and st.worker.  Register: from now on messages with
// st.token reach st; unregister: they are dropped (silently for a while:
// its token is kept among the retired).
std::recursive_mutex &ucxWorkerLock();
Status ucxAcquireWorker(UcxState &st, int localRank, int remoteRanks, int localRanks);
void ucxReleaseWorker(UcxState &st);
ucp_worker_h ucxSharedWorker();  // (under the lock; null: none now)
// Waits for `req` (what a UCX call returned: null when done at once, or an
// error), progressing the worker (ucxRunWorker) under the lock a round at
// a time, at most timeoutNs (0: no limit), and frees it.  Its status; when
// it took longer, *timedOut (then cancelled).
ucs_status_t ucxWaitRequest(ucs_status_ptr_t req, int64_t timeoutNs, bool *timedOut);
// The process's endpoint to the worker at `address` (a peer's, from the
// bootstrap), made on first use and shared by every communicator; null with
// *status saying why when it could not be made or has failed since.  Closed
// with the worker.
ucp_ep_h ucxPeerEndpoint(const void *address, size_t length, ucs_status_t *status);
int ucxWorkerUsers();
Status ucxRegister(UcxState &st);
void ucxUnregister(UcxState &st);
// Messages dropped because no communicator of the process holds their
// token (a process outside the job), since the process started.
uint64_t ucxUnknownDropped();
// Whether this thread may run handlers on `st` now: it owns it, or no
// thread does.  Under the lock.
bool ucxMayTouch(const UcxState &st);
// Runs the worker once, bounded, then ucxAfterProgress for every state
// this thread may touch.  ucxServeWorker (the progress thread): the same,
// and every state's finished sends freed.
void ucxRunWorker();
void ucxServeWorker();
// What handlers left a state to do, never done inside a handler (ucx.cc):
// its deferred arrivals taken in, credits asked for sent, rkeys owed sent
// once it is connected.  ucxReapSends: its finished send requests freed.
void ucxAfterProgress(UcxState &st);
void ucxReapSends(UcxState &st);

// An arrived message with this state's token (ucx_arrival.cc): checked,
// then taken in.  Only where ucxMayTouch, under the worker lock.
void ucxArrive(UcxState &st, unsigned id, const NetHeader &h, const void *data, size_t length, bool rendezvous);

// Zero-copy full slots (ucx_put.cc).  ucxChoosePutProtocol, at set-up:
// CHORUS_NET_PROTO into putMinBytes and putNativeOnly.  ucxSendOwedRkeys,
// after progress (never from a handler): registers each newly linked
// peer's FIFO copies and tells it where its puts go, with the rkey (a
// failure only means it sends us active messages).  ucxTakeRkey, from the
// handler of such a message.  ucxPutSlot: puts full slot `msg` of `e` into
// the peer's copy, behind a fence, when the protocol and size say so; true
// when it did (the notice, kAmPut, follows).  ucxReleasePuts: the rkeys and
// the registrations, before the endpoints and the memory go.
void ucxChoosePutProtocol(UcxState &st);
void ucxSendOwedRkeys(UcxState &st);
void ucxTakeRkey(UcxState &st, int peer, uint64_t recvCopy, const void *packed, size_t bytes);
bool ucxPutSlot(UcxState &st, const FifoEnd &e, uint64_t msg, size_t bytes);
// Whether a put to `peer` can go now (its rkey came).
bool ucxPutReady(const UcxState &st, int peer);
void ucxReleasePuts(UcxState &st);

// The FIFO copies for `peer`, allocated and their ends filled, once
// (ucx.cc).  Called by the primitives before they use a link (NetOps::link)
// and by the arrival handlers for a peer that used it first; the
// registration and the rkey for the peer's puts follow after progress
// (rkeysOwed).  Not Ok only when memory ran out.
Status ucxLinkPeer(UcxState &st, int peer);
// (The bytes of that one allocation: netLinkBytes, transport.h.)
// The endpoint to `peer`, created on first use (null: UCX could not).
ucp_ep_h ucxEndpoint(UcxState &st, int peer);

// The progress thread (ucx_progress.cc): attach once the communicator is
// set up (after postConnect), detach before its teardown flushes: the
// thread runs while any communicator is attached.  Without an event
// descriptor or epoll, attach warns and the worker progresses only inside
// Chorus's calls.
Status ucxProgressAttach(UcxState &st);
void ucxProgressDetach(UcxState &st);
// Wakes the thread, which serves the worker once no collective runs: one
// ended with sends UCX has not finished (flushSends).
void ucxProgressWake();
// A collective starts / ends in this process (NetOps::enter/leave): the
// thread leaves the worker to the collectives' threads while any runs.
void ucxProgressCollectiveStarts();
void ucxProgressCollectiveEnds();
// Runs the worker once, bounded (ucxRunWorker), then frees the
// communicator's finished sends (ucx.cc).  Not Ok when `peer` (>= 0), the
// rank waited for, or the communicator failed.
Status ucxProgress(void *net, int peer, uint64_t seq, char *text, size_t len);
// Its second half, for a caller that ran the worker once for several
// states (the device proxy): the state's finished sends freed, and not Ok
// as above.  Under the worker lock.
Status ucxAfterRun(UcxState &st, int peer, uint64_t seq, char *text, size_t len);

// Posts one active message (ucx.cc).
void ucxSend(UcxState &st, int peer, unsigned id, const NetHeader &h, const void *data, size_t bytes);
// Test faults (ucx_faults.cc): sends data message `h` with the faults
// chosen, or plainly (`id`: kAmData, or kAmPut for a put's notice); and sends whatever the reorder fault still holds.
void ucxSendData(UcxState &st, int peer, unsigned id, const NetHeader &h, const void *data, size_t bytes);
void ucxReleaseHeld(UcxState &st);
unsigned ucxParseFaults(const char *text);

}  // namespace chorus
