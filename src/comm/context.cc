#include "comm/context.h"
#include "comm/footprint.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstdio>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "comm/settings_agree.h"
#include "core/abandoned_barriers.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "cuda/device_channel.h"
#include "cuda/device_links.h"
#include "topo/topo.h"
#include "topo/topology.h"
#include "transport/shm/cma.h"
#ifdef CHORUS_HAVE_UCX
#include "transport/ucx/ucx.h"
#endif

#ifdef CHORUS_HAVE_CUDA
#include "cuda/cuda_executor.h"
#include "cuda/device_pool.h"
#endif

namespace chorus {

namespace {

int g_contextKeyval = MPI_KEYVAL_INVALID;
int g_finalizeKeyval = MPI_KEYVAL_INVALID;
std::mutex g_mutex;
std::set<Context *> g_live;  // so that MPI_Finalize can release what users did not free

// Above every communicator number this process has taken part in agreeing
// (agreeCommId).
std::atomic<int> g_nextCommId{0};
// MPI_THREAD_MULTIPLE, from MPI_Query_thread once (libraryInit).
bool g_threadMultiple = false;

// CHORUS_DEBUG=INFO's end of a communicator: one line in STATS however many
// calls it ran (the per-call lines are TRACE).  The counts come from the
// CHORUS_STATS counters, kept for it (bootstrap).
void logSummary(const Context &ctx) {
  if (!logEnabled(LogLevel::Info, kSubsysStats)) return;
  std::string calls;
  uint64_t bytes = 0, failed = 0;
  int64_t ns = 0;
  for (int c = 0; ctx.stats && c < int(Coll::Count); ++c) {
    const CollStats &st = ctx.stats->coll[c];
    if (st.calls == 0) continue;
    calls += std::string(calls.empty() ? " (" : ", ") + collName(Coll(c)) + " " + std::to_string(st.calls);
    bytes += st.bytes;
    ns += st.ns;
    failed += st.failed;
  }
  if (!calls.empty()) calls += ")";
  CHORUS_INFO(kSubsysStats, "comm %d released, rank %d of %d: %llu collectives%s, %llu bytes, %.6f s, %llu failed",
              ctx.trace.commId, ctx.rank, ctx.nranks, (unsigned long long)ctx.collectives, calls.c_str(),
              (unsigned long long)bytes, ns / 1e9, (unsigned long long)failed);
}

// The release's barrier (PeerLinks::closing): needed where a peer may still
// use something of this rank's after this rank is done with the
// communicator: its device FIFOs, written by the peers' kernels
// (cuda_executor.cc, cudaBeginFree), or its UCX connections, which still
// carry what the peers read last (ucx.cc, ucxBeginFree).  Each rank first
// does what only it can, then enters; whatever a peer may use goes only
// once the barrier completes, or after closingTimeoutNs.  A communicator on
// one node without device buffers needs none.  Started for every
// communicator before any is waited for at MPI_Finalize (finalizeHook),
// which frees them in an order that differs between ranks.
//
// 10 s, or CHORUS_TIMEOUT where shorter: a rank later than a collective may
// be is as good as gone.
int64_t closingTimeoutNs() {
  const int64_t tenSeconds = int64_t(10) * 1000000000;
  const int64_t timeoutNs = paramInt(ParamId::Timeout) * int64_t(1000000000);
  return timeoutNs > 0 ? std::min(tenSeconds, timeoutNs) : tenSeconds;
}

void beginRelease(Context &ctx) {
  if (ctx.closingStarted) return;
  ctx.closingStarted = true;
  bool needed = ctx.netTransport != nullptr;
#ifdef CHORUS_HAVE_CUDA
  cudaBeginFree(ctx.cuda);
  needed = needed || ctx.cuda.state != nullptr;
#endif
  // No barrier if a peer's connection failed: it would never complete.
  if (ctx.netTransport && ctx.netTransport->beginFree && !ctx.netTransport->beginFree(ctx)) return;
  // PMPI_: a release runs outside any MPIX_* call, where libchorus_mpi.so
  // would take MPI_Ibarrier for the user's own.
  if (needed && ctx.established && ctx.barrierComm != MPI_COMM_NULL &&
      PMPI_Ibarrier(ctx.barrierComm, &ctx.closing) != MPI_SUCCESS)
    ctx.closing = MPI_REQUEST_NULL;
}

// Whether every rank passed its release.  Progresses the network meanwhile
// (as a collective would, holding the worker): peers still receiving get
// what they wait for.
bool awaitRelease(Context &ctx) {
  if (ctx.closing == MPI_REQUEST_NULL) return false;
  const NetOps *net = ctx.channel.netOps;
  if (net) net->enter(ctx.channel.net);
  const auto start = std::chrono::steady_clock::now();
  const int64_t timeoutNs = closingTimeoutNs();
  int done = 0;
  bool failed = false;
  for (;;) {
    if (net) net->progress(ctx.channel.net, -1, 0, nullptr, 0);
    failed = PMPI_Test(&ctx.closing, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS;
    if (failed || done) break;
    if (std::chrono::steady_clock::now() - start > std::chrono::nanoseconds(timeoutNs)) {
      CHORUS_WARN("rank %d: the other ranks did not release the communicator within %.0f s; releasing this rank's "
                  "part without them", ctx.rank, timeoutNs / 1e9);
      break;
    }
    sched_yield();
  }
  if (net) net->leave(ctx.channel.net);
  if (!done && !failed) keepAbandonedBarrier(ctx.closing, ctx.barrierComm);  // MPI completes it when the others come
  ctx.closing = MPI_REQUEST_NULL;
  return done != 0;
}

void destroy(Context *ctx) {
  // MPI lets a communicator be freed with collectives outstanding: they
  // finish first (each within CHORUS_TIMEOUT), then the worker is joined.
  delete ctx->progress;
  ctx->progress = nullptr;
  beginRelease(*ctx);
  const bool peersDone = awaitRelease(*ctx);
#ifdef CHORUS_HAVE_CUDA
  cudaDetach(ctx->cuda, peersDone);
#else
  (void)peersDone;
#endif
  // A peer still waiting in a collective on it names this rank as gone, not
  // late (fault.cc); one that failed keeps saying so, which names the cause
  // better.  Only this rank writes its status.
  if (__atomic_load_n(&ctx->status->state, __ATOMIC_ACQUIRE) != uint64_t(TraceState::Failed))
    __atomic_store_n(&ctx->status->state, uint64_t(TraceState::Released), __ATOMIC_RELEASE);
  traceDetach(ctx->trace);  // first: a SIGUSR1 from now on skips this context
  if (ctx->stats && paramInt(ParamId::Stats) > 0) statsPrint(*ctx->stats, ctx->trace.commId, ctx->rank, ctx->nranks);
  if (ctx->checkComm != MPI_COMM_NULL) MPI_Comm_free(&ctx->checkComm);
  releaseBarrierComm(&ctx->barrierComm);
  if (ctx->netTransport) ctx->netTransport->free(*ctx);
  if (ctx->transport) ctx->transport->free(*ctx);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_live.erase(ctx);
  }
  g_contextEpoch.fetch_add(1, std::memory_order_acq_rel);
  logSummary(*ctx);
  delete ctx;
}

int deleteContextAttr(MPI_Comm, int, void *value, void *) {
  destroy(static_cast<Context *>(value));
  return MPI_SUCCESS;
}

// Runs first thing in MPI_Finalize (attributes of MPI_COMM_SELF are deleted
// before anything else), while the users' communicators are still valid.
int finalizeHook(MPI_Comm, int, void *, void *) {
  std::vector<Context *> live;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    live.assign(g_live.begin(), g_live.end());
  }
  // Every context's release starts before any is waited for: the set is in
  // address order, which differs from rank to rank.
  for (Context *ctx : live) beginRelease(*ctx);
  for (Context *ctx : live) MPI_Comm_delete_attr(ctx->comm, g_contextKeyval);
#ifdef CHORUS_HAVE_CUDA
  devicePoolRelease();  // what freed communicators left in the pool: no Chorus kernel runs now
#endif
  MPI_Comm_free_keyval(&g_contextKeyval);
  reapAbandonedBarriers();  // any still unfinished stay: their ranks never came
  // Our own keyval too (MPI frees it once this, its last attribute, is
  // gone): valgrind counts a keyval never freed as a leak of ours.
  MPI_Comm_free_keyval(&g_finalizeKeyval);
  return MPI_SUCCESS;
}

uint64_t fnv1a(const char *text, uint64_t h = 1469598103934665603ull) {
  for (const char *p = text; *p; ++p) h = (h ^ uint8_t(*p)) * 1099511628211ull;
  return h;
}

// Bit 31 of the low half: the NIC does RDMA (PlanShape::netLatencyUs);
// bit 30: a GPU node, which says only its bandwidth over all its NICs.
constexpr uint64_t kPackedRdma = uint64_t(1) << 31;
constexpr uint64_t kPackedGpu = uint64_t(1) << 30;
constexpr uint64_t kPackedLinkMask = kPackedGpu - 1;

// This machine's network as the bootstrap carries it: a node's bandwidth
// over all its NICs in the high 32 bits, one connection's in the low 30, MB/s
// (bytes per microsecond), and kPackedRdma; 0 when unknown.  A connection through a NIC
// without RDMA is UCX's tcp, capped at what tcp moved here.  A GPU node
// whose NICs do RDMA says only their sum and kPackedGpu (else 0), and
// packedGpuLinks the rest (its fastest NIC): the kernels' one-shot and
// allreduce read them (PlanShape::kernelsNodeNetBytesPerUs and the rest;
// coll/tuner_kernels.cc), and the host's model as a CPU node's, for the
// calls staged through host memory (chorus_sim, every collective staged on
// 2-16 nodes of the GPU presets: with the measured constants the host plan
// was more than 10% from the best in 30 rows of 441, with the NICs in 14).
// (Before chorus_sim timed staged calls on the node's CPU cores, it timed
// them at the GPUs' link speeds, and found the NICs' figures 2-4.7x off.)
uint64_t packedNetwork() {
  const MachineNetwork network = topoMachineNetwork();
  const auto mbs = [](double v, double most) { return uint64_t(std::min(std::max(v, 0.0), most)); };
  if (network.gpus) {
    const uint64_t allMBs = mbs(network.allGBs * 1000.0, double(UINT32_MAX));
    return network.fastestRdma && allMBs > 0 ? allMBs << 32 | kPackedGpu : 0;
  }
  double link = network.fastestGBs * 1000.0;
  if (!network.fastestRdma) link = std::min(link, kTcpConnectionBytesPerUs);
  const uint64_t linkMBs = mbs(link, double(kPackedLinkMask));
  return mbs(network.allGBs * 1000.0, double(UINT32_MAX)) << 32 | linkMBs |
         (network.fastestRdma && linkMBs > 0 ? kPackedRdma : 0);
}

// A GPU node's links for the kernels' model, where its NICs do RDMA (else
// 0): its fastest NIC's bandwidth in the high 32 bits and the slowest
// NVLink between two of its GPUs in the low 32 (0: a pair without one), MB/s.
uint64_t packedGpuLinks() {
  const MachineNetwork network = topoMachineNetwork();
  if (!network.gpus || !network.fastestRdma) return 0;
  const auto mbs = [](double gbs) { return uint64_t(std::min(std::max(gbs * 1000.0, 0.0), double(UINT32_MAX))); };
  return mbs(network.fastestGBs) << 32 | mbs(network.gpuPeerGBs);
}

// The machine this process runs on: the host name and the kernel's boot id
// (two containers or VMs with one host name are then still told apart, and
// a reboot never matches a stale identity).
uint64_t machineIdentity() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  uint64_t h = fnv1a(host);
  if (FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r")) {
    char boot[64] = {0};
    if (fgets(boot, sizeof boot, f)) h = fnv1a(boot, h);
    fclose(f);
  }
  return h;
}

