#include "cuda/cuda_executor.h"

#include <cuda_runtime.h>

#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "coll/patterns.h"
#include "transport/transport.h"
#include "core/log.h"
#include "core/params.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_net.h"
#include "cuda/device_links.h"
#include "cuda/device_pool.h"
#include "cuda/gpu_sharing.h"
#include "cuda/kernels.h"
#include "transport/cuda_ipc/cuda_ipc.h"

namespace chorus {

struct CudaState {
  int device = -1;
  int nchannels = kCudaMaxChannels;
  CudaIpcState *ipc = nullptr;
  char *fifos = nullptr;             // this rank's inbound FIFOs, exported by cuda_ipc (device memory)
  FifoEnd *devEnds = nullptr;        // [proto][channel][sendTo|recvFrom][peer]
  DevChannel *devChannels = nullptr; // [proto][channel]
  char *scratch = nullptr;           // [channel][slotBytes]
  int *abortFlag = nullptr;          // device memory
  DevError *errHost = nullptr;       // host-mapped
  DevError *errDev = nullptr;
  uint64_t timeoutNs = 0;
  uint32_t llFlagMask = 0;
  // Setup copies and teardown run here, never on the legacy stream (see
  // cudaIpcSetup).
  cudaStream_t setupStream = nullptr;
  // The kernels of a communicator share its FIFO counters and scratch, so
  // they must run one after another even when users enqueue them on
  // different streams: each launch waits for the previous one's event
  // (orderAfterPrevious).
  cudaEvent_t lastLaunch = nullptr;
  // Links to ranks on other nodes (cuda_net.h), on a communicator spanning
  // nodes; null on one node.
  CudaNet *net = nullptr;
  // Whether its links reach every rank on another node, or only the
  // streaming algorithms' peers (cuda/device_links.h).
  bool netEveryPeer = true;
  // With it, the ring order and node layout in device memory
  // (DevCollArgs::ringOrder, ringWhere, nodes).
  int *layoutInts = nullptr;  // order, where, nodeStart, nodeOf[, rails]
  NodeLayout *nodes = nullptr;
  HierarchyGroups hierarchy{};  // DevCollArgs::hierarchy, its ranks in layoutInts
};

namespace {

// Messages below this size (bytes per rank) use LL under CHORUS_PROTO=auto.
// Not yet measured on hardware: LL's win is latency, NCCL's crossover sits
// in the tens of KiB.
constexpr size_t kLLMaxBytes = 64 * 1024;

// Each protocol has FIFOs of its own.  An LL receiver trusts a line whose
// flag equals the message number; a slot that last carried Simple data could
// hold that value by chance, so the protocols never share slot memory (nor
// the message counters).
constexpr int kProtos = int(Proto::Count);

// By protocol index (the loops over kProtos): device_channel.h's sizes.
size_t slotBytesOf(int proto) { return cudaSlotBytes(Proto(proto)); }
size_t fifoBytes(int proto) { return cudaFifoBytes(Proto(proto)); }
FifoEnd deviceFifoEnd(char *base, size_t slotBytes, int nslots, int peer) {
  FifoEnd e = makeFifoEnd(base, slotBytes, nslots, peer);
  e.inlineSlots = nullptr;
  e.slots = base + fifoHeaderBytes();
  return e;
}
// Channels this rank's GPU can hold at once.  A collective's blocks wait
// for each other across ranks (block c of every rank exchanges with block
// c of the others), so all of them must be resident together: one per
// multiprocessor (__launch_bounds__(kCudaThreads, 1)).  A rank that got
// only some of its blocks onto the GPU would wait, with them, for peers
// whose missing blocks wait for it.  Under MPS a client gets
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE of the multiprocessors (rounded down
// here; MPS may round up).  Kernels of other work that hold SMs delay the
// launch but end by themselves; chorus(7) says what a job must leave free.
int residentChannels(int device, int *sms, double *mpsShare) {
  *sms = 0;
  *mpsShare = 100;
  if (cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || *sms < 1) {
    cudaGetLastError();
    return kCudaMaxChannels;
  }
  int fit = *sms;
  if (const char *pct = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")) {
    char *end = nullptr;
    const double p = strtod(pct, &end);
    if (end != pct && p > 0 && p < 100) {
      *mpsShare = p;
      fit = int(double(*sms) * p / 100.0);
    }
  }
  return fit < 1 ? 1 : fit;
}

// Channels (blocks) for one call of `bytes` (the vector, or one rank's
// block), up to the communicator's maximum.  Allreduce, reduce and bcast:
// one per slot's worth of the vector (`capacity`), so a 64 MiB allreduce on
// 8 GPUs runs on 16 channels, 4 MiB each, 4 slots per ring step
// (device_channel.h has the Little's-law sizing).  Splitting further costs
// nothing but SMs: every channel runs the same number of ring steps, each
// shorter, so even a latency-bound message loses nothing by it.
// Allgather, reduce-scatter and alltoall: every rank's block is cut across
// the channels (kernels_impl.cuh, channelArgs), one per round of loads
// (kCudaRoundBytes) of the block, so that an 8 MiB allgather on 8 GPUs (1
// MiB blocks) keeps 16 SMs' loads in flight as the allreduce does, where
// one block kept 32 KiB in flight (~20-30 GB/s by Little's law).
// A bcast or reduce tree across nodes: no more than the wiring's
// rootedTreeChannels (device_links.h: its channels share each NIC).
int channelsForCall(const CudaState &st, const DeviceWiring &wiring, Coll coll, Algo algo, size_t bytes,
                    size_t capacity) {
  const bool vector = coll == Coll::Allreduce || coll == Coll::Reduce || coll == Coll::Bcast;
  const size_t unit = vector ? capacity : kCudaRoundBytes;
  const size_t want = bytes == 0 ? 1 : (bytes + unit - 1) / unit;
  size_t most = size_t(st.nchannels);
  if (st.net && algo == Algo::Tree && (coll == Coll::Bcast || coll == Coll::Reduce) && wiring.rootedTreeChannels > 0)
    most = std::min(most, size_t(wiring.rootedTreeChannels));
  return int(want < most ? want : most);
}

// A rank's region holds its inbound FIFOs from the other ranks of its
// node, [proto][channel][peer]: ranks on other nodes send through the
// device proxy's links (cuda_net.h), so they take no room here (at 16,384
// ranks they would take 9 GiB a rank: chorus_sim --resources).  Peer p's
// place in owner's region is p's index among the node's ranks, owner's
// own skipped (`local`: each rank's index on its node).
size_t peerSlot(const std::vector<int> &local, int peer, int owner) {
  const int i = local[size_t(peer)];
  return size_t(i < local[size_t(owner)] ? i : i - 1);
}
size_t fifoOffset(const CudaState &st, int nodeSize, int proto, int channel, size_t place) {
  const size_t peers = size_t(nodeSize > 1 ? nodeSize - 1 : 1);
  const size_t protoBase = proto == 0 ? 0 : fifoBytes(0) * size_t(st.nchannels) * peers;
  return protoBase + (size_t(channel) * peers + place) * fifoBytes(proto);
}
size_t fifoRegionBytes(const CudaState &st, int nodeSize) { return cudaFifoRegionBytes(nodeSize, st.nchannels); }

template <typename T>
Status takeDevice(size_t bytes, T **out) {
  void *p = nullptr;
  const Status s = devicePoolTake(PoolMemory::Device, bytes, &p);
  *out = static_cast<T *>(p);
  return s;
}

Status buildChannels(PeerLinks &ctx, CudaState &st) {
  const int n = ctx.nranks;
  const size_t nchan = size_t(kProtos) * st.nchannels;
  std::vector<int> local(static_cast<size_t>(n)), seen;
  for (int p = 0; p < n; ++p) {
    const size_t node = size_t(ctx.nodeOf[size_t(p)]);
    if (seen.size() <= node) seen.resize(node + 1, 0);
    local[size_t(p)] = seen[node]++;
  }
  std::vector<FifoEnd> ends(nchan * 2 * n);
  std::vector<DevChannel> chans(nchan);
  CHORUS_CHECK(takeDevice(ends.size() * sizeof(FifoEnd), &st.devEnds));
  CHORUS_CHECK(takeDevice(chans.size() * sizeof(DevChannel), &st.devChannels));
  CHORUS_CHECK(takeDevice(kCudaSlotBytes * st.nchannels, &st.scratch));
  for (int proto = 0; proto < kProtos; ++proto) {
    for (int c = 0; c < st.nchannels; ++c) {
      const size_t ch = size_t(proto) * st.nchannels + c;
      FifoEnd *send = &ends[ch * 2 * n], *recv = send + n;
      for (int p = 0; p < n; ++p) {
        if (p == ctx.rank) {
          send[p] = recv[p] = FifoEnd{};
          continue;
        }
        // A peer on another node: the proxy's FIFO copies, Simple only (a
        // communicator spanning nodes runs no LL kernel: pickProto).
        if (ctx.nodeOf[size_t(p)] != ctx.nodeOf[size_t(ctx.rank)]) {
          if (proto == int(Proto::Simple)) {
            send[p] = cudaNetEnd(*st.net, c, p, true);
            recv[p] = cudaNetEnd(*st.net, c, p, false);
          } else {
            send[p] = recv[p] = FifoEnd{};
          }
          continue;
        }
        // My outbound FIFO to p lives in p's region at my index; my inbound
        // FIFO from p in mine at p's index.
        char *peerBase = cudaIpcPeer(*st.ipc, p) + fifoOffset(st, ctx.nodeSize, proto, c, peerSlot(local, ctx.rank, p));
        char *localBase = cudaIpcLocal(*st.ipc) + fifoOffset(st, ctx.nodeSize, proto, c, peerSlot(local, p, ctx.rank));
        send[p] = deviceFifoEnd(peerBase, slotBytesOf(proto), kCudaSlots, p);
        recv[p] = deviceFifoEnd(localBase, slotBytesOf(proto), kCudaSlots, p);
      }
      FifoEnd *devSend = st.devEnds + ch * 2 * n;
      // Both protocols' blocks of channel c share its scratch: kernels on a
      // communicator run one at a time (see orderAfterPrevious).
      chans[ch] = DevChannel{devSend, devSend + n, st.scratch + kCudaSlotBytes * c};
    }
  }
  CHORUS_CUDACHECK(cudaMemcpyAsync(st.devEnds, ends.data(), ends.size() * sizeof(FifoEnd), cudaMemcpyHostToDevice,
                                   st.setupStream));
  CHORUS_CUDACHECK(cudaMemcpyAsync(st.devChannels, chans.data(), chans.size() * sizeof(DevChannel),
                                   cudaMemcpyHostToDevice, st.setupStream));
  CHORUS_CUDACHECK(cudaStreamSynchronize(st.setupStream));  // before `ends` and `chans` go
  return Status::Ok;
}

// The LL flag re-flags each slot once per 2^(bits-1) messages, which the
// slot count must divide (prims_device.cuh: llFlag); CHORUS_LL_FLAG_BITS
// goes down to 4.
static_assert(kCudaSlots > 0 && (kCudaSlots & (kCudaSlots - 1)) == 0 && kCudaSlots <= 8,
              "kCudaSlots must be a power of two dividing 2^(4-1)");

// Local and free of device-wide synchronisation: other communicators'
// kernels may be running, waiting for ranks that are in this setup's MPI
// calls (cudaIpcSetup says why).
Status localSetup(PeerLinks &ctx, CudaState &st, PeerInfo &self) {
  CHORUS_CUDACHECK(cudaGetDevice(&st.device));
  CHORUS_CUDACHECK(cudaStreamCreateWithFlags(&st.setupStream, cudaStreamNonBlocking));
  // From the pool: a communicator's freed FIFOs are reused by the next one
  // (cudaIpcSetup clears them), and freed only while no kernel runs.
  const size_t fifoRegion = fifoRegionBytes(st, ctx.nodeSize);
  CHORUS_CHECK(takeDevice(fifoRegion, &st.fifos));
  CHORUS_CHECK(cudaIpcSetup(st.fifos, fifoRegion, st.setupStream, self, &st.ipc));
  CHORUS_CUDACHECK(cudaEventCreateWithFlags(&st.lastLaunch, cudaEventDisableTiming));
  devicePoolTrackLaunches(st.lastLaunch);
  CHORUS_CHECK(takeDevice(sizeof(int), &st.abortFlag));
  CHORUS_CUDACHECK(cudaMemsetAsync(st.abortFlag, 0, sizeof(int), st.setupStream));
  void *errHost = nullptr;
  CHORUS_CHECK(devicePoolTake(PoolMemory::HostMapped, sizeof(DevError), &errHost));
  st.errHost = static_cast<DevError *>(errHost);
  memset(st.errHost, 0, sizeof(DevError));
  CHORUS_CUDACHECK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&st.errDev), st.errHost, 0));
  st.timeoutNs = uint64_t(paramInt(ParamId::Timeout)) * 1000000000ull;
  const int64_t bits = paramInt(ParamId::LLFlagBits);
  st.llFlagMask = bits >= 32 ? 0xffffffffu : (1u << bits) - 1u;
  CHORUS_CUDACHECK(cudaStreamSynchronize(st.setupStream));
  return Status::Ok;
}

