#include "core/context.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "core/log.h"
#include "core/params.h"
#include "topo/topo.h"

#ifdef CHORUS_HAVE_CUDA
#include "cuda/cuda_executor.h"
#endif

namespace chorus {

namespace {

int g_contextKeyval = MPI_KEYVAL_INVALID;
int g_finalizeKeyval = MPI_KEYVAL_INVALID;
std::mutex g_mutex;
std::set<Context *> g_live;  // so that MPI_Finalize can release what users did not free

// Every call looks its communicator's context up.  MPI_Comm_get_attr, with
// the MPI_Initialized and MPI_Finalized checks it needs around it, costs
// about 25 ns: a tenth of a small allreduce.  Each thread remembers its
// last lookup instead.  Destroying any context moves the epoch on, so a
// remembered lookup of a freed communicator (whose handle MPI may reuse)
// misses; and MPI_Finalize destroys every context, so a hit also proves
// MPI is initialized and not finalized.
std::atomic<uint64_t> g_contextEpoch{1};
struct LookupCache {
  MPI_Comm comm;
  Context *ctx;
  uint64_t epoch;  // 0: empty
};
// initial-exec: a thread-pointer offset instead of a __tls_get_addr call.
thread_local LookupCache t_lookup __attribute__((tls_model("initial-exec"))) = {};

void destroy(Context *ctx) {
#ifdef CHORUS_HAVE_CUDA
  cudaStateFree(ctx->cuda);
  ctx->cuda = nullptr;
#endif
  if (ctx->transport) ctx->transport->free(*ctx);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_live.erase(ctx);
  }
  g_contextEpoch.fetch_add(1, std::memory_order_acq_rel);
  CHORUS_INFO(kSubsysInit, "released context of %d ranks after %llu collectives", ctx->nranks,
              (unsigned long long)ctx->collectives);
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
  for (Context *ctx : live) MPI_Comm_delete_attr(ctx->comm, g_contextKeyval);
  MPI_Comm_free_keyval(&g_contextKeyval);
  return MPI_SUCCESS;
}

uint64_t hostHash() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (const char *p = host; *p; ++p) h = (h ^ uint8_t(*p)) * 1099511628211ull;
  return h;
}

Status bootstrap(Context &ctx) {
  MPI_Comm comm = ctx.comm;
  CHORUS_MPICHECK(MPI_Comm_rank(comm, &ctx.rank));
  CHORUS_MPICHECK(MPI_Comm_size(comm, &ctx.nranks));
  MPI_Comm node;
  CHORUS_MPICHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, ctx.rank, MPI_INFO_NULL, &node));
  MPI_Comm_rank(node, &ctx.nodeRank);
  MPI_Comm_size(node, &ctx.nodeSize);
  MPI_Comm_free(&node);

  int allLocal = ctx.nodeSize == ctx.nranks, everyoneLocal = 0;
  CHORUS_MPICHECK(MPI_Allreduce(&allLocal, &everyoneLocal, 1, MPI_INT, MPI_MIN, comm));
  if (!everyoneLocal) {
    CHORUS_WARN("communicator of %d ranks spans several nodes: the inter-node (UCX) transport is not "
                "available in this build",
                ctx.nranks);
    return Status::Unsupported;
  }

  ctx.slotBytes = size_t(paramInt(ParamId::ShmSlotSize));
  ctx.slotBytes &= ~size_t(kFifoAlign - 1);  // keep slots aligned for wide loads
  ctx.nslots = int(paramInt(ParamId::ShmSlots));
  ctx.scratch.resize(ctx.slotBytes);
  ctx.transport = &kShmTransport;

  PeerInfo self{};
  self.hostHash = hostHash();
  self.pid = getpid();
  self.nodeRank = ctx.nodeRank;
  Status s = ctx.transport->setup(ctx, self);
  int setupOk = s == Status::Ok, allOk = 0;
  // Every rank learns whether set-up failed anywhere, so that nobody waits
  // for a peer that already gave up.
  CHORUS_MPICHECK(MPI_Allreduce(&setupOk, &allOk, 1, MPI_INT, MPI_MIN, comm));
  if (!allOk) return s != Status::Ok ? s : Status::Aborted;

  ctx.peers.resize(ctx.nranks);
  CHORUS_MPICHECK(MPI_Allgather(&self, sizeof self, MPI_BYTE, ctx.peers.data(), sizeof self, MPI_BYTE, comm));
  ctx.sendTo.resize(ctx.nranks);
  ctx.recvFrom.resize(ctx.nranks);
  s = ctx.transport->connect(ctx, ctx.peers.data());
  int connectOk = s == Status::Ok;
  CHORUS_MPICHECK(MPI_Allreduce(&connectOk, &allOk, 1, MPI_INT, MPI_MIN, comm));
  if (!allOk) return s != Status::Ok ? s : Status::Aborted;
  CHORUS_CHECK(ctx.transport->postConnect(ctx));

  HostChannel &ch = ctx.channel;
  ch.rank = ctx.rank;
  ch.nranks = ctx.nranks;
  ch.sendTo = ctx.sendTo.data();
  ch.recvFrom = ctx.recvFrom.data();
  ch.publish = ctx.publish.empty() ? nullptr : ctx.publish.data();
  ch.slotBytes = ctx.slotBytes;
  ch.scratch = ctx.scratch.data();
  ch.timeoutNs = paramInt(ParamId::Timeout) * 1000000000ll;
  int64_t spin = paramInt(ParamId::SpinCount);
  const bool oversubscribed = ctx.nodeSize > topoUsableCores();
  ch.spinCount = spin >= 0 ? int(spin) : (oversubscribed ? 0 : 20000);
  CHORUS_INFO(kSubsysInit, "context ready: %d ranks on one node, transport %s, %d slots of %zu bytes, %s",
              ctx.nranks, ctx.transport->name, ctx.nslots, ctx.slotBytes,
              oversubscribed ? "oversubscribed node: waits yield at once" : "waits spin before yielding");
  return Status::Ok;
}

Status create(MPI_Comm comm, Context **out) {
  auto *ctx = new Context;
  ctx->comm = comm;
  Status s = bootstrap(*ctx);
  if (s != Status::Ok) {
    if (ctx->transport) ctx->transport->free(*ctx);
    delete ctx;
    return s;
  }
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_live.insert(ctx);
  }
  CHORUS_MPICHECK(MPI_Comm_set_attr(comm, g_contextKeyval, ctx));
  *out = ctx;
  return Status::Ok;
}

}  // namespace

Status libraryInit() {
  static std::once_flag once;
  static Status result = Status::Ok;
  std::call_once(once, [] {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    logSetRank(rank);
    paramsInit();
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, deleteContextAttr, &g_contextKeyval, nullptr) != MPI_SUCCESS ||
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalizeHook, &g_finalizeKeyval, nullptr) != MPI_SUCCESS ||
        MPI_Comm_set_attr(MPI_COMM_SELF, g_finalizeKeyval, nullptr) != MPI_SUCCESS)
      result = Status::MpiError;
  });
  return result;
}

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

Context *contextCached(MPI_Comm comm) {
  const LookupCache &c = t_lookup;
  if (c.epoch == g_contextEpoch.load(std::memory_order_acquire) && c.comm == comm) return c.ctx;
  return nullptr;
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

Status contextInit(MPI_Comm comm) {
  Context *ctx = nullptr;
  return contextGet(comm, &ctx);
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