// This process's node: CHORUS_HOSTID when set, else its machine.
uint64_t hostIdentity() {
  const char *forced = paramString(ParamId::HostId);
  if (forced && *forced) return fnv1a(forced, fnv1a("CHORUS_HOSTID="));
  return machineIdentity();
}

bool contextFullLink(const PeerLinks &links, int receiver, int sender);  // (below, with create)

// Node indices in order of each node's first rank; this rank's place in its
// node.  `places` (topoRankKey) orders the ranks of a node along the rings.
void assignNodes(Context &ctx, const std::vector<uint64_t> &hosts, const std::vector<int64_t> &places) {
  ctx.nodeOf.assign(size_t(ctx.nranks), -1);
  ctx.nnodes = 0;
  for (int r = 0; r < ctx.nranks; ++r) {
    if (ctx.nodeOf[size_t(r)] >= 0) continue;
    for (int q = r; q < ctx.nranks; ++q)
      if (hosts[size_t(q)] == hosts[size_t(r)]) ctx.nodeOf[size_t(q)] = ctx.nnodes;
    ++ctx.nnodes;
  }
  // The rings visit the nodes one after another, so each ring crosses every
  // node boundary once; inside a node they follow the hardware (NUMA domain,
  // then core: topoRankKey), ties in rank order.
  if (ctx.nnodes > 1) {
    ctx.ringOrder.clear();
    for (int node = 0; node < ctx.nnodes; ++node) {
      const size_t begin = ctx.ringOrder.size();
      for (int r = 0; r < ctx.nranks; ++r)
        if (ctx.nodeOf[size_t(r)] == node) ctx.ringOrder.push_back(r);
      std::stable_sort(ctx.ringOrder.begin() + long(begin), ctx.ringOrder.end(),
                       [&](int a, int b) { return places[size_t(a)] < places[size_t(b)]; });
    }
    ctx.ringWhere.assign(size_t(ctx.nranks), 0);
    for (int p = 0; p < ctx.nranks; ++p) ctx.ringWhere[size_t(ctx.ringOrder[size_t(p)])] = p;
    ctx.nodeStart.assign(size_t(ctx.nnodes) + 1, ctx.nranks);
    for (int p = ctx.nranks - 1; p >= 0; --p) ctx.nodeStart[size_t(ctx.nodeOf[size_t(ctx.ringOrder[size_t(p)])])] = p;
    ctx.nodeLayout = {ctx.nranks, ctx.nnodes, ctx.ringOrder.data(), ctx.ringWhere.data(), ctx.nodeStart.data(),
                      ctx.nodeOf.data()};
  }
  ctx.nodeRank = ctx.nodeSize = 0;
  for (int r = 0; r < ctx.nranks; ++r) {
    if (ctx.nodeOf[size_t(r)] != ctx.nodeOf[size_t(ctx.rank)]) continue;
    if (r < ctx.rank) ++ctx.nodeRank;
    ++ctx.nodeSize;
  }
  // The hierarchical allreduce's groups, when every node has nodeSize ranks.
  std::vector<std::vector<int>> nodes(size_t(ctx.nnodes));
  for (int r = 0; r < ctx.nranks; ++r) nodes[size_t(ctx.nodeOf[size_t(r)])].push_back(r);
  const bool equal = ctx.nnodes > 1 && equalNodes(ctx.nodeLayout);  // (the layout is set across nodes)
  ctx.localRanks.clear();
  ctx.crossRanks.clear();
  ctx.planShape.nranks = ctx.nranks;
  ctx.planShape.nnodes = ctx.nnodes;
  ctx.planShape.maxNodeRanks = 0;
  for (const std::vector<int> &n : nodes)
    ctx.planShape.maxNodeRanks = std::max(ctx.planShape.maxNodeRanks, int(n.size()));
  ctx.planShape.equalNodes = equal;
  ctx.planShape.nodeTreeDepth = nodeTreeDepthOf(ctx.nnodes);
  ctx.planShape.doublingNetRounds = doublingNetRoundsOf(ctx.nodeOf.data(), ctx.nranks);
  // (Agreed setting, the layout every rank's: every rank plans alike.)
  ctx.deviceWiring = ctx.nnodes < 2 ? cudaOneNodeWiring(ctx.nranks)
                                    : cudaDeviceWiring(ctx.nodeLayout, paramString(ParamId::NetDeviceLinks));
  ctx.planShape.kernelsEveryPeer = ctx.deviceWiring.everyPeer;
  ctx.planShape.kernelsRootedTree = rootedNodeTreeCostOf(ctx.nnodes, !ctx.planShape.kernelsEveryPeer);
  ctx.planShape.hostRootedTree = rootedNodeTreeCostOf(ctx.nnodes, false);
  ctx.localPrev.clear();
  ctx.crossPrev.clear();
  if (equal) {
    ctx.localRanks = nodes[size_t(ctx.nodeOf[size_t(ctx.rank)])];
    for (const std::vector<int> &n : nodes) ctx.crossRanks.push_back(n[size_t(ctx.nodeRank)]);
    // Every rank's neighbours in both groups' rings (in group order, as
    // allreduceHierarchical runs them), so that any rank can size any FIFO.
    ctx.localPrev.assign(size_t(ctx.nranks), -1);
    ctx.crossPrev.assign(size_t(ctx.nranks), -1);
    const int m = ctx.nodeSize;
    for (int node = 0; node < ctx.nnodes; ++node) {
      for (int i = 0; i < m; ++i) {
        const int r = nodes[size_t(node)][size_t(i)];
        ctx.localPrev[size_t(r)] = nodes[size_t(node)][size_t(mod(i - 1, m))];
        ctx.crossPrev[size_t(r)] = nodes[size_t(mod(node - 1, ctx.nnodes))][size_t(i)];
      }
    }
  }
  ctx.bulkLinks.nranks = ctx.nranks;
  ctx.bulkLinks.ringOrder = ctx.ringOrder.empty() ? nullptr : ctx.ringOrder.data();
  ctx.bulkLinks.ringWhere = ctx.ringWhere.empty() ? nullptr : ctx.ringWhere.data();
  ctx.bulkLinks.localPrev = ctx.localPrev.empty() ? nullptr : ctx.localPrev.data();
  ctx.bulkLinks.crossPrev = ctx.crossPrev.empty() ? nullptr : ctx.crossPrev.data();
  ctx.bulkLinks.nodes = ctx.nnodes > 1 ? &ctx.nodeLayout : nullptr;
}


}  // namespace

