// ucx transport: the process's UCX, shared by every communicator context
// that crosses nodes: one UCP context, one worker, one lock.
//
// One worker per process, not per communicator: every worker costs its
// own network resources (a listening socket per tcp interface, receive
// queues, an event descriptor) and its own progress, and an application
// that duplicates or splits its communicators would multiply them.  So the
// communicators' messages all arrive on the one worker, through handlers
// registered once, and each handler finds its communicator by the token
// every message carries (ucx_wire.h): the registry below maps tokens to
// communicator states.  A message whose token is not registered comes
// from outside the job and is dropped and counted for the process; one
// whose token belonged to a communicator freed a moment ago (a peer's last
// credits, sent before it learnt we were done) is dropped silently.  No
// message of ours reaches a peer before it registered its token: each rank
// registers in ucxConnect, before the bootstrap's agreement, and sends
// nothing to a peer before postConnect's barrier (ucx.cc).
//
// The lock (ucxWorkerLock) is recursive and held around every UCX call and
// every access to a communicator's state that a handler also makes: the
// worker is UCS_THREAD_MODE_SERIALIZED and we serialize it.  Threads
// running collectives on different communicators (MPI_THREAD_MULTIPLE)
// then progress the one worker in turn, and a handler may run on a thread
// other than the one running its communicator's collective, whose
// primitives touch that communicator's FIFO ends without the lock.  So a
// handler acts on a state only on the thread that owns it (UcxState::owner:
// the one inside its collective, or its set-up or teardown), or on any
// thread while none owns it; otherwise it leaves a copy of the message on
// the state's deferred list, which its owner takes in at its next progress.
#include <time.h>
#include <ucp/api/ucp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/log.h"
#include "core/params.h"
#include "topo/topology.h"
#include "transport/ucx/ucx_state.h"

