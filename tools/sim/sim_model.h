// chorus_sim's model (issue 31): machines, the recording of the library's
// own schedules, and the event model that times them.
//
// What is the library's and what is the model's.  The schedule of every
// rank comes from the algorithm templates themselves, through the same
// dispatch the host executor uses (coll/dispatch.h) and the same CollArgs
// (slices of a FIFO slot, rings in node order, node trees, the hierarchy's
// groups); the algorithm a call would take comes from the planner
// (planCollective).  The machine is the model's: links with a latency, a
// bandwidth and a cost per message, NICs shared by the ranks of a node,
// FIFOs of a few slots whose credits hold a sender back.  Not modelled: the
// device engine's channels (a GPU rank is one channel at the link's whole
// bandwidth; across nodes the rotated rings' channels only spread a
// message over the NICs, Schedules::netChannels), the device proxy's own
// limits (its window of 4 slots per channel and link, and without
// GPUDirect RDMA the host memory every byte crosses: the presets' NICs run
// at line rate, as under GPUDirect RDMA), congestion inside the fabric beyond the NICs, the publish
// rings' credits, and CPU contention between ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "coll/algorithms.h"
#include "core/collective.h"
#include "cuda/device_links.h"
#include "sim/sim_prims.h"

namespace chorus {
namespace sim {

struct LinkModel {
  double latencyUs = 1;     // from the sender's post to the first byte's arrival
  double gbPerS = 10;       // one direction, GB/s (1e9 bytes)
  double perMessageUs = 0;  // the CPU or kernel work of each message at each end
};

// What lies between the nodes: the NICs, the switches, and for played
// nodes the one machine they share.  Apart from the node's inside so that
// a view of the node with other ranks (hostViewOf: a GPU node's CPU
// cores) keeps all of it by one copy.
struct Fabric {
  LinkModel net;              // through one NIC, NIC to NIC
  int nicsPerNode = 1;        // local rank i sends through NIC i * nics / ranksPerNode
  bool railOptimised = true;  // rail-optimised fabric: one switch hop between NICs of a rail
  int switchLevels = 1;       // fat tree: up to 2 * levels - 1 hops between two nodes
  double switchHopUs = 0.3;   // latency added by each switch hop beyond the first
  // Played nodes: every rank of every node on one machine of this many
  // cores (0: a core per rank).  Beyond a rank per core each rank's work
  // stretches by the share, and each message waits crowdedUs for each rank
  // per core beyond one for its receiver to be scheduled.
  int machineCores = 0;
  double crowdedUs = 0;
};

struct Machine {
  std::string name, description;
  int ranksPerNode = 8;
  LinkModel intra;            // between two ranks of a node (shared memory, NVLink)
  Fabric fabric;
  double reduceGbPerS = 20;   // a rank's fold of a received slice into its own (bytes out)
  double copyGbPerS = 20;     // a rank's copy of a received slice out of its FIFO
  // A rank's copy within its own memory (localCopy: an alltoall's own
  // block, Bruck's packing and swaps), cache to cache on one core.
  double localCopyGbPerS = 40;
  // GPU presets: a device buffer's copy to or from host memory, one GPU's
  // link to it (PCIe, or NVLink-C2C), for calls staged through the host.
  double hostCopyGbPerS = 0;
  int fifoSlots = 4;          // slots of a FIFO: messages a sender may run ahead of its receiver
  // A full FIFO's slot: the streaming algorithms' slice, and the all-peer
  // ones' (GPU presets take the kernels' instead: sliceBytesOf).
  size_t sliceBytes = 256 << 10;
  size_t allPeerSliceBytes = 256 << 10;
  bool gpu = false;           // ranks are GPUs: device buffers (the kernels' plans on one node)
  bool sharedMemory = true;   // ranks of a node can publish and read each other's memory (CPU ranks)
  double cpuShareOf(int nranks) const {
    const int cores = fabric.machineCores;
    return cores > 0 && nranks > cores ? double(nranks) / cores : 1.0;
  }
};

// The named presets (chorus_sim --list-presets).
const std::vector<Machine> &machinePresets();
const Machine *findPreset(const std::string &name);

struct Layout {
  int nodes = 1;
  int ranksPerNode = 1;
  int nranks() const { return nodes * ranksPerNode; }
  int nodeOf(int rank) const { return rank / ranksPerNode; }
};

// The planner's view of the layout (as comm/context.cc fills it), and the
// engine a call on this machine runs on.
PlanShape planShapeOf(const Machine &m, const Layout &l);
Engine engineOf(const Machine &m, const Layout &l);
// The engine a call of `coll` runs on: an alltoall on device buffers is
// staged through the host engine where the kernels do not link every
// remote peer (api/collectives.cc: stagedThroughHost).
Engine engineOf(const Machine &m, const Layout &l, Coll coll);
// The kernels' channels and device links on the layout (cudaDeviceWiring),
// as comm/context.cc takes them: the agreed CHORUS_NET_DEVICE_LINKS and
// the layout.
DeviceWiring wiringOf(const Layout &l);
// The rank whose device proxy links the most streaming peers on the
// wiring's channels (cudaBusiestStreamingRank); 0 when every remote peer
// is linked, or on one node.
int busiestLinkedRankOf(const Layout &l);
// The channels a ring or chain of `algo` spreads its traffic between nodes
// over: the kernels' channel count across nodes (cudaDeviceWiring), else 1.
int rotatedRingChannels(const Machine &m, const Layout &l, Algo algo);
// The streaming algorithms' slice a call of this layout moves per step:
// the machine's own, or on GPUs a full slot on each of the kernels'
// channels (cudaDeviceWiring: 16 on 1 and 2 nodes of 8, 8 on 4, 6 on 16
// to 128, 4 on 2,048), as comm/context.cc gives the planner.
size_t sliceBytesOf(const Machine &m, const Layout &l);
// The channels a bcast or reduce tree of the kernels across these nodes
// runs on (cudaRootedTreeChannels: those that keep up with one NIC), its
// slice a full slot on each; 0 where it takes the others' (no bound, or
// not the kernels across nodes of their own).
int rootedTreeChannelsOf(const Machine &m, const Layout &l);

// Whether `algo` is a schedule of its own for `coll` on this layout (not a
// name the dispatch would quietly run as the ring), and the algorithms to
// time for `coll`.
bool algorithmApplies(const Machine &m, const Layout &l, Coll coll, Algo algo);
std::vector<Algo> candidatesFor(const Machine &m, const Layout &l, Coll coll);

// Beyond this many recorded steps in all (a step repeated in a row is one:
// SimOp::repeat), the event model refuses, and recording stops as soon as
// they pass it: the schedules of an alltoall over 1,024 ranks had taken
// 24 GiB before the refusal.  A ring over 16,384 ranks records a few steps
// a rank.
constexpr uint64_t kMaxSimulatedOps = uint64_t(40) << 20;
// Beyond this many primitive calls in all (the events the model replays,
// 0.2-0.6 us each here), it refuses too: a ring's allreduce over 16,384
// ranks is half a billion of them, about five minutes.
constexpr uint64_t kMaxSimulatedCalls = uint64_t(1) << 30;

struct Schedules {
  std::vector<RankSchedule> ranks;
  // The kernels' rings across nodes rotate each node's ranks per channel
  // (rotatedRingChannels): a message between nodes is then spread over
  // this many channels' NICs; 1 otherwise.
  int netChannels = 1;
  // Recording stops once the schedules pass maxOps, the cap simulate()
  // refuses beyond: the ranks recorded then (fewer than all), from which
  // it estimates the whole; 0 when every rank was recorded.
  int recordedRanks = 0;
  uint64_t maxOps = kMaxSimulatedOps;
  uint64_t ops() const;    // recorded steps
  uint64_t calls() const;  // primitive calls (the steps' repeats)
};

// Every rank's schedule of `coll` by `algo` on `bytes` (the planner's
// bytes: the whole vector for allreduce, reduce and bcast, one rank's block
// for allgather, reduce-scatter and alltoall) of `elemSize`-byte elements.
Schedules recordCollective(const Machine &m, const Layout &l, Coll coll, Algo algo, size_t bytes, size_t elemSize,
                           uint64_t maxOps = kMaxSimulatedOps);

struct SimResult {
  bool ok = false;
  std::string why;     // when not ok: a deadlock (the schedules disagree) or a size refused
  double timeUs = 0;   // the last rank's end
  uint64_t messages = 0, netMessages = 0, netBytes = 0;
};
SimResult simulate(const Machine &m, const Layout &l, const Schedules &s);

// One call of `coll` by `algo`, recorded and replayed as the library runs
// it: on device buffers staged through host memory (engineOf(m, l, coll)
// is the host's on a GPU machine), the algorithm runs on the node's CPU
// cores and shared memory (hostViewOf) between a copy of the send buffer
// to host memory and one of the receive buffer back.
SimResult simulateCall(const Machine &m, const Layout &l, Coll coll, Algo algo, size_t bytes, size_t elemSize);
// A GPU node seen by the host engine: its CPU cores and shared memory as
// the 2socket preset has them, its NICs and fabric as they are.
Machine hostViewOf(const Machine &gpuNode);

// NCCL's bus bandwidth factor: what each rank's links carry relative to
// the algorithm bandwidth of a perfect ring.
double busFactor(Coll coll, int nranks);
// The bytes a call moves in the algorithm bandwidth's numerator: the
// vector, or every rank's block together.
double algorithmBytes(Coll coll, size_t bytes, int nranks);

}  // namespace sim
}  // namespace chorus