void wireCommunicator(Context &ctx, const std::vector<uint64_t> &hosts, const std::vector<int64_t> &places) {
  assignNodes(ctx, hosts, places);
  ctx.fullLink = contextFullLink;
  ctx.fullFifo.slotBytes = size_t(paramInt(ParamId::ShmSlotSize));
  ctx.fullFifo.slotBytes &= ~size_t(kFifoAlign - 1);  // keep slots aligned for wide loads
  ctx.fullFifo.nslots = int(paramInt(ParamId::ShmSlots));
  ctx.smallFifo.slotBytes = std::min(ctx.fullFifo.slotBytes, kSmallFifoSlotBytes);
  ctx.smallFifo.nslots = std::min(ctx.fullFifo.nslots, kSmallFifoSlots);
  ctx.everyFifoFull = everyFifoFullFits(ctx.nranks, ctx.fullFifo);
  ctx.transport = &kShmTransport;
  ctx.netTransport = nullptr;
#ifdef CHORUS_HAVE_UCX
  if (ctx.nnodes > 1) ctx.netTransport = &kUcxTransport;
#endif
}

namespace {
// The slice of the all-peer algorithms (direct, pairwise, dissemination):
// the smallest slot of any FIFO of the communicator, so that every rank
// cuts their messages alike whatever links it has.
size_t allPeerSliceBytes(const Context &ctx) {
  if (ctx.everyFifoFull) return ctx.fullFifo.slotBytes;  // (else n^2 pairs all found full)
  for (int r = 0; r < ctx.nranks; ++r)
    for (int s = 0; s < ctx.nranks; ++s)
      if (s != r && !fullFifoLink(ctx, r, s)) return ctx.smallFifo.slotBytes;
  return ctx.fullFifo.slotBytes;
}

// Every rank learns whether `s` failed anywhere, so that nobody waits for a
// peer that already gave up.
Status agree(Context &ctx, Status s) {
  int ok = s == Status::Ok, allOk = 0;
  CHORUS_MPICHECK(MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_MIN, ctx.comm));
  if (allOk) return Status::Ok;
  return s != Status::Ok ? s : Status::Aborted;
}