namespace chorus {

namespace {

// One endpoint per peer process, whatever communicators link it.  UCX
// pairs the endpoints two workers create to each other by their order of
// creation: were each communicator to make its own, this process's first
// endpoint to a peer (communicator X's) could be paired with the peer's
// first one to us (communicator Y's), and closing X's would break Y's
// connection on the peer.  So the endpoint to a peer is the process's,
// made by the first communicator that needs it, and closed only with the
// worker, when the last communicator goes: a peer that shares no
// communicator with us any more has freed its side too (communicators are
// freed collectively, behind the release barrier).
struct SharedEndpoint {
  std::string address;  // the peer's worker address, as the bootstrap carried it
  ucp_ep_h ep = nullptr;
  ucs_status_t failed = UCS_OK;
};

struct ProcessUcx {
  ucp_context_h ucp = nullptr;
  ucp_worker_h worker = nullptr;
  std::vector<SharedEndpoint *> endpoints;
  int users = 0;  // communicator contexts set up on it (ucxSetup) and not yet freed
  std::vector<UcxState *> states;  // registered: their tokens are accepted
  // Tokens of the communicators freed last: a message carrying one is late,
  // not forged.  A few suffice: peers free a communicator within a barrier
  // of each other (the release barrier, comm/context.cc).
  static constexpr size_t kRetired = 16;
  uint64_t retired[kRetired] = {};
  size_t retiredNext = 0;
  uint64_t unknownDropped = 0;  // messages whose token no communicator here holds
  bool unknownWarned = false;
};

ProcessUcx g_ucx;

// Arrival handler runs per poll at most: enough to drain what a poll finds
// (a burst of inline messages from several peers), few enough to bound it.
constexpr int kMaxProgressPerPoll = 16;

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
ucs_status_t createContext(int localRank, int remoteRanks, int localRanks) {
  keepReassemblyHeap();
  ucp_config_t *config = nullptr;
  ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);  // UCX_TLS, UCX_NET_DEVICES... pass through
  if (st != UCS_OK) return st;
  chooseNetDevice(config, localRank);
  sizeTcpSegments(config);
  ucp_params_t params = {};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS | UCP_PARAM_FIELD_ESTIMATED_NUM_PPN;
  params.estimated_num_eps = size_t(std::max(1, remoteRanks));
  params.estimated_num_ppn = size_t(std::max(1, localRanks));
  // RMA: full slots by put (ucx_put.cc); WAKEUP: the progress thread
  // sleeps on the worker's event descriptor (ucx_progress.cc).  One worker,
  // so the context needs no locks between workers (mt_workers_shared).
  params.features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
  st = ucp_init(&params, config, &g_ucx.ucp);
  ucp_config_release(config);
  return st;
}

// Where a message goes: the registered state holding its token (null:
// none), and whether the token is one of a communicator freed lately.
UcxState *stateFor(uint64_t token, bool *retired) {
  for (UcxState *st : g_ucx.states)
    if (st->token == token) return st;
  const uint64_t *end = g_ucx.retired + std::min(g_ucx.retiredNext, ProcessUcx::kRetired);  // (only those filled)
  *retired = std::find(static_cast<const uint64_t *>(g_ucx.retired), end, token) != end;
  return nullptr;
}

template <unsigned Id>
ucs_status_t onMessage(void *, const void *header, size_t headerLength, void *data, size_t length,
                       const ucp_am_recv_param_t *param) {
  NetHeader h;
  bool retired = false;
  UcxState *st = nullptr;
  if (headerLength == sizeof h) {
    memcpy(&h, header, sizeof h);
    st = stateFor(h.token, &retired);
  }
  if (!st) {
    if (retired) return UCS_OK;
    ++g_ucx.unknownDropped;
    if (!g_ucx.unknownWarned) {
      g_ucx.unknownWarned = true;
      CHORUS_WARN("dropped a UCX message that carries no token of this process's communicators (%zu-byte header): "
                  "a process outside the job reached this process's UCX port; such messages are dropped and counted",
                  headerLength);
    }
    return UCS_OK;
  }
  // With UCP_AM_FLAG_WHOLE_MSG a rendezvous message's `data` is UCX's
  // descriptor, not the bytes: ours are all eager (ucx_arrival.cc says so).
  const bool rendezvous = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
  if (ucxMayTouch(*st)) {
    ucxArrive(*st, Id, h, data, length, rendezvous);
    return UCS_OK;
  }
  DeferredArrival d{Id, h, {}, length, rendezvous};
  if (!rendezvous && length) d.data.assign(static_cast<const char *>(data), static_cast<const char *>(data) + length);
  st->deferred.push_back(std::move(d));
  return UCS_OK;
}

ucs_status_t setHandlers(ucp_worker_h worker) {
  struct Handler {
    unsigned id;
    ucp_am_recv_callback_t cb;
  } handlers[] = {
      {kAmData, onMessage<kAmData>},
      {kAmCredit, onMessage<kAmCredit>},
      {kAmCreditWanted, onMessage<kAmCreditWanted>},
      {kAmPut, onMessage<kAmPut>},
      {kAmAbort, onMessage<kAmAbort>},
      {kAmRkey, onMessage<kAmRkey>},
  };
  for (const Handler &one : handlers) {
    ucp_am_handler_param_t hp = {};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG |
                    UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    hp.id = one.id;
    hp.cb = one.cb;
    hp.arg = &g_ucx;  // (the states are found by token)
    const ucs_status_t s = ucp_worker_set_am_recv_handler(worker, &hp);
    if (s != UCS_OK) return s;
  }
  return UCS_OK;
}

// A peer's endpoint failed (it died, or became unreachable): every
// communicator that reaches it through this endpoint names it in its waits.
void onEndpointError(void *arg, ucp_ep_h ep, ucs_status_t status) {
  auto *shared = static_cast<SharedEndpoint *>(arg);
  if (shared->failed == UCS_OK) shared->failed = status;
  for (UcxState *st : g_ucx.states)
    for (size_t p = 0; p < st->eps.size(); ++p)
      if (st->eps[p] == ep && st->failed[p] == UCS_OK) st->failed[p] = status;
}

// Closes every endpoint, each within a bounded time: a dead peer must not
// hang the last communicator's teardown.
void closeEndpoints() {
  constexpr int64_t kCloseNs = int64_t(10) * 1000000000;
  for (SharedEndpoint *shared : g_ucx.endpoints) {
    if (shared->ep) {
      ucp_request_param_t param = {};
      param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = UCP_EP_CLOSE_FLAG_FORCE;
      bool timedOut;
      ucxWaitRequest(ucp_ep_close_nbx(shared->ep, &param), kCloseNs, &timedOut);  // (its outcome changes nothing now)
    }
    delete shared;
  }
  g_ucx.endpoints.clear();
}

// An endpoint whose creation failed at once (a peer's process already
// gone: over tcp, connect() refused) is remembered with no handle.  UCX 1.13
// keeps such an endpoint in the worker with its creation reference dropped,
// and ucp_worker_destroy then aborts the process on an assertion
// (ucp_ep_delete: refcounts.create == 1), seen when a rank sent its abort
// message to a peer that had already freed its communicator and left.  The
// worker and its context are then left to the process's exit.
void destroyWorker() {
  const bool createFailed = std::any_of(g_ucx.endpoints.begin(), g_ucx.endpoints.end(),
                                        [](const SharedEndpoint *e) { return !e->ep; });
  if (g_ucx.worker) closeEndpoints();
  if (createFailed) {
    CHORUS_INFO(kSubsysNet, "UCX worker left to the process's exit: an endpoint's creation failed (a peer gone), "
                            "after which UCX's worker destruction would abort");
  } else {
    if (g_ucx.worker) ucp_worker_destroy(g_ucx.worker);
    if (g_ucx.ucp) ucp_cleanup(g_ucx.ucp);
  }
  g_ucx.worker = nullptr;
  g_ucx.ucp = nullptr;
}

}  // namespace