// The ring orders and node layout for the kernels (DevCollArgs): channel
// c's ring is the host engine's (ranks grouped by node) with each node's
// ranks rotated by c, so that channel c enters a node of k ranks at its
// local rank c mod k and leaves it from c - 1.  One ring order for every
// channel would leave one rank of each node (its GPU's NIC) carrying all
// the traffic between nodes; rotated, the channels spread it over every
// rank's link (perf/RESULTS.md, GPU across nodes).  The trees keep the
// host's order.
Status copyNodeLayout(const NodeLayout &host, int rank, CudaState &st) {
  const size_t n = size_t(host.nranks), starts = size_t(host.nnodes) + 1, nch = size_t(st.nchannels);
  std::vector<int> ints(2 * nch * n);
  for (size_t c = 0; c < nch; ++c) {
    int *order = &ints[c * n], *where = &ints[(nch + c) * n];
    for (int node = 0; node < host.nnodes; ++node) {
      const int first = host.nodeStart[node], size = host.nodeStart[node + 1] - first;
      for (int i = 0; i < size; ++i) order[first + i] = host.order[first + int((size_t(i) + c) % size_t(size))];
    }
    for (size_t p = 0; p < n; ++p) where[order[p]] = int(p);
  }
  ints.insert(ints.end(), host.nodeStart, host.nodeStart + starts);
  ints.insert(ints.end(), host.nodeOf, host.nodeOf + n);
  // Nodes of equal size: the hierarchical allreduce's rails, local rank i
  // of every node (in the trees' order, which every rank shares).
  const int m = host.nodeStart[1] - host.nodeStart[0];
  const bool equal = equalNodes(host);
  const size_t railsAt = ints.size();
  if (equal)
    for (int i = 0; i < m; ++i)
      for (int node = 0; node < host.nnodes; ++node) ints.push_back(host.order[host.nodeStart[node] + i]);
  CHORUS_CHECK(takeDevice(ints.size() * sizeof(int), &st.layoutInts));
  CHORUS_CHECK(takeDevice(sizeof(NodeLayout), &st.nodes));
  // The trees' layout: channel 0's order, the host's own.
  const NodeLayout dev = {host.nranks, host.nnodes, st.layoutInts, st.layoutInts + nch * n, st.layoutInts + 2 * nch * n,
                          st.layoutInts + 2 * nch * n + starts};
  if (equal) {  // this rank's groups: its node's ranks in order, local rank i of every node
    const int node = host.nodeOf[rank], localIndex = host.where[rank] - host.nodeStart[node];
    st.hierarchy = HierarchyGroups{st.layoutInts + host.nodeStart[node], m, localIndex,
                                   st.layoutInts + railsAt + size_t(localIndex) * size_t(host.nnodes), host.nnodes, node};
  }
  CHORUS_CUDACHECK(cudaMemcpyAsync(st.layoutInts, ints.data(), ints.size() * sizeof(int), cudaMemcpyHostToDevice,
                                   st.setupStream));
  CHORUS_CUDACHECK(cudaMemcpyAsync(st.nodes, &dev, sizeof dev, cudaMemcpyHostToDevice, st.setupStream));
  CHORUS_CUDACHECK(cudaStreamSynchronize(st.setupStream));  // before `ints` goes
  return Status::Ok;
}