// A number for the communicator, equal on all its ranks (trace files name
// it): one past the largest any member has used.  The same reduction
// agrees the trace files' job id, which a launcher may not give (trace.h).
Status agreeCommId(Context &ctx, int *id) {
  uint64_t mine[2] = {uint64_t(g_nextCommId.load()), traceJobProposal()}, agreed[2];
  CHORUS_MPICHECK(MPI_Allreduce(mine, agreed, 2, MPI_UINT64_T, MPI_MAX, ctx.comm));
  *id = int(agreed[0]);
  traceJobAgreed(agreed[1]);
  int seen = g_nextCommId.load();
  while (seen < *id + 1 && !g_nextCommId.compare_exchange_weak(seen, *id + 1)) {
  }
  return Status::Ok;
}

// The peers on this machine that a waiting rank watches for death.  Only
// those whose pid this process can see: ranks in another pid namespace
// would look dead.
void watchPeers(Context &ctx, const std::vector<bool> &sameMachine) {
  ctx.watchedPids.assign(size_t(ctx.nranks), 0);
  for (int p = 0; p < ctx.nranks; ++p) {
    const int32_t pid = ctx.peers[size_t(p)].pid;
    if (p == ctx.rank || !sameMachine[size_t(p)] || pid <= 0) continue;
    if (kill(pid, 0) == 0 || errno == EPERM) ctx.watchedPids[size_t(p)] = pid;
  }
  ctx.channel.watchedPids = ctx.watchedPids.data();
  ctx.channel.peerStatus = ctx.peerStatus.empty() ? nullptr : ctx.peerStatus.data();
}