std::recursive_mutex &ucxWorkerLock() {
  // Never destroyed: the progress thread may outlive static destruction
  // in a process that exits with communicators never freed.
  static std::recursive_mutex *lock = new std::recursive_mutex;
  return *lock;
}

Status ucxAcquireWorker(UcxState &st, int localRank, int remoteRanks, int localRanks) {
  std::lock_guard<std::recursive_mutex> lock(ucxWorkerLock());
  if (g_ucx.users == 0) {
    ucs_status_t s = createContext(localRank, remoteRanks, localRanks);
    const char *what = "UCX initialisation";
    if (s == UCS_OK) {
      ucp_worker_params_t wp = {};
      wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
      // Serialized, not multi: every call on it is made under ucxWorkerLock.
      wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
      what = "ucp_worker_create";
      s = ucp_worker_create(g_ucx.ucp, &wp, &g_ucx.worker);
      if (s != UCS_OK) g_ucx.worker = nullptr;
    }
    if (s == UCS_OK) {
      what = "ucp_worker_set_am_recv_handler";
      s = setHandlers(g_ucx.worker);
    }
    if (s != UCS_OK) {
      CHORUS_WARN("%s failed: %s", what, ucs_status_string(s));
      destroyWorker();
      return Status::SystemError;
    }
  }
  ++g_ucx.users;
  st.ucp = g_ucx.ucp;
  st.worker = g_ucx.worker;
  return Status::Ok;
}

void ucxReleaseWorker(UcxState &st) {
  std::lock_guard<std::recursive_mutex> lock(ucxWorkerLock());
  if (!st.worker) return;
  st.worker = nullptr;
  st.ucp = nullptr;
  if (--g_ucx.users == 0) destroyWorker();
}

ucp_worker_h ucxSharedWorker() { return g_ucx.worker; }

