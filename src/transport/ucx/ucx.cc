// ucx transport: FIFOs to ranks on other nodes, carried by UCX active
// messages.
//
// Both ends of such a FIFO live in local memory: the sender's copy (its
// slots stage what it sends, its head receives the credits) and the
// receiver's (slots, inline lines and tail filled on arrival).  The host
// primitives post exactly as for shared memory and then call postMessage /
// postCredit (transport/net.h); the receiver's primitives poll their local
// tail, inline flags and head, calling progress() while they wait, which
// runs the AM handlers (ucx_worker.cc, ucx_arrival.cc).  So nothing in the algorithms or primitives
// knows the peer is remote.
//
// Messages go as active messages: one carries a message with its header,
// and its handler checks both before anything is stored.  UCX promises no
// order between active messages, so the receiver places each message in
// the slot its number names and raises the tail only over a contiguous run
// (ucx_arrival.cc), and checks every header against the FIFO's window and
// the communicator's token before it copies a byte.  Full slots of a
// useful size go instead by zero-copy put into the receiver's registered
// slot, followed behind a fence by a header-only notice checked the same
// way (ucx_put.cc, CHORUS_NET_PROTO).
//
// One UCP context and one worker per process, shared by every communicator
// context that crosses nodes (ucx_worker.cc): the worker's handlers find a
// message's communicator by its token, and one recursive lock serializes
// every call on the worker, whichever thread makes it (the threads running
// collectives, the progress thread, ucx_progress.cc, between them).
// Endpoints are the process's too: one to each peer process, shared by
// the communicators that link it and closed with the worker (ucx_worker.cc,
// ucxPeerEndpoint: UCX pairs endpoints by creation order, which
// per-communicator endpoints would let cross communicators).  Peers are
// linked on first use
// (CHORUS_NET_CONNECT): the FIFO copies for a peer on another node, and the
// endpoint to it (made from the worker address exchanged in the bootstrap
// allgather), exist only once an algorithm talks to it or it talks to us,
// so a rank's memory grows with the peers its algorithms touch (a ring
// two, a tree three), not with the job.
#include "transport/ucx/ucx.h"

#include <sched.h>
#include <sys/random.h>
#include <time.h>
#include <ucp/api/ucp.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/abandoned_barriers.h"
#include "core/log.h"
#include "core/params.h"
#include "transport/ucx/ucx_state.h"