// Whether the single-copy alltoall can run (PlanShape::singleCopy): one
// node, no checksums (they check what moves through the FIFOs, and this
// moves nothing through them), and every rank able to read every peer's
// memory, which the kernel may forbid (Yama's ptrace_scope, containers).
// Every rank agrees: one that cannot read must not leave the others
// waiting for it to copy.
Status agreeSingleCopy(Context &ctx) {
  if (ctx.nnodes != 1 || ctx.nranks < 2 || ctx.checksum) return Status::Ok;  // the same on every rank
  int mine = 1, all = 0;
  for (int p = 0; p < ctx.nranks && mine; ++p)
    if (p != ctx.rank) mine = ctx.watchedPids[size_t(p)] > 0 && cmaCanRead(ctx.watchedPids[size_t(p)], ctx.peers[size_t(p)].cmaProbe);
  CHORUS_MPICHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, ctx.comm));
  ctx.planShape.singleCopy = ctx.channel.singleCopy = all != 0;
  if (!all && ctx.rank == 0)
    CHORUS_INFO(kSubsysInit, "single-copy alltoall off: some rank cannot read its peers' memory (process_vm_readv; "
                             "see /proc/sys/kernel/yama/ptrace_scope)");
  return Status::Ok;
}

Status bootstrap(Context &ctx) {
  clearSettingsDisagreement();
  MPI_Comm comm = ctx.comm;
  CHORUS_MPICHECK(MPI_Comm_rank(comm, &ctx.rank));
  CHORUS_MPICHECK(MPI_Comm_size(comm, &ctx.nranks));

  PeerInfo self{};
  self.hostHash = hostIdentity();
  self.pid = getpid();
  self.cmaProbe = uint64_t(uintptr_t(cmaProbeWord()));
  // Node and machine of every rank.  They differ when CHORUS_HOSTID plays
  // several nodes on one machine, whose cores the ranks still share.
  // And each rank's place in its node's hardware, to order the rings.
  // And whether it wants checksums: they change every FIFO's layout, so
  // one rank asking turns them on for all.
  // And the cores of its machine, so that every rank computes the same
  // crowding of the busiest machine for the planner (PlanShape::cpuShare).
  // And the hash of the settings every rank must share (ParamScope::Agreed):
  // compared before anything is sized or planned from them.
  // And its machine's network, for the planner's cost model across nodes.
  constexpr size_t kFields = kBootstrapFields;
  const uint64_t mine[kFields] = {self.hostHash, machineIdentity(), uint64_t(topoRankKey(-1)),
                                  uint64_t(paramInt(ParamId::Checksum) > 0), uint64_t(topoUsableCores()),
                                  agreedSettingsHash(), packedNetwork(), packedGpuLinks()};
  std::vector<uint64_t> all(kFields * size_t(ctx.nranks)), hosts(size_t(ctx.nranks));
  std::vector<int64_t> places(size_t(ctx.nranks));
  CHORUS_MPICHECK(MPI_Allgather(mine, int(kFields), MPI_UINT64_T, all.data(), int(kFields), MPI_UINT64_T, comm));
  int onMachine = 0, askChecksum = 0;
  std::vector<bool> sameMachine(size_t(ctx.nranks));
  std::unordered_map<uint64_t, int> ranksOnMachine;
  for (int r = 0; r < ctx.nranks; ++r) ++ranksOnMachine[all[kFields * size_t(r) + 1]];
  double cpuShare = 1.0;
  uint64_t linkMBs = UINT32_MAX, nodeMBs = UINT32_MAX, gpuNodeMBs = UINT32_MAX;
  uint64_t gpuNicMBs = UINT32_MAX, gpuLinkMBs = UINT32_MAX;
  bool everyNicRdma = true;
  bool settingsDiffer = false;
  for (int r = 0; r < ctx.nranks; ++r) {
    const uint64_t *theirs = &all[kFields * size_t(r)];
    settingsDiffer = settingsDiffer || theirs[5] != mine[5];
    hosts[size_t(r)] = theirs[0];
    sameMachine[size_t(r)] = theirs[1] == mine[1];
    onMachine += sameMachine[size_t(r)];
    places[size_t(r)] = int64_t(theirs[2]);
    askChecksum += theirs[3] != 0;
    if (theirs[4] > 0) cpuShare = std::max(cpuShare, double(ranksOnMachine[theirs[1]]) / double(theirs[4]));
    // (A GPU node's NICs, which do RDMA, are the host model's too: its
    // calls staged through host memory cross them.)
    const uint64_t network = theirs[6];
    const bool gpuNode = (network & kPackedGpu) != 0;
    linkMBs = std::min(linkMBs, gpuNode ? theirs[7] >> 32 : network & kPackedLinkMask);
    nodeMBs = std::min(nodeMBs, network >> 32);
    everyNicRdma = everyNicRdma && (gpuNode || (network & kPackedRdma) != 0);
    gpuNodeMBs = std::min(gpuNodeMBs, gpuNode ? network >> 32 : 0);
    gpuNicMBs = std::min(gpuNicMBs, gpuNode ? theirs[7] >> 32 : 0);
    gpuLinkMBs = std::min(gpuLinkMBs, gpuNode ? theirs[7] & UINT32_MAX : 0);
  }
  // Every rank saw the same exchange, so every rank fails here alike,
  // naming the setting (a second exchange, of the values).
  if (settingsDiffer) return describeSettingsDisagreement(comm, ctx.nranks);
  ctx.checksum = askChecksum > 0;
  if (askChecksum > 0 && askChecksum < ctx.nranks && !mine[3])
    CHORUS_WARN("CHORUS_CHECKSUM=1 on %d of the %d ranks of this communicator but not on this one: on for all",
                askChecksum, ctx.nranks);
  wireCommunicator(ctx, hosts, places);
  ctx.planShape.cpuShare = cpuShare;
  // Nodes played on one machine talk over its loopback, which the cost
  // model's measured constants describe; so does a node whose NICs are unknown.
  if (ctx.nnodes > 1 && ranksOnMachine.size() == size_t(ctx.nnodes)) {
    setKnownNetwork(ctx.planShape, double(linkMBs), double(nodeMBs), everyNicRdma);
    // (Agreed figures: every rank cuts a tree's call on the same channels.)
    setKernelsNetwork(ctx.planShape, ctx.deviceWiring, double(gpuNodeMBs), double(gpuNicMBs), double(gpuLinkMBs));
  }
  if (ctx.nnodes > 1 && ctx.rank == 0 && logEnabled(LogLevel::Info, kSubsysTopo)) {
    std::string text;
    for (int p = 0; p < ctx.nranks && p < 256; ++p)
      text += (p > 0 && ctx.nodeOf[size_t(ctx.ringOrder[size_t(p)])] != ctx.nodeOf[size_t(ctx.ringOrder[size_t(p - 1)])]
                   ? " | " : " ") + std::to_string(ctx.ringOrder[size_t(p)]);
    CHORUS_INFO(kSubsysTopo, "ring over %d nodes, ranks in ring order ('|' between nodes):%s", ctx.nnodes,
                text.c_str());
  }
  self.nodeRank = ctx.nodeRank;
  if (ctx.nnodes > 1 && !ctx.netTransport) {
    if (ctx.rank == 0)
      CHORUS_WARN("communicator of %d ranks spans %d nodes, but this Chorus was built without UCX "
                  "(configure --with-ucx): only single-node communicators work",
                  ctx.nranks, ctx.nnodes);
    return Status::Unsupported;
  }
  ctx.scratch.resize(ctx.fullFifo.slotBytes);
  // For the barriers a rank may give up on: across nodes, and wherever
  // device buffers may come (their FIFOs need the release's barrier).
  bool mayNeedBarriers = ctx.netTransport != nullptr;
#ifdef CHORUS_HAVE_CUDA
  mayNeedBarriers = true;
#endif
  if (mayNeedBarriers) CHORUS_MPICHECK(PMPI_Comm_dup(comm, &ctx.barrierComm));

  Status s = ctx.transport->setup(ctx, self);
  if (s == Status::Ok && ctx.netTransport) s = ctx.netTransport->setup(ctx, self);
  CHORUS_CHECK(agree(ctx, s));

  ctx.peers.resize(ctx.nranks);
  CHORUS_MPICHECK(MPI_Allgather(&self, sizeof self, MPI_BYTE, ctx.peers.data(), sizeof self, MPI_BYTE, comm));
  ctx.sendTo.resize(ctx.nranks);
  ctx.recvFrom.resize(ctx.nranks);
  s = ctx.transport->connect(ctx, ctx.peers.data());
  if (s == Status::Ok && ctx.netTransport) s = ctx.netTransport->connect(ctx, ctx.peers.data());
  CHORUS_CHECK(agree(ctx, s));
  // Agreed like the steps above: a rank that fails here alone must not leave
  // the others in the next collective of the set-up.
  s = ctx.transport->postConnect(ctx);
  if (s == Status::Ok && ctx.netTransport) s = ctx.netTransport->postConnect(ctx);
  CHORUS_CHECK(agree(ctx, s));

  int commId = 0;
  CHORUS_CHECK(agreeCommId(ctx, &commId));
  traceAttach(ctx.trace, commId, ctx.rank, ctx.nranks);
  watchPeers(ctx, sameMachine);
  CHORUS_CHECK(agreeSingleCopy(ctx));
  if (paramInt(ParamId::Check) > 0) CHORUS_MPICHECK(MPI_Comm_dup(comm, &ctx.checkComm));
  if (paramInt(ParamId::Stats) > 0 || logEnabled(LogLevel::Info, kSubsysStats)) ctx.stats.reset(new CommStats);
  ctx.logCalls = logEnabled(LogLevel::Trace, kSubsysColl);
  ctx.exactSums = !strcmp(paramString(ParamId::Reproducible), "exact");

  HostChannel &ch = ctx.channel;
  ch.rank = ctx.rank;
  ch.nranks = ctx.nranks;
  ch.sendTo = ctx.sendTo.data();
  ch.recvFrom = ctx.recvFrom.data();
  ch.publish = ctx.publish.empty() ? nullptr : ctx.publish.data();
  ch.slotBytes = ctx.fullFifo.slotBytes;
  ch.allPeerSliceBytes = allPeerSliceBytes(ctx);
  ch.scratch = ctx.scratch.data();
  ch.timeoutNs = paramInt(ParamId::Timeout) * 1000000000ll;
  if (!ctx.ringOrder.empty()) {
    ch.ringOrder = ctx.ringOrder.data();
    ch.ringWhere = ctx.ringWhere.data();
    ch.nodes = &ctx.nodeLayout;
  }
  if (!ctx.localRanks.empty()) {
    ch.localRanks = ctx.localRanks.data();
    ch.nlocal = int(ctx.localRanks.size());
    ch.localIndex = ctx.nodeRank;
    ch.crossRanks = ctx.crossRanks.data();
    ch.ncross = int(ctx.crossRanks.size());
    ch.crossIndex = ctx.nodeOf[size_t(ctx.rank)];
  }
#ifdef CHORUS_HAVE_UCX
  if (ctx.netTransport) {
    ch.netOps = &ucxNetOps();
    ch.net = ctx.netState;
  }
#endif
  int64_t spin = paramInt(ParamId::SpinCount);
  const bool oversubscribed = onMachine > topoUsableCores();
  ch.spinCount = spin >= 0 ? int(spin) : (oversubscribed ? 0 : 20000);
  CHORUS_INFO(kSubsysInit,
              "context ready: %d ranks on %d node(s) (%d here), transport %s%s, full FIFOs %d slots of %zu bytes, "
              "small FIFOs %d of %zu, all-peer slices of %zu bytes, %s",
              ctx.nranks, ctx.nnodes, ctx.nodeSize, ctx.transport->name, ctx.netTransport ? "+ucx" : "",
              ctx.fullFifo.nslots, ctx.fullFifo.slotBytes, ctx.smallFifo.nslots, ctx.smallFifo.slotBytes,
              ch.allPeerSliceBytes, oversubscribed ? "oversubscribed node: waits yield at once" : "waits spin before yielding");
  if (ctx.rank == 0 && logEnabled(LogLevel::Info, kSubsysInit)) {
    // What chorus_sim --resources predicts for larger layouts, here measured by the same code.
    const CommFootprint f = commFootprint(ctx);
    CHORUS_INFO(kSubsysInit,
                "rank 0's footprint: by-rank tables %zu bytes, shm segment %zu, UCX FIFO copies %zu for its %d "
                "streaming links across nodes (%zu if all %d remote peers are linked)",
                f.tableBytes, f.shmSegmentBytes, f.bulkNetBytes, f.bulkNetPeers, f.allNetBytes, f.remotePeers);
  }
  return Status::Ok;
}

