// ucx transport: FIFOs to ranks on other nodes, carried by UCX active
// messages.
//
// Both ends of such a FIFO live in local memory: the sender's copy (its
// slots stage what it sends, its head receives the credits) and the
// receiver's (slots, inline lines and tail filled on arrival).  The host
// primitives post exactly as for shared memory and then call postMessage /
// postCredit (transport/net.h); the receiver's primitives poll their local
// tail, inline flags and head, calling progress() while they wait, which
// runs the AM handlers below.  So nothing in the algorithms or primitives
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
// One UCP context per process (reference counted), one worker per
// communicator context (serialized: the thread running that communicator's
// collective progresses it, and between collectives the progress thread,
// ucx_progress.cc, under the communicator's lock).  Peers are linked on
// first use (CHORUS_NET_CONNECT): the FIFO copies for a peer on another
// node, and the endpoint to it (made from the worker address exchanged in
// the bootstrap allgather), exist only once an algorithm talks to it or it
// talks to us, so a rank's memory grows with the peers its algorithms
// touch (a ring two, a tree three), not with the job.
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
#include <vector>

#include "core/log.h"
#include "core/params.h"
#include "topo/topology.h"
#include "transport/ucx/ucx_state.h"

namespace chorus {

namespace {

// The process-wide UCP context, shared by every communicator context.
std::mutex g_ucpMutex;
ucp_context_h g_ucp = nullptr;
int g_ucpUsers = 0;

int64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// With several RDMA NICs on the node and no UCX_NET_DEVICES from the user,
// each rank uses the one nearest it (topoUcxNetDevice): nearest its GPU
// when it has one (the device current when its first communicator crossing
// nodes is set up: the UCP context is the process's), else on its NUMA
// domain, so that the ranks of a node spread over its rails instead of all
// taking UCX's first choice.
// Only for the topology of this machine: a recorded one (CHORUS_TOPO_FILE)
// names NICs this machine may lack.
void chooseNetDevice(ucp_config_t *config, int localRank) {
  if (getenv("UCX_NET_DEVICES")) return;
  NodeTopology topo;
  if (topoLoadLocal(&topo) != Status::Ok || paramRaw(ParamId::TopoFile)) return;
  const std::string device = topoUcxNetDevice(topo, topoRankKey(topoCurrentCudaDevice()), localRank);
  if (device.empty()) return;
  const ucs_status_t st = ucp_config_modify(config, "NET_DEVICES", device.c_str());
  if (st == UCS_OK) CHORUS_INFO(kSubsysNet, "UCX uses %s, the RDMA NIC nearest this rank's %s", device.c_str(),
                                topoCurrentCudaDevice() >= 0 ? "GPU" : "cores");
  else CHORUS_WARN("could not point UCX at %s: %s", device.c_str(), ucs_status_string(st));
}

// UCX reassembles an eager active message larger than one network segment
// (8 KiB over tcp) in a buffer it mallocs when the first fragment arrives
// and frees once our handler has copied it out.  Several full slots in
// flight at once (an alltoall at 4 ranks: three 64 KiB messages) leave
// more free at the heap's top than glibc's initial trim threshold (128
// KiB), so every collective grew the heap and gave it back: 16 page faults
// per 64 KiB, a fifth of the time in a profile, and a 1 MiB alltoall
// across 4 nodes 4x slower than Open MPI (perf/RESULTS.md).  glibc raises
// its mmap threshold to the size of a freed mapped block, and its trim
// threshold to twice that (mallopt(3), "dynamic mmap threshold"): freeing
// one such block once makes the heap keep what reassembly reuses.  A
// program that set the thresholds itself (mallopt) keeps its own.
constexpr size_t kReassemblyHeapBytes = size_t(4) << 20;

void keepReassemblyHeap() {
#ifdef __GLIBC__
  void *(*volatile allocate)(size_t) = malloc;  // not elided with the free below
  if (void *block = allocate(kReassemblyHeapBytes)) {
    static_cast<volatile char *>(block)[0] = 0;
    free(block);
  }
#endif
}

// UCX's tcp transport cuts an active message into segments of
// UCX_TCP_TX_SEG_SIZE (8 KiB by default) and reassembles anything longer
// than one: a 256 KiB full slot arrived as 32 segments, each a read and a
// handler call, then a copy out of the reassembly buffer.  Chorus's own UCP
// context (not the user's MPI's) gets segments that hold a full slot and
// its headers, so a slot is one segment and our handler copies it straight
// from UCX's receive buffer (2 ranks each its own node, allreduce 1-4 MiB:
// 0.77-0.89x Open MPI before, 1.36-1.40x after, perf/RESULTS.md).  UCX
// keeps such a buffer per connection only while a message is partly in.
// A user's UCX_TCP_TX_SEG_SIZE / UCX_TCP_RX_SEG_SIZE is kept; slots above
// kMaxTcpSegmentBytes still go in several segments.  (UCX applies the
// names without their TCP_ prefix to every transport whose table has them:
// only tcp's does.)
constexpr size_t kMaxTcpSegmentBytes = size_t(1) << 20;
constexpr size_t kTcpSegmentHeadroom = 4096;  // UCX's and Chorus's headers
constexpr size_t kUcxDefaultTcpSegmentBytes = 8192;  // UCX 1.13's TCP_TX_SEG_SIZE

// Whether UCX_TLS leaves UCX free to use tcp: unset, "all", a list naming
// tcp, or an exclusion ("^...") that does not name it.
bool tcpMayRun(const char *tls) {
  if (!tls || !*tls) return true;
  if (tls[0] == '^') return !strstr(tls + 1, "tcp");
  return strstr(tls, "tcp") || strstr(tls, "all");
}

void sizeTcpSegments(ucp_config_t *config) {
  if (getenv("UCX_TCP_TX_SEG_SIZE") || getenv("UCX_TCP_RX_SEG_SIZE")) return;
  // Only where tcp may be used: UCX warns of a setting no transport took.
  if (!tcpMayRun(getenv("UCX_TLS"))) return;
  const size_t tx = std::min(size_t(paramInt(ParamId::ShmSlotSize)) + kTcpSegmentHeadroom, kMaxTcpSegmentBytes);
  if (tx <= kUcxDefaultTcpSegmentBytes) return;
  // The receive segment: at least the send one (UCX requires it), with room
  // for a second message behind the first in one read.
  const std::string txText = std::to_string(tx), rxText = std::to_string(2 * tx);
  if (ucp_config_modify(config, "TX_SEG_SIZE", txText.c_str()) != UCS_OK ||
      ucp_config_modify(config, "RX_SEG_SIZE", rxText.c_str()) != UCS_OK) {
    CHORUS_INFO(kSubsysNet, "could not size UCX's tcp segments for full slots; UCX's own sizes stay");
    return;
  }
  CHORUS_INFO(kSubsysNet, "UCX tcp segments of %zu bytes sent, %zu received: a full slot in one segment", tx, 2 * tx);
}

// `remoteRanks`: the ranks on other nodes of the first communicator that
// crosses nodes, as UCX's estimate of the endpoints to come (it sizes
// per-endpoint resources and, at scale, picks transports by it);
// `localRanks`: the ranks on this node, which share its NICs.
Status acquireUcp(int localRank, int remoteRanks, int localRanks) {
  std::lock_guard<std::mutex> lock(g_ucpMutex);
  if (g_ucpUsers++ > 0) return Status::Ok;
  keepReassemblyHeap();
  ucp_config_t *config = nullptr;
  ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);  // UCX_TLS, UCX_NET_DEVICES... pass through
  if (st == UCS_OK) chooseNetDevice(config, localRank);
  if (st == UCS_OK) sizeTcpSegments(config);
  if (st == UCS_OK) {
    ucp_params_t params = {};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                        UCP_PARAM_FIELD_ESTIMATED_NUM_EPS | UCP_PARAM_FIELD_ESTIMATED_NUM_PPN;
    params.estimated_num_eps = size_t(std::max(1, remoteRanks));
    params.estimated_num_ppn = size_t(std::max(1, localRanks));
    // RMA: full slots by put (ucx_put.cc); WAKEUP: the progress thread
    // sleeps on the workers' event descriptors (ucx_progress.cc).
    params.features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
    // The progress thread serves idle communicators' workers while a
    // collective runs on another's, so workers of this one context run at
    // once: the context locks what they share.
    params.mt_workers_shared = 1;
    st = ucp_init(&params, config, &g_ucp);
    ucp_config_release(config);
  }
  if (st != UCS_OK) {
    --g_ucpUsers;
    g_ucp = nullptr;
    CHORUS_WARN("UCX initialisation failed: %s", ucs_status_string(st));
    return Status::SystemError;
  }
  return Status::Ok;
}

void releaseUcp() {
  std::lock_guard<std::mutex> lock(g_ucpMutex);
  if (--g_ucpUsers == 0 && g_ucp) {
    ucp_cleanup(g_ucp);
    g_ucp = nullptr;
  }
}

// Arrival handler runs per poll at most: enough to drain what a poll finds
// (a burst of inline messages from several peers), few enough to bound it.
constexpr int kMaxProgressPerPoll = 16;
// How long a failed rank lets its abort messages leave (ucxAbort).
constexpr int64_t kAbortSendNs = 200000000;

UcxState *stateOf(PeerLinks &ctx) { return static_cast<UcxState *>(ctx.netState); }

void onEndpointError(void *arg, ucp_ep_h ep, ucs_status_t status) {
  auto *st = static_cast<UcxState *>(arg);
  for (size_t p = 0; p < st->eps.size(); ++p)
    if (st->eps[p] == ep && st->failed[p] == UCS_OK) st->failed[p] = status;
}

}  // namespace

