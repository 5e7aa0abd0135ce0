#include "sim/sim_model.h"

#include <algorithm>
#include <cstring>
#include <queue>
#include <string>
#include <unordered_map>

#include "coll/allreduce_hierarchical.h"
#include "coll/dispatch.h"
#include "coll/host_executor.h"
#include "cuda/device_channel.h"
#include "cuda/device_links.h"
#include "core/params.h"
#include "transport/fifo.h"

namespace chorus {
namespace sim {

// ---- machines -------------------------------------------------------------------

namespace {

// Microseconds to move `bytes` at `gbPerS` (GB/s: 1e3 bytes a microsecond).
double usAt(double bytes, double gbPerS) { return bytes / (gbPerS * 1e3); }

Machine cpuMachine(std::string name, std::string description, int ranks, LinkModel net, int nics) {
  Machine m;
  m.name = std::move(name);
  m.description = std::move(description);
  m.ranksPerNode = ranks;
  // Shared memory: a memcpy into the receiver's slot and one out of it
  // (~10 GB/s a core), half a microsecond from post to poll, and the
  // planner's kShmMessageEndUs at each end.
  m.intra = {0.5, 10, kShmMessageEndUs};
  m.fabric.net = net;
  m.fabric.nicsPerNode = nics;
  m.reduceGbPerS = 8;
  m.copyGbPerS = 10;
  m.sharedMemory = true;
  // A full FIFO's slot and slots as the library sizes them (its settings
  // CHORUS_SHM_SLOT_SIZE and CHORUS_SHM_SLOTS, their defaults unless set).
  m.sliceBytes = m.allPeerSliceBytes = size_t(paramInt(ParamId::ShmSlotSize));
  m.fifoSlots = int(paramInt(ParamId::ShmSlots));
  return m;
}

Machine gpuMachine(std::string name, std::string description, int gpus, double nvlinkGbPerS, LinkModel net,
                   int nics, double hostGbPerS) {
  Machine m;
  m.name = std::move(name);
  m.description = std::move(description);
  m.ranksPerNode = gpus;
  // NVLink through NVSwitch: one direction of a GPU's links, ~1 us a hop
  // for a kernel's store to be seen; the fold runs at HBM speed.
  m.intra = {1.0, nvlinkGbPerS, 0.2};
  m.fabric.net = net;
  m.fabric.nicsPerNode = nics;
  m.reduceGbPerS = 1000;
  m.copyGbPerS = m.localCopyGbPerS = 1500;
  m.hostCopyGbPerS = hostGbPerS;
  m.gpu = true;
  m.sharedMemory = false;
  // (The slice is a full slot on each of the kernels' channels, seen as
  // one channel of their sum: sliceBytesOf.)
  m.fifoSlots = kCudaSlots;
  return m;
}

std::vector<Machine> makePresets() {
  std::vector<Machine> p;
  // 400 Gb/s InfiniBand NDR: 50 GB/s a direction, ~2 us NIC to NIC
  // through one switch, ~1 us of proxy and verbs work per message (the
  // planner's kRdmaLatencyUs and kRdmaMessageEndUs).
  const LinkModel ndr400{kRdmaLatencyUs, 50, kRdmaMessageEndUs}, hdr200{kRdmaLatencyUs, 25, kRdmaMessageEndUs},
      edr100{kRdmaLatencyUs, 12.5, kRdmaMessageEndUs};
  // A GPU's link to host memory: PCIe 5 x16 (64 GB/s a direction) on
  // H100, PCIe 4 x16 (32) on A100, NVLink-C2C (450) on GH200.
  p.push_back(gpuMachine("8xh100", "8 H100 SXM on NVSwitch (NVLink 4: 450 GB/s a direction), 8 NICs of 400 Gb/s",
                         8, 450, ndr400, 8, 64));
  p.push_back(gpuMachine("4xgh200", "4 GH200 on NVLink 4 (450 GB/s a direction), 4 NICs of 400 Gb/s", 4, 450,
                         ndr400, 4, 450));
  p.push_back(gpuMachine("8xa100", "8 A100 SXM on NVSwitch (NVLink 3: 300 GB/s a direction), 4 NICs of 200 Gb/s",
                         8, 300, hdr200, 4, 32));
  p.push_back(cpuMachine("2socket", "2-socket CPU node, 64 ranks on its cores, one 100 Gb/s NIC", 64, edr100, 1));
  // This project's machines, played nodes over UCX tcp on loopback: the
  // constants to be calibrated against perf/*_perf (perf/RESULTS.md).
  Machine here = cpuMachine("played", "this project's 2-core machine, played nodes over UCX tcp", 2,
                            LinkModel{10.0, 1.9, 2.5}, 1);
  here.intra = {0.25, 20, 0.05};
  here.reduceGbPerS = 25;
  here.copyGbPerS = 20;
  // memcpy of 64 KiB to 1 MiB on one of its cores: 102 to 46 GB/s.
  here.localCopyGbPerS = 50;
  // Its 2 cores, shared by the ranks of every played node; the wait for a
  // crowded receiver is the planner's measured one (tuner_model.cc, kShmLink's
  // crowdedUs: 2 nodes x 2 ranks, 4 KiB, 46 us for the hierarchy's four
  // hops against 18 for recursive doubling's two).
  here.fabric.machineCores = 2;
  here.fabric.crowdedUs = kCrowdedHopUs;
  p.push_back(here);
  return p;
}

}  // namespace

const std::vector<Machine> &machinePresets() {
  static const std::vector<Machine> presets = makePresets();
  return presets;
}

const Machine *findPreset(const std::string &name) {
  for (const Machine &m : machinePresets())
    if (m.name == name) return &m;
  return nullptr;
}

Machine hostViewOf(const Machine &gpuNode) {
  Machine host = cpuMachine(gpuNode.name, gpuNode.description, gpuNode.ranksPerNode, gpuNode.fabric.net,
                            gpuNode.fabric.nicsPerNode);
  host.fabric = gpuNode.fabric;
  return host;
}

namespace {

// What comm/context.cc builds for the layout: rings through the nodes one
// after another (ranks in rank order inside a node), the node layout of the
// trees, the hierarchy's groups.
struct LayoutTables {
  std::vector<int> order, where, nodeStart, nodeOf;
  std::vector<std::vector<int>> nodeRanks, crossRanks;
  NodeLayout layout{};
  explicit LayoutTables(const Layout &l) {
    const int n = l.nranks();
    for (int r = 0; r < n; ++r) order.push_back(r), where.push_back(r), nodeOf.push_back(l.nodeOf(r));
    for (int node = 0; node <= l.nodes; ++node) nodeStart.push_back(std::min(n, node * l.ranksPerNode));
    layout = {n, l.nodes, order.data(), where.data(), nodeStart.data(), nodeOf.data()};
    nodeRanks.resize(size_t(l.nodes));
    for (int r = 0; r < n; ++r) nodeRanks[size_t(l.nodeOf(r))].push_back(r);
    crossRanks.resize(size_t(l.ranksPerNode));
    for (int i = 0; i < l.ranksPerNode; ++i)
      for (int node = 0; node < l.nodes; ++node) crossRanks[size_t(i)].push_back(node * l.ranksPerNode + i);
  }
};

}  // namespace

// ---- the planner's view ------------------------------------------------------------

namespace {

bool kernelsReachEveryPeer(const Layout &l) { return wiringOf(l).everyPeer; }

}  // namespace

// Kept for the last layout asked: the streaming peers' count scans every
// rank, and a run asks for one layout many times over.
DeviceWiring wiringOf(const Layout &l) {
  const char *mode = paramString(ParamId::NetDeviceLinks);
  static Layout last{0, 0};
  static std::string lastMode;
  static DeviceWiring wiring{1, true};
  if (last.nodes != l.nodes || last.ranksPerNode != l.ranksPerNode || lastMode != mode) {
    const LayoutTables tables(l);
    wiring = cudaDeviceWiring(tables.layout, mode);
    last = l;
    lastMode = mode;
  }
  return wiring;
}

int busiestLinkedRankOf(const Layout &l) {
  const DeviceWiring wiring = wiringOf(l);
  if (l.nodes < 2 || wiring.everyPeer) return 0;
  const LayoutTables tables(l);
  return cudaBusiestStreamingRank(tables.layout, wiring.channels).rank;
}

PlanShape planShapeOf(const Machine &m, const Layout &l) {
  PlanShape shape;
  shape.nranks = l.nranks();
  shape.nnodes = l.nodes;
  shape.maxNodeRanks = l.ranksPerNode;
  shape.equalNodes = l.nodes > 1 && l.ranksPerNode > 1;
  shape.nodeTreeDepth = nodeTreeDepthOf(l.nodes);
  std::vector<int> nodeOf(size_t(l.nranks()));
  for (int r = 0; r < l.nranks(); ++r) nodeOf[size_t(r)] = l.nodeOf(r);
  shape.doublingNetRounds = doublingNetRoundsOf(nodeOf.data(), l.nranks());
  shape.kernelsEveryPeer = kernelsReachEveryPeer(l);
  shape.kernelsRootedTree = rootedNodeTreeCostOf(l.nodes, !shape.kernelsEveryPeer);
  shape.hostRootedTree = rootedNodeTreeCostOf(l.nodes, false);
  shape.cpuShare = m.cpuShareOf(l.nranks());  // as comm/context.cc: ranks on the machine per core
  shape.singleCopy = false;  // cross-memory attach is a runtime permission (ptrace scope): not assumed
  // Nodes of their own: the planner knows their NICs (comm/context.cc,
  // packedNetwork: a GPU node's for its calls staged through host memory);
  // played ones share the machine's loopback, which it has measured.
  // Their NICs are RDMA ones; the planner then takes kRdmaLatencyUs, as
  // the library would, whatever latency the fabric is given here.
  if (l.nodes > 1 && m.fabric.machineCores == 0)
    setKnownNetwork(shape, m.fabric.net.gbPerS * 1000.0, m.fabric.net.gbPerS * 1000.0 * m.fabric.nicsPerNode, true);
  // GPU nodes say their NICs' sum and their GPUs' links, for the kernels'
  // one-shot and allreduce (coll/tuner_kernels.cc).
  if (l.nodes > 1 && m.fabric.machineCores == 0 && m.gpu) {
    DeviceWiring wiring = wiringOf(l);
    setKernelsNetwork(shape, wiring, m.fabric.net.gbPerS * 1000.0 * m.fabric.nicsPerNode, m.fabric.net.gbPerS * 1000.0,
                      m.intra.gbPerS * 1000.0);
  }
  return shape;
}

size_t sliceBytesOf(const Machine &m, const Layout &l) {
  return m.gpu ? kCudaSlotBytes * size_t(wiringOf(l).channels) : m.sliceBytes;
}

int rootedTreeChannelsOf(const Machine &m, const Layout &l) {
  if (!m.gpu || l.nodes < 2 || m.fabric.machineCores > 0) return 0;
  return cudaRootedTreeChannels(m.fabric.net.gbPerS * 1000.0, wiringOf(l).channels);
}

Engine engineOf(const Machine &m, const Layout &l) {
  // Across nodes as on one, unless CHORUS_NET_DEVICE=staged (read as the
  // library reads it) sends device buffers through the host engine.
  if (!m.gpu) return Engine::Host;
  return l.nodes > 1 && strcmp(paramString(ParamId::NetDevice), "staged") == 0 ? Engine::Host : Engine::Kernels;
}

Engine engineOf(const Machine &m, const Layout &l, Coll coll) {
  const Engine engine = engineOf(m, l);
  if (engine == Engine::Kernels && coll == Coll::Alltoall && l.nodes > 1 && !kernelsReachEveryPeer(l))
    return Engine::Host;
  return engine;
}

int rotatedRingChannels(const Machine &m, const Layout &l, Algo algo) {
  if (engineOf(m, l) != Engine::Kernels || l.nodes < 2 || (algo != Algo::Ring && algo != Algo::Chain)) return 1;
  return wiringOf(l).channels;
}

bool algorithmApplies(const Machine &m, const Layout &l, Coll coll, Algo algo) {
  const int n = l.nranks();
  const bool severalNodes = l.nodes > 1;
  const bool kernels = engineOf(m, l) == Engine::Kernels;
  // The kernels' links to a few remote peers only (cuda/device_links.h):
  // no one-shot (the alltoall's pairwise exchange is the same schedule,
  // staged through host memory in the library); the rooted trees keep to
  // the rootless trees' links (recordRank).
  const bool somePeers = kernels && !kernelsReachEveryPeer(l);
  const bool rooted = coll == Coll::Bcast || coll == Coll::Reduce;
  if (n == 1) return algo == Algo::Local;
  switch (algo) {
    case Algo::Ring:
      return coll == Coll::Allreduce || coll == Coll::Allgather || coll == Coll::ReduceScatter;
    case Algo::Chain:
      return coll == Coll::Bcast || coll == Coll::Reduce;
    case Algo::Direct:
      return n <= kMaxDirectRanks && coll != Coll::Alltoall && !somePeers;
    case Algo::Tree:  // (the kernels have the node trees too)
      return coll == Coll::Allreduce || (severalNodes && rooted);
    case Algo::RecursiveDoubling:
      return !kernels && isPowerOfTwo(n) &&
             (coll == Coll::Allreduce || coll == Coll::Allgather || coll == Coll::ReduceScatter);
    case Algo::Hierarchical:  // (on the kernels too, rail-aligned)
      return coll == Coll::Allreduce && l.nodes > 1 && l.ranksPerNode > 1;
    case Algo::Publish:
      return !kernels && m.sharedMemory && !severalNodes &&
             (coll == Coll::Allreduce || coll == Coll::Allgather || coll == Coll::Bcast);
    case Algo::Pairwise:  // (not past the links' budget, where the planner never takes it)
      return coll == Coll::Alltoall && allPeerLinksFit(planShapeOf(m, l));
    case Algo::Bruck:  // host memory only: on GPUs where the call is staged (simulateCall)
      return coll == Coll::Alltoall && (!m.gpu || engineOf(m, l, coll) == Engine::Host);
    case Algo::Dissemination:
      return coll == Coll::Barrier;
    default:
      return false;
  }
}

std::vector<Algo> candidatesFor(const Machine &m, const Layout &l, Coll coll) {
  std::vector<Algo> out;
  for (Algo a : {Algo::Local, Algo::Ring, Algo::Chain, Algo::Direct, Algo::Tree, Algo::RecursiveDoubling,
                 Algo::Hierarchical, Algo::Publish, Algo::Pairwise, Algo::Bruck, Algo::Dissemination})
    if (algorithmApplies(m, l, coll, a)) out.push_back(a);
  return out;
}

// ---- recording -----------------------------------------------------------------------

uint64_t Schedules::ops() const {
  uint64_t n = 0;
  for (const RankSchedule &r : ranks) n += r.ops.size();
  return n;
}

uint64_t Schedules::calls() const {
  uint64_t n = 0;
  for (const RankSchedule &r : ranks) n += r.calls();
  return n;
}

namespace {

// The buffers are never read: distinct addresses far apart, so that the
// templates' in-place tests see what a real call would.
template <typename T>
T *fakeBuffer(int which) {
  return reinterpret_cast<T *>(uintptr_t(which) << 40);
}


template <typename T>
void recordRank(const Machine &m, const Layout &l, const LayoutTables &t, Coll coll, Algo algo, size_t count,
                int rank, RankSchedule &out) {
  const int n = l.nranks();
  CollArgs a;
  a.sendbuf = fakeBuffer<T>(1);
  a.recvbuf = fakeBuffer<T>(2);
  a.count = count;
  a.root = 0;
  a.rank = rank;
  a.nranks = n;
  const bool rootedTree = algo == Algo::Tree && (coll == Coll::Bcast || coll == Coll::Reduce);
  const bool allPeers = algo == Algo::Direct || algo == Algo::Pairwise || algo == Algo::Bruck ||
                        algo == Algo::Dissemination ||
                        algo == Algo::RecursiveDoubling || rootedTree;
  // The all-peer algorithms' slice: the small FIFOs' slot once every FIFO
  // at full size would take more than the library allows.
  // (A bcast or reduce tree of the kernels across nodes runs on fewer
  // channels: rootedTreeChannelsOf.)
  const int treeChannels = rootedTree ? rootedTreeChannelsOf(m, l) : 0;
  const size_t slice = treeChannels > 0 ? kCudaSlotBytes * size_t(treeChannels) : sliceBytesOf(m, l);
  const size_t allPeerSlice = m.gpu ? slice
                              : everyFifoFullFits(n, FifoShape{m.sliceBytes, m.fifoSlots}) ? m.allPeerSliceBytes
                                                                                           : kSmallFifoSlotBytes;
  a.sliceElems = std::max<size_t>(1, (allPeers ? allPeerSlice : slice) / sizeof(T));
  if (l.nodes > 1) {
    a.ringOrder = t.order.data();
    a.ringWhere = t.where.data();
    a.nodes = &t.layout;
    // As the kernels run bcast and reduce trees there (cuda_executor.cc).
    a.rootedTreeOnLinks = engineOf(m, l) == Engine::Kernels && !kernelsReachEveryPeer(l);
  }
  SimChannel ch;
  ch.publish = l.nodes == 1 && m.sharedMemory;
  ch.readPeers = false;
  if (coll == Coll::Allreduce && algo == Algo::Hierarchical && l.nodes > 1 && l.ranksPerNode > 1) {
    const int node = l.nodeOf(rank), local = rank % l.ranksPerNode;
    const HierarchyGroups groups{t.nodeRanks[size_t(node)].data(), l.ranksPerNode, local,
                                 t.crossRanks[size_t(local)].data(), l.nodes, node};
    allreduceHierarchical<T>(a, groups, [&](const int *ranks, bool, auto &&body) {
      ch.group = ranks;
      SimPrims<T> prims(out, ch);
      body(prims);
      ch.group = nullptr;
      return true;
    });
    return;
  }
  if (coll == Coll::Allreduce || coll == Coll::Reduce || coll == Coll::ReduceScatter) {
    SimPrims<T> prims(out, ch);
    runReductionAlgorithm<T>(a, coll, algo, prims, fakeBuffer<T>(3));
  } else {
    SimPrims<uint8_t> prims(out, ch);  // bytes, as the executor moves them (count is in bytes)
    runCopyAlgorithm(a, coll, algo, prims, fakeBuffer<uint8_t>(3));
  }
}

}  // namespace

Schedules recordCollective(const Machine &m, const Layout &l, Coll coll, Algo algo, size_t bytes, size_t elemSize,
                           uint64_t maxOps) {
  Schedules s;
  s.maxOps = maxOps;
  s.ranks.resize(size_t(l.nranks()));
  s.netChannels = rotatedRingChannels(m, l, algo);
  const LayoutTables tables(l);
  const bool reduction = coll == Coll::Allreduce || coll == Coll::Reduce || coll == Coll::ReduceScatter;
  uint64_t recorded = 0;
  for (int r = 0; r < l.nranks(); ++r) {
    RankSchedule &out = s.ranks[size_t(r)];
    if (!reduction) recordRank<uint8_t>(m, l, tables, coll, algo, bytes, r, out);
    else if (elemSize == 8) recordRank<double>(m, l, tables, coll, algo, bytes / 8, r, out);
    else recordRank<float>(m, l, tables, coll, algo, bytes / 4, r, out);
    recorded += out.ops.size();
    if (recorded > maxOps && r + 1 < l.nranks()) {
      s.recordedRanks = r + 1;
      break;
    }
  }
  return s;
}

// ---- the event model ---------------------------------------------------------------

namespace {

// Times by message number, of which only the last few are read again (a
// sender runs at most a FIFO's slots ahead): those below dropBelow's bound
// are let go, so that a link carrying millions of messages holds a few.
class TimeWindow {
 public:
  size_t size() const { return dropped_ + v_.size(); }
  double operator[](size_t k) const { return v_[k - dropped_]; }
  void push_back(double t) { v_.push_back(t); }
  void dropBelow(size_t k) {
    const size_t dead = k > dropped_ ? std::min(k - dropped_, v_.size()) : 0;
    if (dead < 64 || dead * 2 < v_.size()) return;  // amortised: erase when half is dead
    v_.erase(v_.begin(), v_.begin() + ptrdiff_t(dead));
    dropped_ += dead;
  }