// Collective over ctx.comm: every rank sets up, publishes its IPC handle in
// a refreshed PeerInfo table, maps its peers on its node and links those on
// other nodes (the device proxy, cuda_net.h).  Every rank learns whether
// any failed, so nobody waits for a peer that gave up.
Status createState(PeerLinks &ctx, CudaAttachment &cuda, const NodeLayout *nodes, const DeviceWiring &wiring) {
  // The channel count fixes every rank's FIFO layout: agreed, the smallest
  // any rank's GPU can hold.
  int device = 0, sms = 0;
  double mpsShare = 100;
  if (cudaGetDevice(&device) != cudaSuccess) cudaGetLastError();
  const int mine = residentChannels(device, &sms, &mpsShare);
  // With it, the build's FIFO geometry: ranks that index each other's
  // FIFOs by different slot sizes or counts (two builds in one job) would
  // read each other's data as garbage.  Min and max of a digest in the same
  // reduction (the max as the min of its negation).
  const int64_t geometry = int64_t(kCudaSlotBytes) * 1000003 + int64_t(kCudaLLSlotBytes) * 131 + int64_t(kCudaSlots) * 10007 +
                           int64_t(kCudaThreads) * 101 + int64_t(kCudaMaxChannels) + int64_t(sizeof(FifoEnd)) * 7;
  const int64_t agree[3] = {mine, geometry, -geometry};
  int64_t agreed[3] = {0, 0, 0};
  CHORUS_MPICHECK(MPI_Allreduce(agree, agreed, 3, MPI_INT64_T, MPI_MIN, ctx.comm));
  if (agreed[1] != -agreed[2]) {
    CHORUS_WARN("rank %d: the device FIFO geometry differs between ranks (here %d slots of %zu bytes, LL's of %zu, %d "
                "threads and up to %d channels per collective): every rank must run the same Chorus build",
                ctx.rank, kCudaSlots, kCudaSlotBytes, kCudaLLSlotBytes, kCudaThreads, kCudaMaxChannels);
    return Status::InvalidArgument;
  }
  const int fit = int(agreed[0]);
  auto *st = new CudaState;
  st->nchannels = wiring.channels;
  if (fit < st->nchannels) {
    if (mine == fit)
      CHORUS_INFO(kSubsysCuda, "rank %d: %d channels, not %d: the GPU runs %d blocks at once (%d multiprocessors%s)",
                  ctx.rank, fit, st->nchannels, fit, sms,
                  mpsShare < 100 ? ", of which CUDA_MPS_ACTIVE_THREAD_PERCENTAGE gives this process a share" : "");
    else
      CHORUS_INFO(kSubsysCuda, "rank %d: %d channels, not %d: another rank's GPU runs no more blocks at once",
                  ctx.rank, fit, st->nchannels);
    st->nchannels = fit;
  }
  PeerInfo self = ctx.peers[ctx.rank];
  Status s = localSetup(ctx, *st, self);
  int good = s == Status::Ok, allGood = 0;
  MPI_Allreduce(&good, &allGood, 1, MPI_INT, MPI_MIN, ctx.comm);
  if (allGood) {
    CHORUS_MPICHECK(MPI_Allgather(&self, sizeof self, MPI_BYTE, ctx.peers.data(), sizeof self, MPI_BYTE, ctx.comm));
    // Collective (every rank enters): the links to other nodes.
    if (ctx.nnodes > 1 && !nodes) {
      s = Status::InternalError;  // (collectives.cc passes the layout across nodes)
    } else if (ctx.nnodes > 1) {
      // (Agreed channel count: the same sets on every rank.)
      st->netEveryPeer = wiring.everyPeer;
      const std::vector<int> linked =
          st->netEveryPeer ? std::vector<int>() : cudaStreamingPeers(*nodes, ctx.rank, st->nchannels);
      s = cudaNetCreate(ctx, st->nchannels, linked, &st->net);
    }
    if (s == Status::Ok) s = cudaIpcConnect(*st->ipc, ctx.peers.data(), ctx.nranks, ctx.rank);
    reportGpuSharing(ctx.peers.data(), ctx.nranks, ctx.rank);
    if (s == Status::Ok) s = buildChannels(ctx, *st);
    if (s == Status::Ok && nodes) s = copyNodeLayout(*nodes, ctx.rank, *st);
    if (s == Status::Ok && st->net) s = cudaNetStart(*st->net);
    good = s == Status::Ok;
    MPI_Allreduce(&good, &allGood, 1, MPI_INT, MPI_MIN, ctx.comm);
  }
  if (!allGood) {
    cudaStateFree(st);
    return s != Status::Ok ? s : Status::Aborted;
  }
  cuda.state = st;
  if (st->net)
    CHORUS_INFO(kSubsysCuda, "rank %d: device buffers cross nodes on the kernels, %d channels, Simple protocol, "
                "slots in %s and a proxy thread over UCX%s", ctx.rank, st->nchannels,
                cudaNetGdr(*st->net) ? "device memory (GPUDirect RDMA)" : "pinned host memory (no GPUDirect RDMA)",
                st->netEveryPeer ? ""
                                 : "; linked to the streaming algorithms' peers only (CHORUS_NET_DEVICE_LINKS): no "
                                   "one-shot across nodes, bcast and reduce trees over the rootless trees' links, "
                                   "the alltoall staged through host memory");
  CHORUS_INFO(kSubsysCuda,
              "CUDA executor ready on GPU %d: %d channels x %d slots of %zu bytes (LL: %zu) per peer, %zu KiB of FIFOs",
              st->device, st->nchannels, kCudaSlots, kCudaSlotBytes, kCudaLLSlotBytes,
              fifoRegionBytes(*st, ctx.nodeSize) / 1024);
  return Status::Ok;
}