// ---- links, made on first use --------------------------------------------------

ucp_ep_h ucxEndpoint(UcxState &st, int peer) {
  ucp_ep_h &ep = st.eps[size_t(peer)];
  if (ep || !st.isRemote[size_t(peer)] || st.failed[size_t(peer)] != UCS_OK) return ep;
  ucp_ep_params_t params = {};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t *>(st.ctx->peers[size_t(peer)].netAddr);
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = onEndpointError;
  params.err_handler.arg = &st;
  const ucs_status_t s = ucp_ep_create(st.worker, &params, &ep);
  if (s != UCS_OK) {
    ep = nullptr;
    st.failed[size_t(peer)] = s;  // a wait on it names the failure
    CHORUS_WARN("rank %d: UCX endpoint to rank %d failed: %s", st.ctx->rank, peer, ucs_status_string(s));
    return nullptr;
  }
  return ep;
}

// Both copies of a FIFO take the shape of its link, as in shared memory
// (full where it streams bulk data): the sender's copy stages what the
// receiver's receives.  The peer at the other end makes its own copies
// when it first uses the link, or when our first message reaches it.
Status ucxLinkPeer(UcxState &st, int peer) {
  PeerLinks &ctx = *st.ctx;
  if (st.sendCopy[size_t(peer)]) return Status::Ok;
  size_t outBytes = 0;
  const size_t bytes = ucxLinkBytes(ctx, peer, &outBytes);
  char *memory = static_cast<char *>(aligned_alloc(kFifoAlign, bytes));
  if (!memory) {
    CHORUS_WARN("rank %d: no memory for the UCX FIFO copies of its link to rank %d (%zu bytes)", ctx.rank, peer, bytes);
    return Status::SystemError;
  }
  memset(memory, 0, bytes);
  st.sendCopy[size_t(peer)] = memory;
  st.recvCopy[size_t(peer)] = memory + outBytes;
  ctx.sendTo[size_t(peer)] = makeHostFifoEnd(ctx, memory, fifoShape(ctx, peer, ctx.rank), peer);
  ctx.recvFrom[size_t(peer)] = makeHostFifoEnd(ctx, memory + outBytes, fifoShape(ctx, ctx.rank, peer), peer);
  ctx.sendTo[size_t(peer)].remote = ctx.recvFrom[size_t(peer)].remote = 1;
  st.rkeysOwed.push_back(peer);
  ++st.counters.linkedPeers;
  st.counters.linkedBytes += bytes;
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
  ucxSend(st, e.peer, kAmCredit, NetHeader{st.token, int32_t(st.ctx->rank), 0, e.step, 0, 0, 0}, nullptr, 0);
}