 private:
  std::vector<double> v_;
  size_t dropped_ = 0;
};

struct LinkState {
  TimeWindow arrive;  // message k's arrival at the receiver
  TimeWindow freed;   // message k's slot free again, as the sender learns it
  size_t received = 0;
  double busyUntil = 0;        // the link's bytes in flight (a link inside a node)
};

struct Replay {
  const Machine &m;
  const Layout &l;
  const Schedules &s;
  // A rank's first few outgoing links in a short list of its own (a ring,
  // a tree or the hierarchy has up to 4, looked up on every event), the
  // rest (an all-peer algorithm's) in the map.
  // (Reserved whole on first use: they never move.)
  static constexpr size_t kListedLinks = 8;
  std::vector<std::vector<std::pair<int, LinkState>>> listed;  // by sender
  std::unordered_map<uint64_t, LinkState> links;
  std::vector<double> clock;
  std::vector<size_t> next;       // by rank: its current op
  std::vector<uint32_t> repeats;  // by rank: how many of the current op's repeats it has run
  std::vector<char> queued;
  std::vector<double> nicTx, nicRx;              // by node * nics + nic
  // A GPU's NVLink ports, by rank: through NVSwitch its links to every
  // peer share one port's bandwidth each way (a one-shot's fan-in waits on
  // it).  A CPU rank's core copies into its peers' FIFOs one after the
  // other (portTx: a one-shot's n - 1 copies do not run at once); what it
  // copies out or folds is charged as its work.
  std::vector<double> portTx, portRx;
  std::vector<std::vector<double>> published;    // by rank: each slice's publication
  std::vector<std::vector<size_t>> readCount;    // [reader][publisher], built on demand
  SimResult result;
  const double cpuShare;  // ranks per core of a played machine (Machine::machineCores), else 1