// PeerLinks::fullLink for the transports, which know the links but not
// the algorithms.
bool contextFullLink(const PeerLinks &links, int receiver, int sender) {
  return fullFifoLink(static_cast<const Context &>(links), receiver, sender);
}

Status create(MPI_Comm comm, Context **out) {
  auto *ctx = new Context;
  ctx->comm = comm;
  Status s = bootstrap(*ctx);
  if (s != Status::Ok) {
    traceDetach(ctx->trace);
    if (ctx->checkComm != MPI_COMM_NULL) MPI_Comm_free(&ctx->checkComm);
    releaseBarrierComm(&ctx->barrierComm);
    if (ctx->netTransport) ctx->netTransport->free(*ctx);
    if (ctx->transport) ctx->transport->free(*ctx);
    delete ctx;
    return s;
  }
  ctx->established = true;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_live.insert(ctx);
  }
  CHORUS_MPICHECK(MPI_Comm_set_attr(comm, g_contextKeyval, ctx));
  *out = ctx;
  return Status::Ok;
}

}  // namespace

// Every call looks its communicator's context up.  MPI_Comm_get_attr, with
// the MPI_Initialized and MPI_Finalized checks it needs around it, costs
// about 25 ns: a tenth of a small allreduce.  Each thread remembers its
// last lookup instead.  Destroying any context moves the epoch on, so a
// remembered lookup of a freed communicator (whose handle MPI may reuse)
// misses; and MPI_Finalize destroys every context, so a hit also proves
// MPI is initialized and not finalized.
std::atomic<uint64_t> g_contextEpoch{1};
thread_local LookupCache t_lookup __attribute__((tls_model("initial-exec"))) = {};