ucs_status_t ucxWaitRequest(ucs_status_ptr_t req, int64_t timeoutNs, bool *timedOut) {
  *timedOut = false;
  if (UCS_PTR_IS_ERR(req)) return UCS_PTR_STATUS(req);
  if (!req) return UCS_OK;
  auto nowNs = [] {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  };
  const int64_t start = nowNs();
  for (;;) {
    std::lock_guard<std::recursive_mutex> lock(ucxWorkerLock());
    const ucs_status_t s = ucp_request_check_status(req);
    if (s != UCS_INPROGRESS) {
      ucp_request_free(req);
      return s;
    }
    ucxRunWorker();
    if (timeoutNs > 0 && nowNs() - start > timeoutNs) {
      ucp_request_cancel(g_ucx.worker, req);
      ucp_request_free(req);
      *timedOut = true;
      return UCS_ERR_TIMED_OUT;
    }
  }
}

ucp_ep_h ucxPeerEndpoint(const void *address, size_t length, ucs_status_t *status) {
  std::lock_guard<std::recursive_mutex> lock(ucxWorkerLock());
  const std::string key(static_cast<const char *>(address), length);
  for (SharedEndpoint *shared : g_ucx.endpoints)
    if (shared->address == key) {
      *status = shared->failed;
      return shared->failed == UCS_OK ? shared->ep : nullptr;
    }
  auto *shared = new SharedEndpoint;
  shared->address = key;
  ucp_ep_params_t params = {};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t *>(shared->address.data());
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = onEndpointError;
  params.err_handler.arg = shared;
  shared->failed = ucp_ep_create(g_ucx.worker, &params, &shared->ep);
  if (shared->failed != UCS_OK) shared->ep = nullptr;
  g_ucx.endpoints.push_back(shared);  // (a failure is remembered: the next communicator is told at once)
  *status = shared->failed;
  return shared->ep;
}

int ucxWorkerUsers() {
  std::lock_guard<std::recursive_mutex> lock(ucxWorkerLock());
  return g_ucx.users;
}

Status ucxRegister(UcxState &st) {
  std::lock_guard<std::recursive_mutex> lock(ucxWorkerLock());
  bool retired = false;
  if (stateFor(st.token, &retired)) {  // (two draws of 64 random bits alike)
    CHORUS_WARN("rank %d: another communicator of this process holds the same UCX token", st.ctx->rank);
    return Status::SystemError;
  }
  st.droppedAtStart = g_ucx.unknownDropped;
  st.registered = true;
  g_ucx.states.push_back(&st);
  return Status::Ok;
}

void ucxUnregister(UcxState &st) {
  std::lock_guard<std::recursive_mutex> lock(ucxWorkerLock());
  auto at = std::find(g_ucx.states.begin(), g_ucx.states.end(), &st);
  if (at == g_ucx.states.end()) return;
  g_ucx.states.erase(at);
  st.registered = false;
  g_ucx.retired[g_ucx.retiredNext++ % ProcessUcx::kRetired] = st.token;
  st.deferred.clear();
}

uint64_t ucxUnknownDropped() {
  std::lock_guard<std::recursive_mutex> lock(ucxWorkerLock());
  return g_ucx.unknownDropped;
}

bool ucxMayTouch(const UcxState &st) {
  return st.owner == std::thread::id() || st.owner == std::this_thread::get_id();
}

void ucxRunWorker() {
  std::lock_guard<std::recursive_mutex> lock(ucxWorkerLock());
  // Bounded: a poll of any counter (shared-memory ones too) comes here, and
  // a worker that always has more (a stream of arrivals) must not keep the
  // caller from looking at what it waits for.
  for (int i = 0; i < kMaxProgressPerPoll && ucp_worker_progress(g_ucx.worker) != 0; ++i) {
  }
  // The handlers may have run for any communicator: each that this thread
  // may touch gets its replies sent now, not at its own next call.
  for (UcxState *st : g_ucx.states)
    if (ucxMayTouch(*st)) ucxAfterProgress(*st);
}

void ucxServeWorker() {
  std::lock_guard<std::recursive_mutex> lock(ucxWorkerLock());
  ucxRunWorker();
  for (UcxState *st : g_ucx.states) ucxReapSends(*st);
}

}  // namespace chorus