  Replay(const Machine &machine, const Layout &layout, const Schedules &schedules)
      : m(machine), l(layout), s(schedules), cpuShare(machine.cpuShareOf(layout.nranks())) {
    const size_t n = size_t(l.nranks());
    clock.assign(n, 0);
    next.assign(n, 0);
    repeats.assign(n, 0);
    listed.resize(n);
    queued.assign(n, 0);
    nicTx.assign(size_t(l.nodes * m.fabric.nicsPerNode), 0);
    nicRx.assign(nicTx.size(), 0);
    portTx.assign(size_t(l.nranks()), 0);
    if (m.gpu) portRx.assign(size_t(l.nranks()), 0);
    published.resize(n);
  }

  LinkState &link(int from, int to) {
    std::vector<std::pair<int, LinkState>> &mine = listed[size_t(from)];
    for (auto &e : mine)
      if (e.first == to) return e.second;
    if (mine.size() < kListedLinks) {
      if (mine.empty()) mine.reserve(kListedLinks);
      mine.emplace_back(to, LinkState());
      return mine.back().second;
    }
    return links[(uint64_t(uint32_t(from)) << 32) | uint32_t(to)];
  }
  bool sameNode(int a, int b) const { return l.nodeOf(a) == l.nodeOf(b); }
  const LinkModel &model(int a, int b) const { return sameNode(a, b) ? m.intra : m.fabric.net; }
  int nicOf(int rank) const {
    const int local = rank % l.ranksPerNode;
    return l.nodeOf(rank) * m.fabric.nicsPerNode + local * m.fabric.nicsPerNode / l.ranksPerNode;
  }
  // Switch hops between two nodes: one on a rail-optimised fabric (or
  // within a leaf), up to 2 * levels - 1 through a fat tree's spine.
  double hopUs(int a, int b) const {
    if (sameNode(a, b) || m.fabric.railOptimised || m.fabric.switchLevels <= 1) return 0;
    return double(2 * m.fabric.switchLevels - 2) * m.fabric.switchHopUs;
  }
  static double transferUs(uint64_t bytes, const LinkModel &lm) { return usAt(double(bytes), lm.gbPerS); }