namespace chorus {

namespace {

int64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// How long a failed rank lets its abort messages leave (ucxAbort).
constexpr int64_t kAbortSendNs = 200000000;

UcxState *stateOf(PeerLinks &ctx) { return static_cast<UcxState *>(ctx.netState); }

using WorkerLock = std::lock_guard<std::recursive_mutex>;


}  // namespace

// ---- links, made on first use --------------------------------------------------

ucp_ep_h ucxEndpoint(UcxState &st, int peer) {
  ucp_ep_h &ep = st.eps[size_t(peer)];
  if (ep || !st.isRemote[size_t(peer)] || st.failed[size_t(peer)] != UCS_OK) return ep;
  const PeerInfo &info = st.ctx->peers[size_t(peer)];
  ucs_status_t s = UCS_OK;
  ep = ucxPeerEndpoint(info.netAddr, size_t(info.netAddrLen), &s);
  if (!ep) {
    st.failed[size_t(peer)] = s != UCS_OK ? s : UCS_ERR_UNREACHABLE;  // a wait on it names the failure
    CHORUS_WARN("rank %d: UCX endpoint to rank %d failed: %s", st.ctx->rank, peer,
                ucs_status_string(st.failed[size_t(peer)]));
  }
  return ep;
}

// Both copies of a FIFO take the shape of its link, as in shared memory
// (full where it streams bulk data): the sender's copy stages what the
// receiver's receives.  The peer at the other end makes its own copies
// when it first uses the link, or when our first message reaches it.
//
// With the slots apart (NetCopyMemory::slotAlloc, GPUDirect RDMA) both
// copies' slots are one allocation of their own, send copy's first, and
// the copies keep their headers and inline slots only.
Status ucxLinkPeer(UcxState &st, int peer) {
  PeerLinks &ctx = *st.ctx;
  if (st.sendCopy[size_t(peer)]) return Status::Ok;
  const FifoShape outShape = fifoShape(ctx, peer, ctx.rank), inShape = fifoShape(ctx, ctx.rank, peer);
  size_t outBytes = 0;
  size_t bytes = netLinkBytes(ctx, peer, &outBytes);
  const size_t outSlots = outShape.slotBytes * size_t(outShape.nslots);
  const size_t slotBytes = st.slotsApart ? outSlots + inShape.slotBytes * size_t(inShape.nslots) : 0;
  char *slots = nullptr;
  if (st.slotsApart) {
    outBytes -= outSlots;
    bytes -= slotBytes;
    slots = static_cast<char *>(ctx.netMemory.slotAlloc(slotBytes));
  }
  char *memory = static_cast<char *>(ctx.netMemory.alloc ? ctx.netMemory.alloc(bytes) : aligned_alloc(kFifoAlign, bytes));
  if (!memory || (st.slotsApart && !slots)) {
    CHORUS_WARN("rank %d: no memory for the UCX FIFO copies of its link to rank %d (%zu bytes%s)", ctx.rank, peer,
                bytes + slotBytes, st.slotsApart ? ", the slots in device memory" : "");
    if (memory) ctx.netMemory.release ? ctx.netMemory.release(memory) : free(memory);
    if (slots) ctx.netMemory.slotFree(slots);
    return Status::SystemError;
  }
  memset(memory, 0, bytes);
  st.sendCopy[size_t(peer)] = memory;
  st.recvCopy[size_t(peer)] = memory + outBytes;
  FifoEnd &out = ctx.sendTo[size_t(peer)], &in = ctx.recvFrom[size_t(peer)];
  out = makeHostFifoEnd(ctx, memory, outShape, peer);
  in = makeHostFifoEnd(ctx, memory + outBytes, inShape, peer);
  if (slots) {
    out.slots = slots;
    in.slots = slots + outSlots;
  }
  out.remote = in.remote = 1;
  st.rkeysOwed.push_back(peer);
  ++st.counters.linkedPeers;
  st.counters.linkedBytes += bytes + slotBytes;
  return Status::Ok;
}

void ucxSend(UcxState &st, int peer, unsigned id, const NetHeader &h, const void *data, size_t bytes) {
  ucp_request_param_t param = {};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_AM_SEND_FLAG_EAGER;
  // UCX reads the header until the send completes (1.13 has no flag to copy
  // it), so it lives in a pool entry until then.  The payload is a FIFO slot
  // of ours, which stays put until the peer's credit frees it.
  NetHeader *held = st.freeHeaders.empty() ? new NetHeader : st.freeHeaders.back();
  if (!st.freeHeaders.empty()) st.freeHeaders.pop_back();
  *held = h;
  ucp_ep_h ep = ucxEndpoint(st, peer);
  ucs_status_ptr_t req = ep ? ucp_am_send_nbx(ep, id, held, sizeof *held, data, bytes, &param)
                            : UCS_STATUS_PTR(UCS_ERR_UNREACHABLE);
  st.sentSinceFlush = true;
  // A failed send fails the peer; a wait for it then says so.
  if (UCS_PTR_IS_ERR(req) && st.failed[size_t(peer)] == UCS_OK) st.failed[size_t(peer)] = UCS_PTR_STATUS(req);
  if (req && !UCS_PTR_IS_ERR(req)) st.pending.push_back({req, held});
  else st.freeHeaders.push_back(held);
}

namespace {

void ucxPostMessage(void *net, const FifoEnd &e, uint64_t msg, size_t bytes, size_t lines) {
  auto &st = *static_cast<UcxState *>(net);
  WorkerLock lock(ucxWorkerLock());
  FifoEnd &back = st.ctx->recvFrom[size_t(e.peer)];
  back.credited = back.step;
  if (back.step >= back.creditWanted) back.creditWanted = ~uint64_t(0);
  const NetHeader h{st.token, int32_t(st.ctx->rank), uint32_t(lines), msg, back.step,
                    e.sums ? e.sums[msg % kInlineSlots] : 0, lines ? 0 : e.inlineSlot(msg)[0].flag};
  if (lines) ucxSendData(st, e.peer, kAmData, h, e.inlineSlot(msg), lines * kInlineLineBytes);
  else if (ucxPutSlot(st, e, msg, bytes)) ucxSendData(st, e.peer, kAmPut, h, nullptr, 0);
  else ucxSendData(st, e.peer, kAmData, h, e.slot(msg), bytes);
}

void ucxPostCredit(void *net, const FifoEnd &e) {
  auto &st = *static_cast<UcxState *>(net);
  WorkerLock lock(ucxWorkerLock());
  ucxSend(st, e.peer, kAmCredit, NetHeader{st.token, int32_t(st.ctx->rank), 0, e.step, 0, 0, 0}, nullptr, 0);
}

void ucxPostCreditRequest(void *net, const FifoEnd &e, uint64_t need) {
  auto &st = *static_cast<UcxState *>(net);
  WorkerLock lock(ucxWorkerLock());
  ucxSend(st, e.peer, kAmCreditWanted, NetHeader{st.token, int32_t(st.ctx->rank), 0, need, 0, 0, 0}, nullptr, 0);
}

}  // namespace

// Under the worker lock, on a thread that may touch `st` (ucxMayTouch).
void ucxAfterProgress(UcxState &st) {
  if (__builtin_expect(!st.deferred.empty(), 0)) {
    std::vector<DeferredArrival> arrived;
    arrived.swap(st.deferred);
    for (const DeferredArrival &d : arrived)
      ucxArrive(st, d.id, d.header, d.data.data(), d.length, d.rendezvous);
  }
  for (int p : st.creditReplies) {
    FifoEnd &e = st.ctx->recvFrom[size_t(p)];
    if (e.step <= e.credited) continue;
    e.credited = e.step;
    e.creditWanted = ~uint64_t(0);
    ucxPostCredit(&st, e);
  }
  st.creditReplies.clear();
  // Not before every peer registered our token (ucxPostConnect).
  if (__builtin_expect(!st.rkeysOwed.empty(), 0) && st.connected) ucxSendOwedRkeys(st);
}

void ucxReapSends(UcxState &st) {
  size_t kept = 0;
  for (const UcxState::Pending &p : st.pending) {
    const ucs_status_t s = ucp_request_check_status(p.request);
    if (s == UCS_INPROGRESS) {
      st.pending[kept++] = p;
      continue;
    }
    // (A send that failed is one to a peer whose endpoint failed: the
    // endpoint handler has named it.)
    ucp_request_free(p.request);
    if (p.header) st.freeHeaders.push_back(p.header);
  }
  st.pending.resize(kept);
}

Status ucxProgress(void *net, int peer, uint64_t seq, char *text, size_t len) {
  auto &st = *static_cast<UcxState *>(net);
  WorkerLock lock(ucxWorkerLock());
  ucxRunWorker();
  return ucxAfterRun(st, peer, seq, text, len);
}

Status ucxAfterRun(UcxState &st, int peer, uint64_t seq, char *text, size_t len) {
  // The reorder fault's held messages go at the latest when a wait gives up
  // spinning (peer >= 0) or the collective ends (flush).
  if (__builtin_expect(st.faults != 0, 0) && peer >= 0) ucxReleaseHeld(st);
  ucxReapSends(st);
  // A broken contract fails every wait on the communicator from then on.
  if (__builtin_expect(st.violation != Status::Ok, 0) && peer >= 0) {
    if (text) snprintf(text, len, "%s", st.violationText);
    return st.violation;
  }
  if (peer < 0) return Status::Ok;
  if (st.abortFrom >= 0 && st.abortSeq <= seq) {
    if (text) snprintf(text, len, "%s", st.abortText);
    return st.abortStatus;
  }
  // Any failed connection fails a wait, not only one to the awaited peer:
  // no rank closes its connections before every rank is done with the
  // communicator (the release barrier, comm/context.cc), so a failure now
  // is a rank that died or became unreachable, which the collective needs,
  // directly or not.
  int gone = st.failed[size_t(peer)] != UCS_OK ? peer : -1;
  for (size_t p = 0; gone < 0 && p < st.failed.size(); ++p)
    if (st.failed[p] != UCS_OK) gone = int(p);
  if (gone < 0) return Status::Ok;
  if (text)
    snprintf(text, len, "rank %d: the UCX connection to rank %d failed (%s): that rank died, left the communicator "
             "early or is unreachable", st.ctx->rank, gone, ucs_status_string(st.failed[size_t(gone)]));
  return Status::PeerFailed;
}

namespace {

// Tells every peer on another node that collective `seq` failed here
// (NetOps::abort), once per communicator: a rank that failed stays failed.
// Not when the failure came from such a message: its sender told everyone.
// The messages are small; a bounded wait lets them leave before the caller
// goes away from Chorus for long.
void ucxAbort(void *net, uint64_t seq, Status why, const char *text) {
  auto &st = *static_cast<UcxState *>(net);
  {
    WorkerLock lock(ucxWorkerLock());
    if (st.abortSent || st.abortFrom >= 0) return;
    st.abortSent = true;
    // UCX reads the payload until the sends complete: a copy of our own.
    snprintf(st.abortOut, sizeof st.abortOut, "%s", text ? text : "");
    const size_t bytes = strlen(st.abortOut);
    // Every peer on another node, linked or not: a rank this one never
    // talked to may wait for one that waits for this one.
    for (int p = 0; p < st.ctx->nranks; ++p)
      if (st.isRemote[size_t(p)] && st.failed[size_t(p)] == UCS_OK)
        ucxSend(st, p, kAmAbort, NetHeader{st.token, int32_t(st.ctx->rank), 0, seq, uint64_t(why), 0, 0},
                st.abortOut, bytes);
  }
  const int64_t until = nowNs() + kAbortSendNs;
  while (nowNs() < until) {
    WorkerLock lock(ucxWorkerLock());  // (per round: other threads' collectives run the worker between)
    if (st.pending.empty()) break;
    ucxProgress(&st, -1, 0, nullptr, 0);
  }
}

// Not under the worker lock: it is taken per round, so that other threads'
// collectives run meanwhile.
Status waitRequest(UcxState &st, ucs_status_ptr_t req, int64_t timeoutNs, const char *what, char *text, size_t len) {
  bool timedOut = false;
  const ucs_status_t s = ucxWaitRequest(req, timeoutNs, &timedOut);
  if (s == UCS_OK) return Status::Ok;
  if (timedOut) {
    snprintf(text, len, "rank %d: UCX %s did not complete within CHORUS_TIMEOUT", st.ctx->rank, what);
    return Status::Timeout;
  }
  snprintf(text, len, "rank %d: UCX %s failed: %s", st.ctx->rank, what, ucs_status_string(s));
  return Status::SystemError;
}

// What was posted leaves: our requests complete (UCX took each message,
// and its payload slot may be reused once the peer's credit says so), then
// whatever UCX still owes the network (a put's completion, a message half
// written to a socket, an RDMA NIC's acknowledgements) completes too.  For
// the latter a collective does not wait while the progress thread watches
// the worker (ucx_progress.cc): a flush that does not complete at once is
// left to UCX, and the thread, woken at the collective's end, progresses
// the worker until it is done, so a root returns without a round trip to
// its receivers.  At teardown, and without the thread, it is waited for.
//
// Left to the thread, the flush is the worker's: it completes at once when
// nothing is owed on any endpoint, where an endpoint's flush (UCX 1.13,
// tcp, peer failure detection) returned a request after every collective
// and woke the thread each time (small allreduces on 2x2 played nodes
// 1.5-2x slower).  It may cover other communicators' sends too, which only
// wakes the thread; its failure is ignored (it may be another
// communicator's endpoint, or one UCX made for a process outside the job):
// this communicator's own are named by its waits (UcxState::failed).
// Waited for (at teardown, or without the thread), what the worker's flush
// did not finish at once is waited for on this communicator's endpoints,
// one by one: a teardown must not wait for another thread's collective in
// full flow.
Status flushSends(UcxState &st, int64_t timeoutNs, char *text, size_t len) {
  {
    WorkerLock lock(ucxWorkerLock());
    ucxReleaseHeld(st);
    if (!st.sentSinceFlush) return Status::Ok;
    st.sentSinceFlush = false;
  }
  const int64_t start = nowNs();
  for (;;) {
    {
      WorkerLock lock(ucxWorkerLock());
      if (st.pending.empty()) break;
      ucxProgress(&st, -1, 0, text, len);
    }
    if (timeoutNs > 0 && nowNs() - start > timeoutNs) {
      WorkerLock lock(ucxWorkerLock());
      snprintf(text, len, "rank %d: %zu UCX sends did not complete within CHORUS_TIMEOUT", st.ctx->rank,
               st.pending.size());
      return Status::Timeout;
    }
  }
  std::vector<ucs_status_ptr_t> waits;
  {
    WorkerLock lock(ucxWorkerLock());
    ucp_request_param_t param = {};
    ucs_status_ptr_t flush = ucp_worker_flush_nbx(st.worker, &param);
    if (!flush) return Status::Ok;  // (nothing owed on any endpoint)
    if (!UCS_PTR_IS_ERR(flush)) ucp_request_free(flush);  // (UCX completes it; freed then)
    if (st.progressAttached) {
      if (!UCS_PTR_IS_ERR(flush)) st.wakeProgress = true;
      return Status::Ok;
    }
    for (ucp_ep_h ep : st.eps) {
      if (!ep) continue;
      ucs_status_ptr_t epFlush = ucp_ep_flush_nbx(ep, &param);
      if (epFlush && !UCS_PTR_IS_ERR(epFlush)) waits.push_back(epFlush);  // (a failed endpoint: its waits say so)
    }
  }
  Status s = Status::Ok;
  for (ucs_status_ptr_t epFlush : waits) {
    const int64_t left = timeoutNs > 0 ? std::max<int64_t>(1, timeoutNs - (nowNs() - start)) : 0;
    const Status one = waitRequest(st, epFlush, left, "flush", text, len);
    if (s == Status::Ok) s = one;
  }
  // A flush fails when the peer's endpoint did (it left, or died): what
  // matters is whether anyone waits for that peer, which its waits decide.
  WorkerLock lock(ucxWorkerLock());
  for (ucs_status_t f : st.failed)
    if (f != UCS_OK) return s == Status::Timeout ? s : Status::Ok;
  return s;
}

// The end of a collective (and of a communicator): what was posted leaves.
// What arrived during the collective fails it too, even where no wait had
// to look (every message was there at its first poll): a broken contract,
// or a peer on another node that failed.
Status ucxFlush(void *net, uint64_t seq, int64_t timeoutNs, char *text, size_t len) {
  auto &st = *static_cast<UcxState *>(net);
  const Status s = flushSends(st, timeoutNs, text, len);
  if (s != Status::Ok) return s;
  WorkerLock lock(ucxWorkerLock());
  if (st.violation != Status::Ok) {
    snprintf(text, len, "%s", st.violationText);
    return st.violation;
  }
  if (st.abortFrom >= 0 && st.abortSeq <= seq) {
    snprintf(text, len, "%s", st.abortText);
    return st.abortStatus;
  }
  return Status::Ok;
}

// ---- the transport's operations -----------------------------------------------

bool ucxCanConnect(const PeerInfo &self, const PeerInfo &peer) {
  return self.hostHash != peer.hostHash && peer.netAddrLen > 0;
}

Status ucxSetup(PeerLinks &ctx, PeerInfo &self) {
  auto *st = new UcxState;
  st->ctx = &ctx;
  ctx.netState = st;
  CHORUS_CHECK(ucxAcquireWorker(*st, ctx.nodeRank, ctx.nranks - ctx.nodeSize, ctx.nodeSize));
  // This rank's share of the communicator's token (ucxConnect combines them).
  if (getrandom(&self.netNonce, sizeof self.netNonce, 0) != ssize_t(sizeof self.netNonce)) {
    CHORUS_WARN("getrandom failed (%s): no token for the UCX messages", strerror(errno));
    return Status::SystemError;
  }
  if (const char *faults = getenv("CHORUS_TEST_NET_FAULTS")) ucxSetTestFaults(ctx, ucxParseFaults(faults));
  WorkerLock lock(ucxWorkerLock());
  ucp_worker_attr_t attr = {};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS | UCP_WORKER_ATTR_FIELD_ADDRESS_FLAGS;
  attr.address_flags = UCP_WORKER_ADDRESS_FLAG_NET_ONLY;
  const ucs_status_t s = ucp_worker_query(st->worker, &attr);
  if (s != UCS_OK) {
    CHORUS_WARN("ucp_worker_query failed: %s", ucs_status_string(s));
    return Status::SystemError;
  }
  const bool fits = attr.address_length <= sizeof self.netAddr;
  if (fits) {
    memcpy(self.netAddr, attr.address, attr.address_length);
    self.netAddrLen = int32_t(attr.address_length);
  }
  ucp_worker_release_address(st->worker, attr.address);
  if (!fits) {
    CHORUS_WARN("the UCX worker address takes %zu bytes, more than the %zu the bootstrap carries (narrow UCX_TLS "
                "or UCX_NET_DEVICES)",
                size_t(attr.address_length), sizeof self.netAddr);
    return Status::Unsupported;
  }
  const int users = ucxWorkerUsers();
  CHORUS_INFO(kSubsysNet, "UCX worker: the process's, shared by %d communicator%s, address of %d bytes", users,
              users == 1 ? "" : "s", int(self.netAddrLen));
  return Status::Ok;
}

Status ucxConnect(PeerLinks &ctx, const PeerInfo *all) {
  UcxState &st = *stateOf(ctx);
  WorkerLock lock(ucxWorkerLock());
  // Until postConnect's end, only this thread takes in this communicator's
  // messages (ucxMayTouch): the set-up still writes its FIFO ends.
  st.owner = std::this_thread::get_id();
  const size_t n = size_t(ctx.nranks);
  st.eps.assign(n, nullptr);
  st.isRemote.assign(n, 0);
  st.failed.assign(n, UCS_OK);
  st.arrivals.assign(n, NetArrivals{});
  st.held.assign(n, HeldMessage{});
  st.sendCopy.assign(n, nullptr);
  st.recvCopy.assign(n, nullptr);
  st.linkMemh.assign(n, nullptr);
  st.rkeyOut.assign(n, {});
  st.putTo.assign(n, PutTarget{});
  ucxChoosePutProtocol(st);
  // Slots in device memory take puts only: no CPU copies into them.
  st.slotsApart = ctx.netMemory.slotAlloc != nullptr && !ctx.checksum;
  if (st.slotsApart) {
    st.putMinBytes = 1;
    st.putNativeOnly = false;
  }
  // Every rank draws a nonce; every rank mixes all of them alike, so all
  // hold the same token, which only the ranks of this communicator know.
  uint64_t token = 0x243f6a8885a308d3ull;
  for (int p = 0; p < ctx.nranks; ++p) {
    token ^= all[p].netNonce;
    token *= 0x9e3779b97f4a7c15ull;
    token ^= token >> 29;
  }
  st.token = token;
  // Before the bootstrap's agreement that follows, and so before any peer
  // can send us a message with the token (ucxPostConnect).
  CHORUS_CHECK(ucxRegister(st));
  // Until linked, a peer's ends are empty (no header) but marked remote:
  // the primitives ask for the link (NetOps::link) before they use one.
  int remote = 0;
  for (int p = 0; p < ctx.nranks; ++p) {
    if (p == ctx.rank || !ucxCanConnect(all[ctx.rank], all[p])) continue;
    ++remote;
    st.isRemote[size_t(p)] = 1;
    for (FifoEnd *e : {&ctx.sendTo[size_t(p)], &ctx.recvFrom[size_t(p)]}) {
      *e = FifoEnd{};
      e->peer = p;
      e->remote = 1;
    }
  }
  const bool eager = strcmp(paramString(ParamId::NetConnect), "eager") == 0;
  if (eager)
    for (int p = 0; p < ctx.nranks; ++p) {
      if (!st.isRemote[size_t(p)]) continue;
      CHORUS_CHECK(ucxLinkPeer(st, p));
      if (!ucxEndpoint(st, p)) return Status::SystemError;
    }
  CHORUS_INFO(kSubsysNet, "UCX: %d ranks on other nodes, %s (CHORUS_NET_CONNECT=%s): %llu bytes of FIFO copies now",
              remote, eager ? "all linked now" : "each linked on first use", paramString(ParamId::NetConnect),
              (unsigned long long)st.counters.linkedBytes);
  return Status::Ok;
}

// Every rank of the communicator is in this call.  Under
// CHORUS_NET_CONNECT=eager every endpoint is connected here: UCX connects
// an endpoint on its first use, and that needs the peer to progress its
// worker; each rank flushes its endpoints (which connects them) and keeps
// progressing until a non-blocking barrier says every rank is done with its
// own.  On first use (the default) the progress thread (ucx_progress.cc)
// answers a connection to an idle rank instead, and the loop only runs the
// barrier; the ranks agree on that loop whatever their setting, so that a
// setting that differs between ranks costs nothing but its own memory.
//
// The barrier also says every rank registered the communicator's token
// (ucxConnect): a message with it that reached a rank before would find no
// communicator on the shared worker and count as forged.  So this rank
// sends nothing before it completes, not even the rkeys of the peers
// linked already (eager): they leave after the loop.
Status ucxPostConnect(PeerLinks &ctx) {
  UcxState &st = *stateOf(ctx);
  std::vector<std::pair<int, ucs_status_ptr_t>> flushes;
  {
    WorkerLock lock(ucxWorkerLock());
    for (int p = 0; p < ctx.nranks; ++p) {
      if (!st.eps[size_t(p)]) continue;
      ucp_request_param_t param = {};
      ucs_status_ptr_t req = ucp_ep_flush_nbx(st.eps[size_t(p)], &param);
      if (UCS_PTR_IS_ERR(req)) {
        CHORUS_WARN("UCX connection to rank %d failed: %s", p, ucs_status_string(UCS_PTR_STATUS(req)));
        for (const auto &f : flushes) ucp_request_free(f.second);
        return Status::SystemError;
      }
      if (req) flushes.push_back({p, req});
    }
  }
  const int64_t timeoutNs = paramInt(ParamId::Timeout) * 1000000000ll;
  const int64_t start = nowNs();
  MPI_Request barrier = MPI_REQUEST_NULL;
  Status result = Status::Ok;
  for (bool everyoneDone = false; !everyoneDone;) {
    {
      // (Per round: other threads' communicators use the worker between.)
      WorkerLock lock(ucxWorkerLock());
      ucxProgress(&st, -1, 0, nullptr, 0);
      size_t kept = 0;
      for (const auto &f : flushes) {
        const ucs_status_t s = ucp_request_check_status(f.second);
        if (s == UCS_INPROGRESS) {
          flushes[kept++] = f;
          continue;
        }
        ucp_request_free(f.second);
        if (s != UCS_OK && result == Status::Ok) {
          CHORUS_WARN("UCX connection to rank %d failed: %s", f.first, ucs_status_string(s));
          result = Status::SystemError;
        }
      }
      flushes.resize(kept);
    }
    if (flushes.empty() && barrier == MPI_REQUEST_NULL) CHORUS_MPICHECK(PMPI_Ibarrier(ctx.barrierComm, &barrier));
    if (barrier != MPI_REQUEST_NULL) {
      int done = 0;
      CHORUS_MPICHECK(PMPI_Test(&barrier, &done, MPI_STATUS_IGNORE));
      everyoneDone = done != 0;
    }
    if (!everyoneDone && timeoutNs > 0 && nowNs() - start > timeoutNs) {
      CHORUS_WARN("UCX connections to %zu ranks on other nodes did not complete within CHORUS_TIMEOUT%s",
                  flushes.size(), flushes.empty() ? " (waiting for other ranks)" : "");
      WorkerLock lock(ucxWorkerLock());
      for (const auto &f : flushes) {
        ucp_request_cancel(st.worker, f.second);
        ucp_request_free(f.second);
      }
      keepAbandonedBarrier(barrier, ctx.barrierComm);
      return Status::Timeout;
    }
  }
  {
    WorkerLock lock(ucxWorkerLock());
    st.connected = true;
    ucxAfterProgress(st);  // what arrived for it on other threads, and the rkeys owed
    st.owner = std::thread::id();
  }
  if (result == Status::Ok) result = ucxProgressAttach(st);
  return result;
}

// No rank closes its endpoints before every rank of the communicator is done
// with its collectives.  A rank that finished first (a broadcast root runs up
// to a FIFO ahead of its receivers) would otherwise close connections whose
// last messages its peers have not read yet: closing a TCP socket with
// unread bytes (credits sent to it) resets the connection, the reset drops
// what the peer's socket still holds, and the peer's collective fails with
// "Endpoint timeout" naming this rank (seen in 1 of 3 runs of 20000
// back-to-back broadcasts, 4 ranks on 4 played nodes, ending in
// MPI_Finalize).  So ucxFree runs after the release's barrier
// (comm/context.cc), which progresses UCX meanwhile so that the peers
// still receiving get what they wait for.
//
// Whether to enter the barrier must not depend on what one rank saw: a
// collective that failed (a checksum mismatch, a timeout) fails on some
// ranks and succeeds on others, and a rank that skipped the barrier
// because of its own error both left the others waiting 10 s for it and,
// closing its endpoints early, turned their wait into "Endpoint timeout"
// (checksum-np4-2x2 in CI).  Every Chorus wait is bounded by
// CHORUS_TIMEOUT, so a rank whose collective failed still comes.  Only a
// failed endpoint skips it: its peer is dead or unreachable, and then the
// barrier cannot complete on any rank.
bool ucxBeginFree(PeerLinks &ctx) {
  const UcxState *st = stateOf(ctx);
  if (!st) return true;
  std::lock_guard<std::recursive_mutex> lock(ucxWorkerLock());  // (endpoint errors come from any thread's progress)
  for (ucs_status_t f : st->failed)
    if (f != UCS_OK) return false;
  return true;
}

std::mutex g_keptMutex;
// Never destroyed: a global vector's destructor at exit would leave the
// memory unreachable, which LeakSanitizer reports.
std::vector<void *> *g_kept = new std::vector<void *>;

// Keeps a link's memory (a FIFO copy, or slots apart) for the process's
// life instead of freeing it, reachable: a peer may still put into it.
void keepLinkMemory(void *memory) {
  std::lock_guard<std::mutex> lock(g_keptMutex);
  g_kept->push_back(memory);
}

// Its token is unregistered before its endpoints close (late messages with
// it are dropped silently from then on); the worker goes with the process's
// last communicator crossing nodes.
Status ucxFree(PeerLinks &ctx) {
  UcxState *st = stateOf(ctx);
  if (!st) return Status::Ok;
  char text[256];
  UcxCounters counters = ucxCounters(ctx);
  ucxProgressDetach(*st);  // from here its flushes are waited for
  if (st->worker) {
    {
      WorkerLock lock(ucxWorkerLock());
      st->owner = std::this_thread::get_id();
    }
    // Whatever was posted leaves first, within a bounded time: a dead peer
    // must not hang the teardown.
    ucxFlush(st, 0, 10ll * 1000000000, text, sizeof text);
    {
      WorkerLock lock(ucxWorkerLock());
      for (const UcxState::Pending &p : st->pending) {
        ucp_request_cancel(st->worker, p.request);
        ucp_request_free(p.request);
        if (p.header) st->freeHeaders.push_back(p.header);
      }
      st->pending.clear();
      ucxReleasePuts(*st);
      // No handler runs on it from here (a late message is dropped
      // silently).  The endpoints are the process's, shared with its other
      // communicators: they stay, and close with the worker
      // (ucx_worker.cc, ucxPeerEndpoint says why).
      counters = ucxCounters(ctx);
      ucxUnregister(*st);
      st->eps.clear();  // (an endpoint's failure no longer concerns this one)
    }
  }
  ucxUnregister(*st);  // (when set-up failed before the worker)
  CHORUS_INFO(kSubsysNet, "rank %d linked %llu ranks on other nodes (%llu bytes of FIFO copies) and sent %llu full "
              "slots by put", ctx.rank, (unsigned long long)counters.linkedPeers,
              (unsigned long long)counters.linkedBytes, (unsigned long long)counters.puts);
  if (counters.forgedDropped)
    CHORUS_WARN("rank %d dropped %llu UCX messages without a token of its communicators while this one lived",
                ctx.rank, (unsigned long long)counters.forgedDropped);
  ucxReleaseWorker(*st);
  // A communicator on which something failed keeps its links' memory for
  // the process's life: a peer that had not yet learnt of the failure may
  // have a put on its way into it, and a put lands whatever our state
  // says (tcp's emulated put writes wherever its address says, after any
  // free: ASan saw it, on the device links, in CI).  Reachable, so
  // LeakSanitizer stays quiet.
  bool failed = st->violation != Status::Ok || st->abortFrom >= 0 || st->abortSent || ctx.netMemory.keepOnFree;
  for (ucs_status_t f : st->failed) failed = failed || f != UCS_OK;
  if (failed && counters.linkedPeers && !ctx.netMemory.keepOnFree)  // (the device proxy says why itself)
    CHORUS_INFO(kSubsysNet, "rank %d: a collective failed on this communicator: its UCX links' memory stays "
                "allocated, since a peer may still put into it", ctx.rank);
  // (Each link's one allocation starts at its send copy; the slots apart
  // start at the send copy's slots.)
  for (size_t p = 0; p < st->sendCopy.size(); ++p) {
    if (!st->sendCopy[p]) continue;
    if (failed) {
      keepLinkMemory(st->sendCopy[p]);
      if (st->slotsApart) keepLinkMemory(ctx.sendTo[p].slots);
      continue;
    }
    if (st->slotsApart) ctx.netMemory.slotFree(ctx.sendTo[p].slots);
    ctx.netMemory.release ? ctx.netMemory.release(st->sendCopy[p]) : free(st->sendCopy[p]);
  }
  for (NetHeader *h : st->freeHeaders) delete h;
  delete st;
  ctx.netState = nullptr;
  return Status::Ok;
}


// NetOps::link.  An error is the collective's: the link's memory could not
// be had.
Status ucxLink(void *net, int peer, char *text, size_t len) {
  auto &st = *static_cast<UcxState *>(net);
  WorkerLock lock(ucxWorkerLock());
  const Status s = ucxLinkPeer(st, peer);
  if (s != Status::Ok)
    snprintf(text, len, "rank %d: no memory for the FIFO copies of its UCX link to rank %d", st.ctx->rank, peer);
  return s;
}

// From enter to leave this thread owns the communicator: the handlers run
// on its FIFO ends only here (ucxMayTouch), and the progress thread leaves
// the worker alone while any collective runs in the process.
void ucxEnter(void *net) {
  auto &st = *static_cast<UcxState *>(net);
  ucxProgressCollectiveStarts();
  WorkerLock lock(ucxWorkerLock());
  st.owner = std::this_thread::get_id();
}

void ucxLeave(void *net) {
  auto &st = *static_cast<UcxState *>(net);
  bool wake;
  {
    WorkerLock lock(ucxWorkerLock());
    const size_t pending = st.pending.size();
    ucxAfterProgress(st);  // what other threads left it since its last poll
    st.owner = std::thread::id();
    // (What that sent and UCX has not finished, the thread finishes.)
    wake = st.wakeProgress || st.pending.size() > pending;
    st.wakeProgress = false;
  }
  ucxProgressCollectiveEnds();
  if (wake) ucxProgressWake();
}

const NetOps kUcxNetOps = {ucxPostMessage, ucxPostCredit, ucxPostCreditRequest, ucxProgress, ucxFlush,
                           ucxAbort,       ucxLink,       ucxEnter,             ucxLeave};

}  // namespace

const TransportOps kUcxTransport = {"ucx", ucxCanConnect, ucxSetup, ucxConnect, ucxPostConnect, ucxBeginFree, ucxFree,
                                   kUcxBytesPerPeer};
const NetOps &ucxNetOps() { return kUcxNetOps; }

}  // namespace chorus