bool fullFifoLink(const Context &ctx, int receiver, int sender) {
  return ctx.everyFifoFull || carriesBulk(ctx.bulkLinks, receiver, sender);
}

Status libraryInit() {
  static std::once_flag once;
  static Status result = Status::Ok;
  std::call_once(once, [] {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    logSetRank(rank);
    paramsInit();
    traceInit(rank);
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    g_threadMultiple = provided == MPI_THREAD_MULTIPLE;
    if (!g_threadMultiple && rank == 0)
      CHORUS_INFO(kSubsysInit,
                  "MPI thread level %s (not MPI_THREAD_MULTIPLE): one thread at a time in Chorus, no locks taken; "
                  "nonblocking collectives run at the call and return a complete request",
                  provided == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE"
                  : provided == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED" : "MPI_THREAD_SERIALIZED");
    else if (rank == 0)
      CHORUS_INFO(kSubsysInit, "MPI_THREAD_MULTIPLE: collectives on distinct communicators may run in several "
                               "threads at once; nonblocking ones progress on a thread per communicator");
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, deleteContextAttr, &g_contextKeyval, nullptr) != MPI_SUCCESS ||
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalizeHook, &g_finalizeKeyval, nullptr) != MPI_SUCCESS ||
        MPI_Comm_set_attr(MPI_COMM_SELF, g_finalizeKeyval, nullptr) != MPI_SUCCESS)
      result = Status::MpiError;
  });
  return result;
}

