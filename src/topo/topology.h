// The node's hardware as Chorus needs it to build rings and trees: NUMA
// domains and their cores, GPUs, NICs and how they hang off the PCIe tree.
//
// Read from hwloc, either from this machine (I/O devices included) or from an
// XML file that hwloc wrote elsewhere (CHORUS_TOPO_FILE), so that rings and
// trees for machines we lack are computed and tested from recorded fixtures
// (tests/topo).  NodeTopology is a plain struct with no hwloc handle inside,
// so it can be copied, compared and built by hand in tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common.h"

namespace chorus {

// How far a GPU is from a NIC (or another GPU) on the PCIe tree, nearest
// first.  NCCL names the same classes PIX, PXB, PHB and SYS.
enum class PathClass : int {
  SameSwitch = 0,  // below one PCIe switch: traffic never reaches the CPU
  SwitchTree = 1,  // several switches under one root port, still below the CPU
  HostBridge = 2,  // through the CPU's PCIe host bridge(s) of one NUMA domain
  CrossNuma = 3,   // across the inter-socket link
};
const char *pathClassName(PathClass c);  // "PIX", "PXB", "PHB", "SYS"

enum class LinkLayer : int { Unknown = 0, InfiniBand, Ethernet };
const char *linkLayerName(LinkLayer l);

struct NumaDomain {
  int osIndex = -1;        // the kernel's node number
  std::vector<int> cores;  // hwloc logical indexes of the cores it holds
};

struct Gpu {
  std::string busId;                 // "0000:1b:00.0"
  std::string names;                 // OS device names, e.g. "cuda0 nvml0"
  int numa = -1;                     // index into NodeTopology::numa; -1 when unknown
  std::vector<std::string> pciPath;  // bridges from the host bridge down to the device
  std::vector<double> nvlinkGBs;     // NVLink bandwidth to each GPU (by index), GB/s; 0: none
};

struct Nic {
  std::string name;                  // "mlx5_0" (OpenFabrics) or "eth0" (network interface)
  std::string netdev;                // network interface of the same PCI function, if any
  bool rdma = false;                 // an OpenFabrics (verbs) device: UCX calls its first port "<name>:1"
  std::string busId;                 // "" when hwloc did not place it on the PCI bus
  int numa = -1;
  LinkLayer linkLayer = LinkLayer::Unknown;
  double pciLinkGBs = 0;             // the PCIe link's speed as hwloc saw it; 0: unknown
  std::vector<std::string> pciPath;
  std::vector<int> nearestGpus;      // GPUs below the closest PCI ancestor that has any
};

struct NodeTopology {
  std::string source;  // "this machine" or the XML file read
  int cores = 0;       // cores of the whole machine
  std::vector<NumaDomain> numa;
  std::vector<Gpu> gpus;  // in hardware order: NUMA domain, then PCIe path, then bus id
  std::vector<Nic> nics;  // same order
  bool nvswitch = false;  // NVSwitch chips seen: every GPU pair has the same NVLink bandwidth

  // Where GPU g and NIC n meet on the PCIe tree.
  PathClass gpuNicPath(int gpu, int nic) const;
  PathClass gpuGpuPath(int a, int b) const;
  // The slowest NVLink between two of its GPUs, GB/s: 0 when a pair has
  // none (they meet over PCIe) or there are fewer than two GPUs.
  double slowestGpuPeerGBs() const;
  // NICs nearest GPU g (best PathClass), in NIC order; empty without NICs.
  std::vector<int> nearestNics(int gpu) const;
  // The one NIC GPU g sends through: among its nearest NICs, the GPUs that
  // share the same nearest set are spread over them in GPU order.
  int nicForGpu(int gpu) const;
  // The NIC a host-memory rank on NUMA domain `numa` sends through: one on
  // the same domain when there is one, `spread` choosing among equals.
  int nicForNuma(int numa, int spread) const;
  int gpuByBusId(const std::string &busId) const;  // -1 when absent
  int numaOfCore(int core) const;                   // -1 when absent
};

// Read an hwloc XML file (one that hwloc_topology_export_xml or lstopo wrote).
// An unreadable or invalid file is a warning naming it and InvalidArgument.
Status topoLoadXml(const char *path, NodeTopology *out);

// This node's topology, read once per process: from CHORUS_TOPO_FILE when
// set, else from this machine with its I/O devices.  When
// CHORUS_TOPO_DUMP_FILE is set, the hwloc topology read is also written
// there (the first call does it).
Status topoLoadLocal(NodeTopology *out);

// Cores of this machine (even when CHORUS_TOPO_FILE names another); at
// least 1.  Read with the rest of the topology, once per process.
int topoMachineCores();

// This machine's NICs for the planner (even when CHORUS_TOPO_FILE names
// another), GB/s one way as nicGBs (topo/rings.h) gives them: the fastest
// NIC's, whether it has RDMA (else UCX runs tcp over it), and the sum over
// all; zeros when hwloc sees no NIC of a known link layer.
struct MachineNetwork {
  double fastestGBs = 0;
  bool fastestRdma = false;
  double allGBs = 0;
  bool gpus = false;  // the machine has GPUs
  double gpuPeerGBs = 0;  // NodeTopology::slowestGpuPeerGBs; 0 when not known
};
MachineNetwork topoMachineNetwork();

// A rank's place inside its node as one number that sorts in hardware order,
// for the communicator to allgather: GPU ranks by the GPU's index in
// NodeTopology::gpus (cudaDevice's bus id looked up there), host ranks
// (cudaDevice < 0, or no CUDA) by NUMA domain, then first core of this
// process's CPU binding.  Decode with topoKeyGpu / topoKeyNuma / topoKeyCore.
int64_t topoRankKey(int cudaDevice);
// The CUDA device this process uses now (cudaGetDevice), or -1 when it has
// none (no CUDA in this build, no driver, no device).
int topoCurrentCudaDevice();

// The UCX_NET_DEVICES value for a rank at `rankKey` (topoRankKey): the RDMA
// NIC nearest its GPU, or one on its NUMA domain, `spread` (its index on
// the node) choosing among equals so that the ranks of a node use every
// rail.  Empty when the node has fewer than two RDMA NICs: UCX's own choice
// is then as good.
std::string topoUcxNetDevice(const NodeTopology &topo, int64_t rankKey, int spread);
int topoKeyGpu(int64_t key);   // -1 for a host rank
int topoKeyNuma(int64_t key);  // -1 for a GPU rank or when unknown
int topoKeyCore(int64_t key);  // -1 for a GPU rank or when unknown
int64_t topoMakeGpuKey(int gpu);
int64_t topoMakeHostKey(int numa, int core);

}  // namespace chorus
