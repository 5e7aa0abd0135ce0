// The device proxy (ucx_proxy.h): one thread per communicator that carries
// its kernels' FIFOs to other nodes over the ucx transport.
#include "transport/ucx/ucx_proxy.h"

#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/log.h"
#include "transport/ucx/ucx.h"
#include "transport/ucx/ucx_state.h"

namespace chorus {

namespace {

// After its last message or credit the thread keeps polling this long
// (yielding the core between polls), then sleeps between polls: a kernel
// mid-collective posts within microseconds, an idle communicator costs a
// wake-up per kIdlePoll.  An eager launch wakes it at once (netProxyKick);
// a graph replay is seen at the next poll.
constexpr auto kBusyWindow = std::chrono::milliseconds(2);
constexpr auto kIdlePoll = std::chrono::microseconds(200);

bool everyLinkFull(const PeerLinks &, int, int) { return true; }

}  // namespace

struct NetProxy {
  NetProxyConfig config;
  int rank = 0;
  // One ucx context per channel; PeerLinks stay put (the transport's state
  // points at its own).
  std::vector<std::unique_ptr<PeerLinks>> channels;
  std::vector<int> remotePeers;
  std::thread thread;
  std::mutex mutex;
  std::condition_variable wake;
  bool stop = false;
  bool kicked = false;
  int *abortWord = nullptr;
  std::atomic<bool> failed{false};
  std::atomic<bool> closing{false};  // netProxyClosing
  Status failStatus = Status::Ok;
  char failText[400] = "";
  std::atomic<uint64_t> messages{0};
};

namespace {

void recordFailure(NetProxy &proxy, Status s, const char *text) {
  if (proxy.failed.load(std::memory_order_relaxed)) return;
  proxy.failStatus = s;
  snprintf(proxy.failText, sizeof proxy.failText, "%s", text);
  proxy.failed.store(true, std::memory_order_release);
  // Then the word the kernels poll: a kernel that stops on it finds the
  // reason recorded.
  __atomic_store_n(proxy.abortWord, 1, __ATOMIC_RELEASE);
  if (proxy.closing.load(std::memory_order_relaxed))
    CHORUS_INFO(kSubsysNet, "rank %d: the device links to other nodes failed while the communicator was being "
                "released (a peer that left first): %s", proxy.rank, text);
  else
    CHORUS_WARN("rank %d: the device links to other nodes failed: %s", proxy.rank, text);
}

// One pass over a channel's links, under the worker lock (the arrival
// handlers read the host ends' counts).  Whether it posted anything.
bool postChannel(NetProxy &proxy, PeerLinks &ch) {
  const NetOps &net = ucxNetOps();
  const UcxState &st = *static_cast<const UcxState *>(ch.netState);
  bool active = false;
  for (int p : proxy.remotePeers) {
    FifoEnd &out = ch.sendTo[size_t(p)];
    FifoEnd &in = ch.recvFrom[size_t(p)];
    // Slots in device memory go by put only: until the peer's rkey is
    // here, its messages wait (the first ones after set-up, briefly).
    const bool mayPost = !st.slotsApart || ucxPutReady(st, p);
    if (!mayPost) active = true;
    // What the kernel consumed first: a message going back carries it.
    const uint64_t consumed = __atomic_load_n(&in.header->head.value, __ATOMIC_ACQUIRE);
    if (consumed > in.step) in.step = consumed;
    const uint64_t posted = __atomic_load_n(&out.header->tail.value, __ATOMIC_ACQUIRE);
    while (mayPost && out.step < posted) {
      const uint64_t m = out.step;
      InlineLine *lines = out.inlineSlot(m);
      const uint64_t bytes = __atomic_load_n(&lines[1].flag, __ATOMIC_RELAXED);
      if (bytes > out.slotBytes) {
        char text[200];
        snprintf(text, sizeof text, "message %llu to rank %d claims %llu bytes, more than its %zu-byte slot",
                 (unsigned long long)m, p, (unsigned long long)bytes, out.slotBytes);
        recordFailure(proxy, Status::InternalError, text);
        return false;
      }
      // Its header, as host FIFOs carry one (fifo.h); device receivers
      // check the sequence number the transport carries, not a call tag.
      __atomic_store_n(&lines[0].flag, messageHeader(m + 1, 0), __ATOMIC_RELAXED);
      out.step = m + 1;
      net.postMessage(ch.netState, out, m, size_t(bytes), 0);
      proxy.messages.fetch_add(1, std::memory_order_relaxed);
      active = true;
    }
    // A credit per consumed slot: the kernels' FIFOs are 4 slots deep, and
    // a credit is a header-only message.
    if (in.step > in.credited) {
      in.credited = in.step;
      in.creditWanted = ~uint64_t(0);
      net.postCredit(ch.netState, in);
      active = true;
    }
  }
  return active;
}

// After the pass's one run of the worker: a channel's finished sends
// freed, its links' failures recorded.  Whether UCX still holds sends of it.
bool checkChannel(NetProxy &proxy, PeerLinks &ch) {
  auto &st = *static_cast<UcxState *>(ch.netState);
  char text[320] = "";
  const Status s = ucxAfterRun(st, proxy.remotePeers.front(), ~uint64_t(0), text, sizeof text);
  if (s != Status::Ok) recordFailure(proxy, s, text);
  return s == Status::Ok && !st.pending.empty();
}

void proxyMain(NetProxy *proxy) {
  auto lastActive = std::chrono::steady_clock::now();
  for (;;) {
    bool active = false;
    if (!proxy->failed.load(std::memory_order_acquire)) {
      std::lock_guard<std::recursive_mutex> lock(ucxWorkerLock());
      for (auto &ch : proxy->channels)
        if (postChannel(*proxy, *ch)) active = true;
      // The worker once for every channel (they share it).
      ucxRunWorker();
      for (auto &ch : proxy->channels)
        if (checkChannel(*proxy, *ch)) active = true;
    }
    const auto now = std::chrono::steady_clock::now();
    if (active) lastActive = now;
    std::unique_lock<std::mutex> lock(proxy->mutex);
    if (proxy->stop) return;
    if (active || now - lastActive < kBusyWindow) {
      lock.unlock();
      sched_yield();
      continue;
    }
    proxy->wake.wait_for(lock, kIdlePoll, [proxy] { return proxy->stop || proxy->kicked; });
    if (proxy->kicked) lastActive = std::chrono::steady_clock::now();
    proxy->kicked = false;
  }
}

// Every rank reaches each MPI call below whatever failed before it on this
// rank: the caller agrees on the outcome.
Status setupChannels(NetProxy &proxy, const PeerLinks &base) {
  const int n = base.nranks;
  const int nch = proxy.config.nchannels;
  Status s = Status::Ok;
  std::vector<uint64_t> mine(size_t(nch), 0), all(size_t(nch) * size_t(n), 0);
  for (int c = 0; c < nch; ++c) {
    auto ch = std::make_unique<PeerLinks>();
    ch->comm = base.comm;
    ch->barrierComm = base.barrierComm;
    ch->rank = base.rank;
    ch->nranks = n;
    ch->nodeRank = base.nodeRank;
    ch->nodeSize = base.nodeSize;
    ch->nnodes = base.nnodes;
    ch->nodeOf = base.nodeOf;
    ch->peers = base.peers;
    ch->sendTo.assign(size_t(n), FifoEnd{});
    ch->recvFrom.assign(size_t(n), FifoEnd{});
    ch->fullFifo = ch->smallFifo = FifoShape{proxy.config.slotBytes, proxy.config.nslots};
    ch->fullLink = everyLinkFull;
    ch->netTransport = &kUcxTransport;
    ch->netMemory = proxy.config.memory;
    PeerInfo self = ch->peers[size_t(base.rank)];
    if (s == Status::Ok) s = kUcxTransport.setup(*ch, self);
    mine[size_t(c)] = self.netNonce;
    proxy.channels.push_back(std::move(ch));
  }
  CHORUS_MPICHECK(MPI_Allgather(mine.data(), nch, MPI_UINT64_T, all.data(), nch, MPI_UINT64_T, base.comm));
  int good = s == Status::Ok, allGood = 0;
  CHORUS_MPICHECK(MPI_Allreduce(&good, &allGood, 1, MPI_INT, MPI_MIN, base.comm));
  if (!allGood) return s != Status::Ok ? s : Status::Aborted;
  char text[200] = "";
  for (int c = 0; c < nch && s == Status::Ok; ++c) {
    PeerLinks &ch = *proxy.channels[size_t(c)];
    for (int p = 0; p < n; ++p) ch.peers[size_t(p)].netNonce = all[size_t(p) * size_t(nch) + size_t(c)];
    s = kUcxTransport.connect(ch, ch.peers.data());
    // Every peer on another node, now: the kernels' FIFO pointers must
    // exist before a launch.
    for (int p : proxy.remotePeers)
      if (s == Status::Ok) s = ucxNetOps().link(ch.netState, p, text, sizeof text);
  }
  if (s != Status::Ok && text[0]) CHORUS_WARN("%s", text);
  good = s == Status::Ok;
  CHORUS_MPICHECK(MPI_Allreduce(&good, &allGood, 1, MPI_INT, MPI_MIN, base.comm));
  if (!allGood) return s != Status::Ok ? s : Status::Aborted;
  for (auto &ch : proxy.channels) {
    // Collective (a barrier inside), so on every rank even after a failure.
    const Status one = kUcxTransport.postConnect(*ch);
    if (s == Status::Ok) s = one;
  }
  return s;
}

}  // namespace

Status netProxyCreate(const PeerLinks &base, const NetProxyConfig &config, NetProxy **out) {
  auto *proxy = new NetProxy;
  *out = proxy;
  proxy->config = config;
  proxy->rank = base.rank;
  for (int p = 0; p < base.nranks; ++p)
    if (base.nodeOf[size_t(p)] != base.nodeOf[size_t(base.rank)] &&
        (config.peers.empty() || std::binary_search(config.peers.begin(), config.peers.end(), p)))
      proxy->remotePeers.push_back(p);
  if (proxy->remotePeers.empty()) return Status::Ok;  // (the caller creates none then)
  const Status s = setupChannels(*proxy, base);
  if (s == Status::Ok) {
    const UcxCounters one = ucxCounters(*proxy->channels.front());
    CHORUS_INFO(kSubsysNet, "rank %d: device links to %zu ranks on other nodes, %d channels of %d slots of %zu "
                "bytes, %llu KiB of FIFO copies%s", base.rank, proxy->remotePeers.size(), config.nchannels,
                config.nslots, config.slotBytes,
                (unsigned long long)(one.linkedBytes * uint64_t(config.nchannels) / 1024),
                config.memory.slotAlloc ? " (the slots in device memory)" : " in pinned host memory");
  }
  return s;
}

const FifoEnd &netProxySendEnd(const NetProxy &proxy, int channel, int peer) {
  return proxy.channels[size_t(channel)]->sendTo[size_t(peer)];
}
const FifoEnd &netProxyRecvEnd(const NetProxy &proxy, int channel, int peer) {
  return proxy.channels[size_t(channel)]->recvFrom[size_t(peer)];
}

Status netProxyStart(NetProxy &proxy, int *abortWord) {
  proxy.abortWord = abortWord;
  try {
    proxy.thread = std::thread(proxyMain, &proxy);
  } catch (const std::exception &e) {
    CHORUS_WARN("rank %d: could not start the device proxy thread: %s", proxy.rank, e.what());
    return Status::SystemError;
  }
  return Status::Ok;
}

void netProxyKick(NetProxy &proxy) {
  {
    std::lock_guard<std::mutex> lock(proxy.mutex);
    proxy.kicked = true;
  }
  proxy.wake.notify_one();
}

bool netProxyFailure(NetProxy &proxy, Status *status, char *text, size_t len) {
  if (!proxy.failed.load(std::memory_order_acquire)) return false;
  *status = proxy.failStatus;
  snprintf(text, len, "%s", proxy.failText);
  return true;
}

bool netProxyCanRegister(const PeerLinks &base, int memoryType, void *probe, size_t bytes, char *why, size_t len) {
  const auto *st = static_cast<const UcxState *>(base.netState);
  if (!st || !st->ucp) {
    snprintf(why, len, "no UCX context on this communicator");
    return false;
  }
  std::lock_guard<std::recursive_mutex> lock(ucxWorkerLock());
  ucp_context_attr_t attr = {};
  attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
  ucs_status_t s = ucp_context_query(st->ucp, &attr);
  if (s != UCS_OK || !(attr.memory_types & UCS_BIT(memoryType))) {
    snprintf(why, len, "UCX reports no support for %s memory (built without it, or UCX_TLS leaves it out)",
             ucs_memory_type_names[memoryType]);
    return false;
  }
  ucp_mem_map_params_t mp = {};
  mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
  mp.address = probe;
  mp.length = bytes;
  mp.memory_type = ucs_memory_type_t(memoryType);
  ucp_mem_h memh = nullptr;
  s = ucp_mem_map(st->ucp, &mp, &memh);
  if (s != UCS_OK) {
    snprintf(why, len, "UCX could not register %s memory: %s", ucs_memory_type_names[memoryType],
             ucs_status_string(s));
    return false;
  }
  ucp_mem_unmap(st->ucp, memh);
  return true;
}

uint64_t netProxyMessages(const NetProxy &proxy) { return proxy.messages.load(std::memory_order_relaxed); }

void netProxySetTestFaults(NetProxy &proxy, unsigned faults) {
  for (auto &ch : proxy.channels) ucxSetTestFaults(*ch, faults);
}

UcxCounters netProxyCounters(const NetProxy &proxy) {
  UcxCounters sum;
  for (const auto &ch : proxy.channels) {
    const UcxCounters one = ucxCounters(*ch);
    sum.reordered += one.reordered;
    sum.duplicated += one.duplicated;
    sum.puts += one.puts;
    sum.linkedPeers += one.linkedPeers;
    sum.linkedBytes += one.linkedBytes;
  }
  return sum;
}

void netProxyClosing(NetProxy &proxy) { proxy.closing.store(true, std::memory_order_relaxed); }

// The links' memory of a proxy that failed stays for the process's life
// (NetCopyMemory::keepOnFree): its peers may still put into it, they learning of
// the failure late (test_proxy's duplicate under ASan: a peer's put landed
// in a freed receive copy).  The proxy can fail where its channels' states
// saw nothing (a slot's size out of bounds), so it says so itself.
void netProxyFree(NetProxy *proxy) {
  if (!proxy) return;
  if (proxy->thread.joinable()) {
    {
      std::lock_guard<std::mutex> lock(proxy->mutex);
      proxy->stop = true;
    }
    proxy->wake.notify_one();
    proxy->thread.join();
  }
  const bool failed = proxy->failed.load(std::memory_order_acquire);
  if (failed)
    CHORUS_INFO(kSubsysNet, "rank %d: the device links failed: their memory stays allocated, since a peer may still "
                "put into it", proxy->rank);
  for (auto &ch : proxy->channels) {
    ch->netMemory.keepOnFree = failed;
    kUcxTransport.free(*ch);
  }
  delete proxy;
}

}  // namespace chorus