Proto pickProto(const CudaState &st, size_t bytes) {
  // An LL sender posts no tail (its receivers poll the lines' flags), and
  // the tail is what the device proxy watches: Simple across nodes (where
  // LL would also double the bytes on the wire).
  if (st.net) return Proto::Simple;
  const char *forced = paramString(ParamId::Proto);
  if (!strcmp(forced, "simple")) return Proto::Simple;
  if (!strcmp(forced, "ll")) return Proto::LL;
  return bytes <= kLLMaxBytes ? Proto::LL : Proto::Simple;
}

// The device's failure record, if a kernel failed.  `aborted` is read with
// acquire ordering and the fields after it: the device stores them before
// a fence.acq_rel.sys and `aborted` (recordFailure in prims_device.cuh), a
// release pattern this load synchronizes with.
bool deviceFailed(const CudaState &st, DevError *out) {
  if (!__atomic_load_n(&st.errHost->aborted, __ATOMIC_ACQUIRE)) return false;
  const volatile DevError *e = st.errHost;
  out->aborted = 1;
  out->status = e->status;
  out->channel = e->channel;
  out->peer = e->peer;
  out->forData = e->forData;
  out->pad = 0;
  out->target = e->target;
  return true;
}

// Order this launch after the communicator's previous one, whatever stream
// either went to.  Always, not only when the stream differs from the last
// one: a handle may stand for another stream by now (cudaStreamPerThread
// from another host thread, a stream destroyed and its handle reused), and
// a wait on the stream's own last event costs nothing.  Under capture the
// wait and the record become external event nodes, bound at each replay:
// the replay waits for the launch before it (eager or another graph's) and
// the launches after it wait for the replay.
Status orderAfterPrevious(const CudaState &st, cudaStream_t stream, bool capturing) {
  CHORUS_CUDACHECK(cudaStreamWaitEvent(stream, st.lastLaunch, capturing ? cudaEventWaitExternal : cudaEventWaitDefault));
  return Status::Ok;
}
Status markLaunch(const CudaState &st, cudaStream_t stream, bool capturing) {
  CHORUS_CUDACHECK(cudaEventRecordWithFlags(st.lastLaunch, stream,
                                            capturing ? cudaEventRecordExternal : cudaEventRecordDefault));
  return Status::Ok;
}

