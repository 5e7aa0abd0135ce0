// What the host primitives need from a communicator context: the FIFO ends
// towards every peer, and how to wait.  One channel per context; the host
// executor runs every algorithm on it in the calling thread.
#pragma once

#include "coll/algorithms.h"
#include "coll/patterns.h"
#include "core/common.h"
#include "transport/fifo.h"
#include "transport/net.h"

namespace chorus {

struct TraceEntry;
struct RankStatus;

struct HostChannel {
  int rank = 0;
  int nranks = 1;
  FifoEnd *sendTo = nullptr;    // [nranks]; sendTo[p] writes into p's memory
  FifoEnd *recvFrom = nullptr;  // [nranks]; recvFrom[p] reads our own memory
  FifoEnd *publish = nullptr;   // [nranks]; publish[p] is p's publish ring (fifo.h); null: none
  size_t slotBytes = 0;          // slots of the full FIFOs: the slice of the streaming algorithms
  // The slice of the algorithms that talk to every peer (direct, pairwise,
  // dissemination), whose FIFOs may be small ones (bulk_links.h); the same
  // on every rank.
  size_t allPeerSliceBytes = 0;
  int64_t timeoutNs = 0;        // 0: wait forever
  int spinCount = 0;            // polls before yielding the core
  // The running collective and algorithm, for errors: named (collName,
  // algoName) only when one is raised, not on every call.
  Coll coll = Coll::Count;
  Algo algo = Algo::Count;
  Status error = Status::Ok;    // sticky: once set, every primitive is a no-op
  // The running call's number on the communicator and the tag its messages
  // carry (fifo.h, callTag): set by hostBeginCall.  0 on every rank when
  // nobody sets them (unit tests of the primitives): they still agree.
  uint64_t seq = 0;
  uint32_t tag = 0;
  char *scratch = nullptr;      // slotBytes of private memory for the direct algorithms
  // Set when some peers are on other nodes (FifoEnd::remote): the network
  // transport's hooks and state.
  const NetOps *netOps = nullptr;
  void *net = nullptr;
  // The rings' order of the ranks, grouped by node, and its inverse (null on
  // one node: rank order).  See Ring in patterns.h.
  const int *ringOrder = nullptr;
  const int *ringWhere = nullptr;
  // The same grouping for the trees across nodes (patterns.h); null on one node.
  const NodeLayout *nodes = nullptr;
  // Nodes of equal size (hierarchical allreduce, allreduce_hierarchical.h):
  // this node's ranks and the ranks of our local index on every node, with
  // our place in each; nlocal == 0 when the nodes differ in size or there is
  // one node.
  const int *localRanks = nullptr;
  int nlocal = 0, localIndex = 0;
  const int *crossRanks = nullptr;
  int ncross = 0, crossIndex = 0;
  // While a phase runs on a group: the group's index -> communicator rank.
  const int *group = nullptr;
  char errorText[256] = "";     // what failed, for the MPI error string
  // The running collective's flight-recorder entry (null: not recording):
  // a wait past the spin phase notes there which peer and message it waits for.
  TraceEntry *tracing = nullptr;
  // [nranks] pids of the peers on this machine, 0 for the others: a long
  // wait checks about once a second that they still live (Context::watchedPids).
  const int32_t *watchedPids = nullptr;
  // [nranks] where each peer on this node is (its RankStatus in shared
  // memory; null for the others): a long wait also stops once a peer has
  // failed in this very call, instead of waiting out CHORUS_TIMEOUT for it.
  const RankStatus *const *peerStatus = nullptr;
  // Every rank may read every peer's memory by pid (watchedPids) with
  // cross-memory attach: the single-copy alltoall can run.  Agreed.
  bool singleCopy = false;
  // Tests only (CHORUS_CHECKSUM): flip a byte of message `corruptMessage`
  // (1-based, as in errors) to rank `corruptPeer`, or of slice
  // `corruptPublished` of this rank's publish ring, after its checksum is
  // taken, as a fault on the way would.  Nothing else sets them.
  int corruptPeer = -1;
  uint64_t corruptMessage = 0;
  uint64_t corruptPublished = 0;
};

// Name the call that runs next on `ch`, for its messages' tags and for
// errors: collective `coll` numbered `seq` on the communicator, with
// `args` a digest of the arguments every rank must pass alike (count x
// element size, type, op, root; see hostCallArgs).
inline void hostBeginCall(HostChannel &ch, Coll coll, Algo algo, uint64_t seq, uint64_t args) {
  ch.coll = coll;
  ch.algo = algo;
  ch.seq = seq;
  ch.tag = callTag(uint32_t(coll), seq, args);
}
inline uint64_t hostCallArgs(uint64_t bytes, int type, int op, int root) {
  return bytes ^ uint64_t(uint32_t(type)) << 40 ^ uint64_t(uint32_t(op)) << 48 ^ uint64_t(uint32_t(root)) << 20;
}

// Block until the counter or flag `word` reaches `target` (acquire),
// backing off from spinning to yielding to short sleeps.  On timeout logs
// which peer and message we waited for and returns Status::Timeout.
// `awaited`: when waiting for a receive FIFO's next message, so that one
// posted in another shape (the peer's call differs: its lines or slot are
// not those waited on, though the tail counts it) ends the wait with
// Status::Mismatch instead of a timeout.  Any wait on `peer` ends with
// Status::Mismatch too once `peer` gave up after a mismatch (fifo.h,
// kAbortTag).
struct AwaitedMessage {
  const FifoEnd *fifo;  // the receive FIFO; its message fifo->step is awaited
  uint64_t header;      // the header it must carry (fifo.h)
  size_t bytes;         // its size, as this rank expects it
};
Status hostWaitCounter(HostChannel &ch, const uint64_t *word, uint64_t target, int peer, bool waitingForData,
                       const AwaitedMessage *awaited = nullptr);

// Message `e.step` of the receive FIFO `e` arrived with header `got` where
// `want` was expected: name both calls in ch.errorText, tell every peer
// (hostGiveUp) and return Status::Mismatch.  `bytes`: the size expected.
Status hostMismatch(HostChannel &ch, const FifoEnd &e, uint64_t got, uint64_t want, size_t bytes);

// Post a message of kAbortTag on every FIFO this rank sends on whose slot
// is free, so that peers waiting for this rank stop (fifo.h).  The
// channel is broken afterwards: its FIFOs hold a message nobody expects.
void hostGiveUp(HostChannel &ch);

inline uint64_t loadAcquire(const uint64_t *w) { return __atomic_load_n(w, __ATOMIC_ACQUIRE); }
inline void storeRelease(uint64_t *w, uint64_t v) { __atomic_store_n(w, v, __ATOMIC_RELEASE); }
inline uint64_t loadAcquire(const FifoCounter *c) { return loadAcquire(&c->value); }
inline void storeRelease(FifoCounter *c, uint64_t v) { __atomic_store_n(&c->value, v, __ATOMIC_RELEASE); }

}  // namespace chorus