  // When rank r's next operation can start, or a negative number while it
  // waits for something no rank has done yet.
  double readyAt(int r) {
    const SimOp &op = s.ranks[size_t(r)].ops[next[size_t(r)]];
    double t = clock[size_t(r)];
    if (op.kind == SimOp::ReadPublished) {
      // (Publish rings exist on one node only: n x n counts stay small.)
      if (readCount.empty()) readCount.assign(size_t(l.nranks()), std::vector<size_t>(size_t(l.nranks()), 0));
      const size_t k = readCount[size_t(r)][size_t(op.peer)];
      if (published[size_t(op.peer)].size() <= k) return -1;
      return std::max(t, published[size_t(op.peer)][k] + m.intra.latencyUs);
    }
    if (op.kind != SimOp::Step) return t;
    const int32_t *peers = &s.ranks[size_t(r)].peers[op.peerAt];
    for (int i = 0; i < op.nrecv; ++i) {
      LinkState &in = link(peers[i], r);
      if (in.arrive.size() <= in.received) return -1;
      t = std::max(t, in.arrive[in.received]);
    }
    for (int i = 0; i < op.nsend; ++i) {
      LinkState &out = link(r, peers[op.nrecv + i]);
      const size_t k = out.arrive.size();
      if (k >= size_t(m.fifoSlots)) {
        const size_t needFreed = k - size_t(m.fifoSlots);
        if (out.freed.size() <= needFreed) return -1;
        t = std::max(t, out.freed[needFreed]);
      }
    }
    return t;
  }