void describeFailure(const PeerLinks &ctx, const CollRequest &req, const DevError &e, char *text, size_t len) {
  snprintf(text, len,
           "%s on device buffers: rank %d (channel %d) timed out after %lld s (CHORUS_TIMEOUT) waiting for rank %d %s "
           "(message %llu of that FIFO)",
           collName(req.coll), ctx.rank, int(e.channel), (long long)paramInt(ParamId::Timeout), int(e.peer),
           e.forData ? "to send data" : "to free a FIFO slot", (unsigned long long)e.target);
}

// copyDataBlocks (core/datatype.h) on the device, ordered on `stream`: one
// strided copy per data block.
Status copyDataBlocksAsync(const void *from, void *to, size_t count, size_t extent, const TypeLayout &layout,
                           cudaStream_t stream) {
  for (int b = 0; b < layout.nblocks; ++b) {
    const TypeLayout::Block &blk = layout.blocks[b];
    CHORUS_CUDACHECK(cudaMemcpy2DAsync(static_cast<char *>(to) + blk.offset, extent,
                                       static_cast<const char *>(from) + blk.offset, extent, blk.length, count,
                                       cudaMemcpyDeviceToDevice, stream));
  }
  return Status::Ok;
}

}  // namespace

namespace {

// Waits for the communicator's last launch (enqueued calls; a graph
// replayed later records the event too), which uses everything freed
// after it.  Kernels end by themselves at the latest after CHORUS_TIMEOUT.
void waitForLastLaunch(CudaState &st) {
  if (st.lastLaunch) CHORUS_CUDACHECK_IGNORE(cudaEventSynchronize(st.lastLaunch));
  if (st.setupStream) CHORUS_CUDACHECK_IGNORE(cudaStreamSynchronize(st.setupStream));
}

}  // namespace