void ucxPostCreditRequest(void *net, const FifoEnd &e, uint64_t need) {
  auto &st = *static_cast<UcxState *>(net);
  ucxSend(st, e.peer, kAmCreditWanted, NetHeader{st.token, int32_t(st.ctx->rank), 0, need, 0, 0, 0}, nullptr, 0);
}

}  // namespace

Status ucxProgress(void *net, int peer, uint64_t seq, char *text, size_t len) {
  auto &st = *static_cast<UcxState *>(net);
  // Bounded: a poll of any counter (shared-memory ones too) comes here, and
  // a worker that always has more (a stream of arrivals) must not keep the
  // caller from looking at what it waits for.
  for (int i = 0; i < kMaxProgressPerPoll && ucp_worker_progress(st.worker) != 0; ++i) {
  }
  // The reorder fault's held messages go at the latest when a wait gives up
  // spinning (peer >= 0) or the collective ends (flush).
  if (__builtin_expect(st.faults != 0, 0) && peer >= 0) ucxReleaseHeld(st);
  for (int p : st.creditReplies) {
    FifoEnd &e = st.ctx->recvFrom[size_t(p)];
    if (e.step <= e.credited) continue;
    e.credited = e.step;
    e.creditWanted = ~uint64_t(0);
    ucxPostCredit(&st, e);
  }
  st.creditReplies.clear();
  if (__builtin_expect(!st.rkeysOwed.empty(), 0)) ucxSendOwedRkeys(st);  // (a poll: no call without cause)
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
  if (st.abortSent || st.abortFrom >= 0) return;
  st.abortSent = true;
  // UCX reads the payload until the sends complete: a copy of our own.
  snprintf(st.abortOut, sizeof st.abortOut, "%s", text ? text : "");
  const size_t bytes = strlen(st.abortOut);
  // Every peer on another node, linked or not: a rank this one never
  // talked to may wait for one that waits for this one.
  for (int p = 0; p < st.ctx->nranks; ++p)
    if (st.isRemote[size_t(p)] && st.failed[size_t(p)] == UCS_OK)
      ucxSend(st, p, kAmAbort, NetHeader{st.token, int32_t(st.ctx->rank), 0, seq, uint64_t(why), 0, 0}, st.abortOut,
              bytes);
  const int64_t until = nowNs() + kAbortSendNs;
  while (!st.pending.empty() && nowNs() < until) ucxProgress(&st, -1, 0, nullptr, 0);
}