  void execute(int r, double start) {
    const SimOp &op = s.ranks[size_t(r)].ops[next[size_t(r)]];
    if (++repeats[size_t(r)] == op.repeat) {
      repeats[size_t(r)] = 0;
      ++next[size_t(r)];
    }
    double end = start;
    switch (op.kind) {
      case SimOp::Publish:
        end = start + (transferUs(op.bytes, m.intra) + m.intra.perMessageUs) * cpuShare;
        published[size_t(r)].push_back(end);
        break;
      case SimOp::ReadPublished:
        ++readCount[size_t(r)][size_t(op.peer)];
        end = start + (transferUs(op.bytes, m.intra) + m.intra.perMessageUs) * cpuShare;
        break;
      case SimOp::ReadPeer:
        end = start + m.intra.latencyUs + transferUs(op.bytes, m.intra) * cpuShare;
        break;
      case SimOp::Step: {
        const int32_t *peers = &s.ranks[size_t(r)].peers[op.peerAt];
        double work = 0;
        for (int i = 0; i < op.nrecv + op.nsend; ++i) work += model(r, peers[i]).perMessageUs;
        // What the receiver does with the slices: folds them into its own,
        // or copies them out of the FIFO (a fold or copy that also sends
        // writes the send slot in the same pass: the link's transfer).
        const double messageWork = work * cpuShare;
        // A CPU rank's pure send is its core's copies, one into each send
        // slot, before it posts any (prims_host.h): into a peer's FIFO in
        // its node (the transfer itself), or into its own slot that the NIC
        // then reads.  (Left to the links, a one-shot allgather's copies
        // in ran beside its copies out on the one core.)
        const bool coreCopiesSends = !m.gpu && !op.nrecv && op.nsend;
        for (int i = 0; coreCopiesSends && i < op.nsend; ++i)
          work += sameNode(r, peers[op.nrecv + i]) ? transferUs(op.bytes, m.intra)
                                                   : usAt(double(op.bytes), m.copyGbPerS);
        if (op.nrecv) work += usAt(double(op.bytes) * op.nrecv, op.reduce ? m.reduceGbPerS : m.copyGbPerS);
        // A copy within the rank's own memory is a memcpy on its core:
        // uncharged, Bruck's packing was free (played, 64 KiB blocks, Bruck
        // 0.84x its measured time on 2x2 and 0.64x on 4 x 1; now 0.94x and
        // 0.75x).
        else if (!op.nsend) work += usAt(double(op.bytes), m.localCopyGbPerS);
        end = start + work * cpuShare;
        // The host primitives post their sends one by one, each after its
        // own end (prims_host.h: a message's post follows its tail store),
        // so the first leaves before the later sends' ends are paid.
        double laterSendEnds = 0;
        for (int i = 0; !m.gpu && i < op.nsend; ++i) laterSendEnds += model(r, peers[op.nrecv + i]).perMessageUs;
        for (int i = 0; i < op.nsend; ++i) {
          // A kernel folds as it stores into the next rank's slot (one
          // pass, reduce_copy.cuh), so its send streams beside the fold and
          // ends no sooner; the host primitives fold, then send.
          const int to = peers[op.nrecv + i];
          double depart;
          if (m.gpu) {
            depart = std::max(start + messageWork, end - transferUs(op.bytes, model(r, to)));
          } else {
            laterSendEnds -= model(r, to).perMessageUs;
            depart = end - laterSendEnds * cpuShare;
          }
          send(r, to, op.bytes, depart, coreCopiesSends);
        }
        for (int i = 0; i < op.nrecv; ++i) {
          LinkState &in = link(peers[i], r);
          ++in.received;
          in.arrive.dropBelow(in.received);
          in.freed.push_back(end + model(peers[i], r).latencyUs + hopUs(peers[i], r));
        }
        break;
      }
    }
    clock[size_t(r)] = end;
  }