void cudaStateFree(CudaState *st, bool keepFifos) {
  if (!st) return;
  waitForLastLaunch(*st);
  cudaNetFree(st->net);  // (its thread stops first)
  if (st->lastLaunch) devicePoolUntrackLaunches(st->lastLaunch);
  cudaIpcFree(st->ipc);
  if (!keepFifos) devicePoolGive(st->fifos);
  devicePoolGive(st->devEnds);
  devicePoolGive(st->devChannels);
  devicePoolGive(st->scratch);
  devicePoolGive(st->layoutInts);
  devicePoolGive(st->nodes);
  devicePoolGive(st->abortFlag);
  devicePoolGive(st->errHost);
  if (st->lastLaunch) cudaEventDestroy(st->lastLaunch);
  if (st->setupStream) cudaStreamDestroy(st->setupStream);
  cudaGetLastError();
  delete st;
}

// Teardown (N1 of issue 29): a rank's FIFO memory is written by its peers'
// kernels and read through their mappings.  Freed (or handed to the next
// communicator by the pool) while a peer's last kernel still runs, a
// trailing tail or LL store would land in memory that is no longer this
// communicator's: a fresh FIFO header with a stray tail fakes posted
// messages.  So every rank first waits for its own last launch and closes
// its mappings of its peers' memory (here), then enters the communicator's
// release barrier (comm/context.cc); memory goes back only once every rank
// has passed that point.
void cudaBeginFree(CudaAttachment &cuda) {
  if (!cuda.state || cuda.released) return;
  cuda.released = true;
  waitForLastLaunch(*cuda.state);
  if (cuda.state->net) cudaNetClosing(*cuda.state->net);
  if (cuda.state->ipc) cudaIpcUnmapPeers(*cuda.state->ipc);
}