bool threadMultiple() { return g_threadMultiple; }

Status contextGet(MPI_Comm comm, Context **out) {
  CHORUS_CHECK(libraryInit());
  void *value = nullptr;
  int found = 0;
  CHORUS_MPICHECK(MPI_Comm_get_attr(comm, g_contextKeyval, &value, &found));
  if (found) {
    *out = static_cast<Context *>(value);
    return Status::Ok;
  }
  return create(comm, out);
}

Context *contextFind(MPI_Comm comm) {
  if (Context *ctx = contextCached(comm)) return ctx;
  if (libraryInit() != Status::Ok) return nullptr;
  // Read before the lookup: a context destroyed meanwhile then misses.
  const uint64_t epoch = g_contextEpoch.load(std::memory_order_acquire);
  void *value = nullptr;
  int found = 0;
  if (MPI_Comm_get_attr(comm, g_contextKeyval, &value, &found) != MPI_SUCCESS || !found) return nullptr;
  t_lookup = {comm, static_cast<Context *>(value), epoch};
  return static_cast<Context *>(value);
}

Status contextFree(MPI_Comm comm) {
  CHORUS_CHECK(libraryInit());
  void *value = nullptr;
  int found = 0;
  CHORUS_MPICHECK(MPI_Comm_get_attr(comm, g_contextKeyval, &value, &found));
  if (found) CHORUS_MPICHECK(MPI_Comm_delete_attr(comm, g_contextKeyval));
  return Status::Ok;
}

}  // namespace chorus