  // `copied`: a CPU rank's core has already written the message into a
  // FIFO in its node (its transfer is done).
  void send(int from, int to, uint64_t bytes, double depart, bool copied) {
    LinkState &out = link(from, to);
    const LinkModel &lm = model(from, to);
    const double wire = copied && sameNode(from, to) ? 0.0 : transferUs(bytes, lm);
    ++result.messages;
    double arrival;
    if (sameNode(from, to) && !m.gpu) {
      const double begin = std::max({depart, out.busyUntil, portTx[size_t(from)]});
      out.busyUntil = portTx[size_t(from)] = begin + wire;
      arrival = begin + wire + lm.latencyUs;
    } else {
      // Through a port each way: a NIC, or a GPU's NVLink port in its node.
      const bool net = !sameNode(from, to);
      if (net) {
        ++result.netMessages;
        result.netBytes += bytes;
      }
      if (net && s.netChannels > 1) {
        arrival = sendRotated(from, to, bytes, depart);
      } else {
        double &tx = net ? nicTx[size_t(nicOf(from))] : portTx[size_t(from)];
        double &rx = net ? nicRx[size_t(nicOf(to))] : portRx[size_t(to)];
        const double begin = std::max(depart, tx);
        tx = begin + wire;
        arrival = std::max(begin + wire + lm.latencyUs + hopUs(from, to), rx + wire);
        rx = arrival;
      }
    }
    out.arrive.push_back(arrival + m.fabric.crowdedUs * (cpuShare - 1));
    if (out.arrive.size() > size_t(m.fifoSlots)) out.freed.dropBelow(out.arrive.size() - size_t(m.fifoSlots));
  }