void cudaDetach(CudaAttachment &cuda, bool peersDone) {
  if (cuda.state) {
    cudaBeginFree(cuda);
    if (!peersDone)
      CHORUS_WARN("the other ranks were not seen to release the communicator: its device FIFOs are left allocated, "
                  "since a peer's kernel may still write into them");
  }
  cudaStateFree(cuda.state, !peersDone);
  cuda.state = nullptr;
  cuda.released = false;
  cudaStagingFree(cuda);
}

Status cudaExecute(PeerLinks &ctx, CudaAttachment &cuda, const CollRequest &req, CUstream_st *streamArg,
                   bool blocking, const NodeLayout *nodes, const DeviceWiring &wiring, char *errText,
                   size_t errLen) {
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(streamArg);
  errText[0] = '\0';
  if (!cuda.state) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (stream && cudaStreamIsCapturing(stream, &capture) == cudaSuccess &&
        capture != cudaStreamCaptureStatusNone) {
      snprintf(errText, errLen,
               "the first call on device buffers sets up this communicator's GPU resources and cannot be captured "
               "into a CUDA graph: run one collective on device buffers before capturing");
      return Status::Unsupported;
    }
    cudaGetLastError();
    Status s = createState(ctx, cuda, nodes, wiring);
    if (s != Status::Ok) {
      snprintf(errText, errLen, "could not set up the CUDA executor on this communicator (WARN lines above say why)");
      return s;
    }
  }
  CudaState &st = *cuda.state;
  DevError failure;
  if (deviceFailed(st, &failure)) {
    describeFailure(ctx, req, failure, errText, errLen);
    return Status::Aborted;
  }
  Status netStatus = Status::Ok;
  if (st.net && cudaNetFailed(*st.net, &netStatus, errText, errLen)) return netStatus;
  if (req.coll == Coll::Barrier) return Status::InternalError;  // the API runs barriers on the host
  // Links to the streaming peers only (cuda/device_links.h): the planner
  // and the staging keep the algorithms that reach beyond them away; a
  // kernel sent there would follow null FIFO pointers.  (Bcast and reduce
  // trees keep to those links there: CollArgs::rootedTreeOnLinks.)
  const Algo algo = Algo(req.algo);
  if (st.net && !st.netEveryPeer && (algo == Algo::Direct || algo == Algo::Pairwise)) {
    snprintf(errText, errLen, "the device links reach only the streaming algorithms' peers on other nodes, not %s's "
             "(CHORUS_NET_DEVICE_LINKS)", algoName(algo));
    return Status::InternalError;
  }

  const bool bytesOnly = req.coll == Coll::Bcast || req.coll == Coll::Allgather || req.coll == Coll::Alltoall;
  const size_t elemSize = bytesOnly ? 1 : req.elemSize;
  const size_t count = bytesOnly ? req.count * req.elemSize : req.count;
  const size_t bytes = count * elemSize;

  LaunchRequest lr;
  lr.coll = req.coll;
  lr.type = bytesOnly ? DataType::Bytes : req.type;
  lr.op = req.op;
  // An LL line carries 8 data bytes; wider elements (16-byte MINLOC pairs)
  // have Simple kernels only (kernel_table.h).
  lr.proto = elemSize > 8 ? Proto::Simple : pickProto(st, bytes);
  const size_t capacity = lr.proto == Proto::LL ? kCudaLLSlotBytes / 2 : kCudaSlotBytes;
  // Channels as if LL's slots were Simple's size (its lines carry half of
  // a slot's bytes): its smaller slots are memory saved, not a reason to
  // spread a small message wider.
  const size_t nominalCapacity = lr.proto == Proto::LL ? kCudaSlotBytes / 2 : kCudaSlotBytes;
  const int nch = channelsForCall(st, wiring, req.coll, algo, bytes, nominalCapacity);
  lr.nblocks = nch;
  DevCollArgs &a = lr.args;
  a.sendbuf = req.sendbuf;
  a.recvbuf = req.recvbuf;
  // A type with gaps (MPI_DOUBLE_INT...): the kernel writes whole elements
  // into stream-ordered staging; only the data blocks reach recvbuf.
  const size_t stagedBytes = req.gaps ? receivedBytes(req, ctx.rank, ctx.nranks) : 0;
  void *staging = nullptr;
  if (stagedBytes) {
    cudaError_t e = cudaMallocAsync(&staging, stagedBytes, stream);
    if (e != cudaSuccess) {
      snprintf(errText, errLen, "no device memory for %zu bytes of staging for a datatype with gaps: %s", stagedBytes,
               cudaGetErrorString(e));
      return Status::CudaError;
    }
    a.recvbuf = staging;
    if (req.coll == Coll::Bcast) a.sendbuf = staging;  // a non-root only receives
  }
  a.count = count;
  a.sliceElems = capacity / elemSize;
  a.slotBytes = slotBytesOf(int(lr.proto));
  a.channels = st.devChannels + (lr.proto == Proto::LL ? st.nchannels : 0);
  a.error = st.errDev;
  a.abortFlag = st.abortFlag;
  a.netAbort = st.net ? cudaNetAbortWord(*st.net) : nullptr;
  a.nodes = st.nodes;
  a.hierarchy = st.hierarchy;
  a.ringOrder = st.nodes ? st.layoutInts : nullptr;
  a.ringWhere = st.nodes ? st.layoutInts + size_t(st.nchannels) * size_t(ctx.nranks) : nullptr;
  a.timeoutNs = st.timeoutNs;
  a.llFlagMask = st.llFlagMask;
  a.root = req.root;
  a.rank = ctx.rank;
  a.nranks = ctx.nranks;
  a.nchannels = nch;
  a.algo = int(req.algo);
  a.phase = 0;
  a.rootedTreeOnLinks = st.net && !st.netEveryPeer;

  int cur = -1;
  CHORUS_CUDACHECK(cudaGetDevice(&cur));
  if (cur != st.device) {
    snprintf(errText, errLen, "the current CUDA device is %d but this communicator's GPU resources live on device %d",
             cur, st.device);
    return Status::InvalidArgument;
  }
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  CHORUS_CUDACHECK(cudaStreamIsCapturing(stream, &capture));
  const bool capturing = capture != cudaStreamCaptureStatusNone;
  Status s = Status::Ok;
  {
    // No pool block is freed between this launch and its event's record
    // (device_pool.h): the free would wait for this kernel.
    const auto guard = devicePoolLaunchGuard();
    s = orderAfterPrevious(st, stream, capturing);
    if (s == Status::Ok) s = launchCollective(lr, stream);
    if (stagedBytes) {
      if (s == Status::Ok) s = copyDataBlocksAsync(staging, req.recvbuf, stagedBytes / req.elemSize, req.elemSize,
                                                   *req.gaps, stream);
      cudaFreeAsync(staging, stream);
    }
    if (s == Status::Ok) s = markLaunch(st, stream, capturing);
  }
  if (s == Status::Ok && st.net) cudaNetKick(*st.net);
  if (s == Status::Unsupported) {
    snprintf(errText, errLen,
             "no kernel for %s on %s with %s in this build (configured with --enable-cuda-dev-build?)",
             collName(req.coll), dataTypeName(req.type), redOpName(req.op));
    return s;
  }
  if (s != Status::Ok) {
    snprintf(errText, errLen, "kernel launch failed (the WARN line above names the CUDA error)");
    return s;
  }
  CHORUS_TRACE(kSubsysCuda, "%s: %zu B on %d channel(s) of %d threads, %s protocol", collName(req.coll), bytes, nch,
               kCudaThreads, lr.proto == Proto::LL ? "LL" : "Simple");
  if (!blocking) return Status::Ok;
  cudaError_t e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) {
    snprintf(errText, errLen, "collective kernel failed: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
    CHORUS_WARN("%s", errText);
    return Status::CudaError;
  }
  if (deviceFailed(st, &failure)) {
    describeFailure(ctx, req, failure, errText, errLen);
    CHORUS_WARN("%s", errText);
    return Status::Timeout;
  }
  // The proxy stopped the kernel: a peer on another node failed.
  if (st.net && cudaNetFailed(*st.net, &netStatus, errText, errLen)) return netStatus;
  return Status::Ok;
}

}  // namespace chorus