Status waitRequest(UcxState &st, ucs_status_ptr_t req, int64_t timeoutNs, const char *what, char *text, size_t len) {
  if (UCS_PTR_IS_ERR(req)) {
    snprintf(text, len, "rank %d: UCX %s failed: %s", st.ctx->rank, what, ucs_status_string(UCS_PTR_STATUS(req)));
    return Status::SystemError;
  }
  if (!req) return Status::Ok;
  const int64_t start = nowNs();
  ucs_status_t s;
  while ((s = ucp_request_check_status(req)) == UCS_INPROGRESS) {
    ucp_worker_progress(st.worker);
    if (timeoutNs > 0 && nowNs() - start > timeoutNs) {
      snprintf(text, len, "rank %d: UCX %s did not complete within CHORUS_TIMEOUT", st.ctx->rank, what);
      ucp_request_cancel(st.worker, req);
      ucp_request_free(req);
      return Status::Timeout;
    }
  }
  ucp_request_free(req);
  if (s != UCS_OK) {
    snprintf(text, len, "rank %d: UCX %s failed: %s", st.ctx->rank, what, ucs_status_string(s));
    return Status::SystemError;
  }
  return Status::Ok;
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
Status flushSends(UcxState &st, int64_t timeoutNs, char *text, size_t len) {
  void *net = &st;
  ucxReleaseHeld(st);
  if (!st.sentSinceFlush) return Status::Ok;
  st.sentSinceFlush = false;
  const int64_t start = nowNs();
  while (!st.pending.empty()) {
    ucxProgress(net, -1, 0, text, len);
    if (timeoutNs > 0 && nowNs() - start > timeoutNs) {
      snprintf(text, len, "rank %d: %zu UCX sends did not complete within CHORUS_TIMEOUT", st.ctx->rank,
               st.pending.size());
      return Status::Timeout;
    }
  }
  ucp_request_param_t param = {};
  ucs_status_ptr_t flush = ucp_worker_flush_nbx(st.worker, &param);
  if (flush && !UCS_PTR_IS_ERR(flush) && st.progressEfd >= 0) {
    ucp_request_free(flush);  // (UCX completes it; freed then)
    st.wakeProgress = true;
    return Status::Ok;
  }
  const Status s = waitRequest(st, flush, timeoutNs, "flush", text, len);
  // A flush fails when some peer's endpoint did (it left, or died): what
  // matters is whether anyone waits for that peer, which its waits decide.
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
  CHORUS_CHECK(acquireUcp(ctx.nodeRank, ctx.nranks - ctx.nodeSize, ctx.nodeSize));
  auto *st = new UcxState;
  st->ctx = &ctx;
  st->ucp = g_ucp;
  ctx.netState = st;
  // This rank's share of the communicator's token (ucxConnect combines them).
  if (getrandom(&self.netNonce, sizeof self.netNonce, 0) != ssize_t(sizeof self.netNonce)) {
    CHORUS_WARN("getrandom failed (%s): no token for the UCX messages", strerror(errno));
    return Status::SystemError;
  }
  if (const char *faults = getenv("CHORUS_TEST_NET_FAULTS")) ucxSetTestFaults(ctx, ucxParseFaults(faults));
  ucp_worker_params_t wp = {};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  // Serialized, not single: a communicator's nonblocking collectives run
  // on Chorus's progress thread and its blocking ones on the caller's, one
  // after the other, never at once.
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  ucs_status_t s = ucp_worker_create(g_ucp, &wp, &st->worker);
  if (s != UCS_OK) {
    CHORUS_WARN("ucp_worker_create failed: %s", ucs_status_string(s));
    return Status::SystemError;
  }
  ucp_am_handler_param_t hp = {};
  hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG |
                  UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  hp.flags = UCP_AM_FLAG_WHOLE_MSG;
  hp.arg = st;
  hp.id = kAmData;
  hp.cb = ucxOnData;
  s = ucp_worker_set_am_recv_handler(st->worker, &hp);
  if (s == UCS_OK) {
    hp.id = kAmCredit;
    hp.cb = ucxOnCredit;
    s = ucp_worker_set_am_recv_handler(st->worker, &hp);
  }
  if (s == UCS_OK) {
    hp.id = kAmCreditWanted;
    hp.cb = ucxOnCreditWanted;
    s = ucp_worker_set_am_recv_handler(st->worker, &hp);
  }
  if (s == UCS_OK) {
    hp.id = kAmPut;
    hp.cb = ucxOnPut;
    s = ucp_worker_set_am_recv_handler(st->worker, &hp);
  }
  if (s == UCS_OK) {
    hp.id = kAmAbort;
    hp.cb = ucxOnAbort;
    s = ucp_worker_set_am_recv_handler(st->worker, &hp);
  }
  if (s == UCS_OK) {
    hp.id = kAmRkey;
    hp.cb = ucxOnRkey;
    s = ucp_worker_set_am_recv_handler(st->worker, &hp);
  }
  if (s != UCS_OK) {
    CHORUS_WARN("ucp_worker_set_am_recv_handler failed: %s", ucs_status_string(s));
    return Status::SystemError;
  }
  ucp_worker_attr_t attr = {};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS | UCP_WORKER_ATTR_FIELD_ADDRESS_FLAGS;
  attr.address_flags = UCP_WORKER_ADDRESS_FLAG_NET_ONLY;
  s = ucp_worker_query(st->worker, &attr);
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
  CHORUS_INFO(kSubsysNet, "UCX worker ready, address of %d bytes", int(self.netAddrLen));
  return Status::Ok;
}

Status ucxConnect(PeerLinks &ctx, const PeerInfo *all) {
  UcxState &st = *stateOf(ctx);
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
  // Every rank draws a nonce; every rank mixes all of them alike, so all
  // hold the same token, which only the ranks of this communicator know.
  uint64_t token = 0x243f6a8885a308d3ull;
  for (int p = 0; p < ctx.nranks; ++p) {
    token ^= all[p].netNonce;
    token *= 0x9e3779b97f4a7c15ull;
    token ^= token >> 29;
  }
  st.token = token;
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
Status ucxPostConnect(PeerLinks &ctx) {
  UcxState &st = *stateOf(ctx);
  ucxSendOwedRkeys(st);
  std::vector<std::pair<int, ucs_status_ptr_t>> flushes;
  for (int p = 0; p < ctx.nranks; ++p) {
    if (!st.eps[size_t(p)]) continue;
    ucp_request_param_t param = {};
    ucs_status_ptr_t req = ucp_ep_flush_nbx(st.eps[size_t(p)], &param);
    if (UCS_PTR_IS_ERR(req)) {
      CHORUS_WARN("UCX connection to rank %d failed: %s", p, ucs_status_string(UCS_PTR_STATUS(req)));
      return Status::SystemError;
    }
    if (req) flushes.push_back({p, req});
  }
  const int64_t timeoutNs = paramInt(ParamId::Timeout) * 1000000000ll;
  const int64_t start = nowNs();
  MPI_Request barrier = MPI_REQUEST_NULL;
  Status result = Status::Ok;
  for (bool everyoneDone = false; !everyoneDone;) {
    ucxProgress(&st, -1, 0, nullptr, 0);  // peers' rkeys and first messages may come in already
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
    if (flushes.empty() && barrier == MPI_REQUEST_NULL) CHORUS_MPICHECK(MPI_Ibarrier(ctx.comm, &barrier));
    if (barrier != MPI_REQUEST_NULL) {
      int done = 0;
      CHORUS_MPICHECK(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE));
      everyoneDone = done != 0;
    }
    if (!everyoneDone && timeoutNs > 0 && nowNs() - start > timeoutNs) {
      CHORUS_WARN("UCX connections to %zu ranks on other nodes did not complete within CHORUS_TIMEOUT%s",
                  flushes.size(), flushes.empty() ? " (waiting for other ranks)" : "");
      for (const auto &f : flushes) {
        ucp_request_cancel(st.worker, f.second);
        ucp_request_free(f.second);
      }
      return Status::Timeout;  // (a pending barrier is left to MPI: the context is being torn down)
    }
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
  for (ucs_status_t f : st->failed)
    if (f != UCS_OK) return false;
  return true;
}

Status ucxFree(PeerLinks &ctx) {
  UcxState *st = stateOf(ctx);
  if (!st) return Status::Ok;
  char text[256];
  ucxProgressDetach(*st);  // from here this thread alone runs the worker
  if (st->worker) {
    // Whatever was posted leaves first, within a bounded time: a dead peer
    // must not hang the teardown.
    ucxFlush(st, 0, 10ll * 1000000000, text, sizeof text);
    for (const UcxState::Pending &p : st->pending) {
      ucp_request_cancel(st->worker, p.request);
      ucp_request_free(p.request);
      if (p.header) st->freeHeaders.push_back(p.header);
    }
    st->pending.clear();
    ucxReleasePuts(*st);
    for (ucp_ep_h &ep : st->eps) {
      if (!ep) continue;
      ucp_request_param_t param = {};
      param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = UCP_EP_CLOSE_FLAG_FORCE;
      waitRequest(*st, ucp_ep_close_nbx(ep, &param), 10ll * 1000000000, "endpoint close", text, sizeof text);
      ep = nullptr;
    }
    ucp_worker_destroy(st->worker);
  }
  CHORUS_INFO(kSubsysNet, "rank %d linked %llu ranks on other nodes (%llu bytes of FIFO copies) and sent %llu full "
              "slots by put", ctx.rank, (unsigned long long)st->counters.linkedPeers,
              (unsigned long long)st->counters.linkedBytes, (unsigned long long)st->counters.puts);
  if (st->counters.forgedDropped)
    CHORUS_WARN("rank %d dropped %llu UCX messages without this communicator's token over its life", ctx.rank,
                (unsigned long long)st->counters.forgedDropped);
  for (char *memory : st->sendCopy) free(memory);  // (each link's one allocation starts at its send copy)
  for (NetHeader *h : st->freeHeaders) delete h;
  delete st;
  ctx.netState = nullptr;
  releaseUcp();
  return Status::Ok;
}

// NetOps::link.  An error is the collective's: the link's memory could not
// be had.
Status ucxLink(void *net, int peer, char *text, size_t len) {
  auto &st = *static_cast<UcxState *>(net);
  const Status s = ucxLinkPeer(st, peer);
  if (s != Status::Ok)
    snprintf(text, len, "rank %d: no memory for the FIFO copies of its UCX link to rank %d", st.ctx->rank, peer);
  return s;
}

void ucxEnter(void *net) { static_cast<UcxState *>(net)->busy.lock(); }
void ucxLeave(void *net) {
  auto &st = *static_cast<UcxState *>(net);
  st.idleSince.store(nowNs(), std::memory_order_relaxed);
  const bool wake = st.wakeProgress;
  st.wakeProgress = false;
  st.busy.unlock();
  if (wake) ucxProgressWake();
}

const NetOps kUcxNetOps = {ucxPostMessage, ucxPostCredit, ucxPostCreditRequest, ucxProgress, ucxFlush,
                           ucxAbort,       ucxLink,       ucxEnter,             ucxLeave};

}  // namespace

const TransportOps kUcxTransport = {"ucx", ucxCanConnect, ucxSetup, ucxConnect, ucxPostConnect, ucxBeginFree, ucxFree};
const NetOps &ucxNetOps() { return kUcxNetOps; }

}  // namespace chorus