  // A message between nodes of the kernels' rotated rings: channel c's
  // share leaves the sender's node through the NIC of its local rank c - 1
  // and enters the next node through that of local rank c (cuda_executor.cc,
  // copyNodeLayout), so one message of the model's single channel is the
  // channels' shares on up to min(channels, GPUs) NICs at once.
  double sendRotated(int from, int to, uint64_t bytes, double depart) {
    const int k = l.ranksPerNode, channels = s.netChannels;
    const double share = transferUs(bytes, m.fabric.net) / channels;
    double arrival = depart;
    for (int c = 0; c < channels; ++c) {
      double &tx = nicTx[size_t(l.nodeOf(from) * m.fabric.nicsPerNode + (c + k - 1) % k * m.fabric.nicsPerNode / k)];
      double &rx = nicRx[size_t(l.nodeOf(to) * m.fabric.nicsPerNode + c % k * m.fabric.nicsPerNode / k)];
      const double begin = std::max(depart, tx);
      tx = begin + share;
      rx = std::max(begin + share + m.fabric.net.latencyUs + hopUs(from, to), rx + share);
      arrival = std::max(arrival, rx);
    }
    return arrival;
  }

  void run() {
    using Entry = std::pair<double, int>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
    const int n = l.nranks();
    auto offer = [&](int r) {
      if (queued[size_t(r)] || next[size_t(r)] >= s.ranks[size_t(r)].ops.size()) return;
      const double t = readyAt(r);
      if (t < 0) return;
      queued[size_t(r)] = 1;
      ready.push({t, r});
    };
    for (int r = 0; r < n; ++r) offer(r);
    while (!ready.empty()) {
      const auto [t, r] = ready.top();
      ready.pop();
      queued[size_t(r)] = 0;
      const double start = readyAt(r);  // (what it waited for cannot have moved)
      const SimOp op = s.ranks[size_t(r)].ops[next[size_t(r)]];
      execute(r, std::max(start, t));
      offer(r);
      if (op.kind == SimOp::Publish) {
        for (int q = 0; q < n; ++q) offer(q);
      } else if (op.kind == SimOp::Step) {
        const int32_t *peers = &s.ranks[size_t(r)].peers[op.peerAt];
        for (int i = 0; i < op.nrecv + op.nsend; ++i) offer(peers[i]);
      }
    }
    for (int r = 0; r < n; ++r)
      if (next[size_t(r)] < s.ranks[size_t(r)].ops.size()) {
        const uint64_t call = s.ranks[size_t(r)].calls(next[size_t(r)]) + repeats[size_t(r)];
        result.why = "rank " + std::to_string(r) + " waits forever after " + std::to_string(call) +
                     " of its primitive calls: the schedules do not match";
        return;
      }
    result.timeUs = *std::max_element(clock.begin(), clock.end());
    result.ok = true;
  }
};

}  // namespace

namespace {
// What a staged call copies between device and host memory on its path
// (cuda_staged.cc): the largest send buffer goes up before the host
// collective, the largest receive buffer comes back after it (a rooted
// call's root one way, the others the other).
double stagedBytesOf(Coll coll, size_t bytes, int nranks) {
  CollRequest req{};
  req.coll = coll;
  req.count = bytes;
  req.elemSize = 1;
  req.root = 0;
  const int other = nranks > 1 ? 1 : 0;
  return double(std::max(sentBytes(req, 0, nranks), sentBytes(req, other, nranks))) +
         double(std::max(receivedBytes(req, 0, nranks), receivedBytes(req, other, nranks)));
}
}  // namespace

SimResult simulateCall(const Machine &m, const Layout &l, Coll coll, Algo algo, size_t bytes, size_t elemSize) {
  if (!m.gpu || engineOf(m, l, coll) != Engine::Host)
    return simulate(m, l, recordCollective(m, l, coll, algo, bytes, elemSize));
  const Machine host = hostViewOf(m);
  SimResult r = simulate(host, l, recordCollective(host, l, coll, algo, bytes, elemSize));
  if (r.ok && m.hostCopyGbPerS > 0) r.timeUs += usAt(stagedBytesOf(coll, bytes, l.nranks()), m.hostCopyGbPerS);
  return r;
}

SimResult simulate(const Machine &m, const Layout &l, const Schedules &s) {
  const uint64_t ops = s.ops();
  if (ops <= s.maxOps) {
    const uint64_t calls = s.calls();
    if (calls > kMaxSimulatedCalls) {
      SimResult refused;
      refused.why = std::to_string(calls) + " primitive calls: more than the event model replays (" +
                    std::to_string(kMaxSimulatedCalls) + ")";
      return refused;
    }
  } else {
    SimResult refused;
    if (s.recordedRanks > 0) {
      const double perRank = double(ops) / s.recordedRanks;
      refused.why = "about " + std::to_string(uint64_t(perRank * double(s.ranks.size()))) +
                    " distinct steps (from the first " + std::to_string(s.recordedRanks) + " ranks' schedules)";
    } else {
      refused.why = std::to_string(ops) + " distinct steps";
    }
    refused.why += ": more than the event model takes (" + std::to_string(s.maxOps) + ")";
    return refused;
  }
  Replay replay(m, l, s);
  replay.run();
  return replay.result;
}

double busFactor(Coll coll, int nranks) {
  const double n = nranks;
  switch (coll) {
    case Coll::Allreduce: return 2 * (n - 1) / n;
    case Coll::Allgather:
    case Coll::ReduceScatter:
    case Coll::Alltoall: return (n - 1) / n;
    default: return 1;
  }
}

double algorithmBytes(Coll coll, size_t bytes, int nranks) {
  switch (coll) {
    case Coll::Allgather:
    case Coll::ReduceScatter:
    case Coll::Alltoall: return double(bytes) * nranks;
    default: return double(bytes);
  }
}

}  // namespace sim
}  // namespace chorus
