// NodeTopology from hwloc: this machine's, or one recorded in an XML file.
//
// What hwloc gives and how we read it:
// - GPUs are the NVIDIA PCI devices of display class (0x0300 VGA, 0x0302 3D);
//   the OS devices below them ("cuda0" from the CUDA backend, "nvml0" from
//   NVML) only name them, and may be missing (no driver where the file was
//   recorded, or an hwloc built without those backends).
// - NICs are OpenFabrics OS devices ("mlx5_0": what UCX_NET_DEVICES names)
//   and network OS devices ("eth0", "ib0"); both on one PCI function are one
//   NIC, named by its OpenFabrics device.
// - NVLink: the "NVLinkBandwidth" distances matrix (NVML backend; MB/s).  On
//   NVSwitch machines it links GPUs to the NVSwitch chips (NVIDIA PCI
//   bridges, class 0x0680) rather than to each other; a GPU pair then gets
//   what they can exchange through the switches.
// - The PCIe tree: a device's chain of bridge ancestors, from its host
//   bridge down, gives both the distance classes and the nearest GPUs of a
//   NIC.
#include "topo/topology.h"
#include "topo/rings.h"

#include <hwloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "core/log.h"
#include "core/params.h"

#ifdef CHORUS_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace chorus {

const char *pathClassName(PathClass c) {
  switch (c) {
    case PathClass::SameSwitch: return "PIX";
    case PathClass::SwitchTree: return "PXB";
    case PathClass::HostBridge: return "PHB";
    case PathClass::CrossNuma: return "SYS";
  }
  return "?";
}

const char *linkLayerName(LinkLayer l) {
  switch (l) {
    case LinkLayer::InfiniBand: return "InfiniBand";
    case LinkLayer::Ethernet: return "Ethernet";
    case LinkLayer::Unknown: break;
  }
  return "unknown";
}

namespace {

constexpr unsigned kNvidiaVendor = 0x10de;
constexpr unsigned kClassVga = 0x0300, kClass3d = 0x0302;
constexpr unsigned kClassEthernet = 0x0200, kClassInfiniBand = 0x0207;
constexpr unsigned kClassOtherBridge = 0x0680;  // what NVSwitch chips show as

// Element 0 of a PCI path is the host bridge: the paths of devices on
// different host bridges share nothing.
PathClass classify(const std::vector<std::string> &a, int numaA, const std::vector<std::string> &b, int numaB) {
  size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  if (common == 0) return numaA == numaB ? PathClass::HostBridge : PathClass::CrossNuma;
  if (common == 1) return PathClass::HostBridge;
  // The deepest shared bridge is a switch's upstream port; each device then
  // sits below one downstream port of it, or deeper behind more switches.
  const bool oneSwitch = a.size() - common <= 1 && b.size() - common <= 1;
  return oneSwitch ? PathClass::SameSwitch : PathClass::SwitchTree;
}

std::string busIdOf(const hwloc_obj_attr_u::hwloc_pcidev_attr_s &pci) {
  char text[32];
  snprintf(text, sizeof text, "%04x:%02x:%02x.%01x", pci.domain, pci.bus, pci.dev, pci.func);
  return text;
}

std::string bridgeId(hwloc_obj_t bridge) {
  const hwloc_obj_attr_u::hwloc_bridge_attr_s &attr = bridge->attr->bridge;
  if (attr.upstream_type == HWLOC_OBJ_BRIDGE_PCI) return busIdOf(attr.upstream.pci);
  char text[48];
  snprintf(text, sizeof text, "host:%04x:[%02x-%02x]", attr.downstream.pci.domain, attr.downstream.pci.secondary_bus,
           attr.downstream.pci.subordinate_bus);
  return text;
}

std::vector<std::string> pciPathOf(hwloc_obj_t obj) {
  std::vector<std::string> path;
  for (hwloc_obj_t o = obj->parent; o && o->type == HWLOC_OBJ_BRIDGE; o = o->parent) path.push_back(bridgeId(o));
  std::reverse(path.begin(), path.end());
  return path;
}

hwloc_obj_t pciDeviceOf(hwloc_obj_t obj) {
  for (hwloc_obj_t o = obj; o; o = o->parent)
    if (o->type == HWLOC_OBJ_PCI_DEVICE) return o;
  return nullptr;
}

// The NUMA domain (index into `numa`) whose CPUs an I/O object is local to;
// -1 when its locality spans several domains.
int numaOf(hwloc_topology_t topo, hwloc_obj_t obj) {
  hwloc_obj_t local = hwloc_get_non_io_ancestor_obj(topo, obj);
  if (!local || !local->nodeset || hwloc_bitmap_weight(local->nodeset) != 1) return -1;
  hwloc_obj_t node = hwloc_get_numanode_obj_by_os_index(topo, unsigned(hwloc_bitmap_first(local->nodeset)));
  return node ? int(node->logical_index) : -1;
}

void readNuma(hwloc_topology_t topo, NodeTopology *out) {
  const int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  out->cores = ncores > 0 ? ncores : std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU));
  const int nnuma = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < nnuma; ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, unsigned(i));
    NumaDomain domain;
    domain.osIndex = int(node->os_index);
    for (int c = 0; c < ncores; ++c) {
      hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, unsigned(c));
      if (hwloc_bitmap_isincluded(core->cpuset, node->cpuset)) domain.cores.push_back(c);
    }
    out->numa.push_back(domain);
  }
}

bool isNvidiaGpu(hwloc_obj_t pci) {
  const auto &attr = pci->attr->pcidev;
  return attr.vendor_id == kNvidiaVendor && (attr.class_id == kClassVga || attr.class_id == kClass3d);
}

bool isNvSwitch(hwloc_obj_t obj) {
  if (obj->type != HWLOC_OBJ_PCI_DEVICE) return false;
  const auto &attr = obj->attr->pcidev;
  return attr.vendor_id == kNvidiaVendor && attr.class_id == kClassOtherBridge;
}

// GPUs, in hardware order; `objects` receives each GPU's PCI object.
void readGpus(hwloc_topology_t topo, NodeTopology *out, std::vector<hwloc_obj_t> *objects) {
  struct Found {
    Gpu gpu;
    hwloc_obj_t obj;
  };
  std::vector<Found> found;
  for (hwloc_obj_t pci = hwloc_get_next_pcidev(topo, nullptr); pci; pci = hwloc_get_next_pcidev(topo, pci)) {
    if (isNvSwitch(pci)) out->nvswitch = true;
    if (!isNvidiaGpu(pci)) continue;
    Found f{Gpu(), pci};
    f.gpu.busId = busIdOf(pci->attr->pcidev);
    f.gpu.numa = numaOf(topo, pci);
    f.gpu.pciPath = pciPathOf(pci);
    for (hwloc_obj_t os = pci->io_first_child; os; os = os->next_sibling)
      if (os->type == HWLOC_OBJ_OS_DEVICE && os->name)
        f.gpu.names += std::string(f.gpu.names.empty() ? "" : " ") + os->name;
    found.push_back(f);
  }
  std::sort(found.begin(), found.end(), [](const Found &x, const Found &y) {
    if (x.gpu.numa != y.gpu.numa) return x.gpu.numa < y.gpu.numa;
    if (x.gpu.pciPath != y.gpu.pciPath) return x.gpu.pciPath < y.gpu.pciPath;
    return x.gpu.busId < y.gpu.busId;
  });
  for (Found &f : found) {
    f.gpu.nvlinkGBs.assign(found.size(), 0.0);
    out->gpus.push_back(f.gpu);
    objects->push_back(f.obj);
  }
}

void readNvlink(hwloc_topology_t topo, const std::vector<hwloc_obj_t> &gpuObjects, NodeTopology *out) {
#if HWLOC_API_VERSION < 0x00020100
  (void)topo, (void)gpuObjects, (void)out;  // hwloc 2.0 names no distances matrix
#else
  unsigned nr = 1;
  hwloc_distances_s *matrix = nullptr;
  if (hwloc_distances_get_by_name(topo, "NVLinkBandwidth", &nr, &matrix, 0) != 0 || nr == 0) return;
  const unsigned n = matrix->nbobjs;
  // Each matrix entry is a GPU (its OS device or PCI device), an NVSwitch, or
  // something else (a CPU on POWER), which we leave out.
  std::vector<int> gpuOf(n, -1);
  std::vector<bool> isSwitch(n, false);
  for (unsigned i = 0; i < n; ++i) {
    hwloc_obj_t pci = pciDeviceOf(matrix->objs[i]);
    if (!pci) continue;
    auto it = std::find(gpuObjects.begin(), gpuObjects.end(), pci);
    if (it != gpuObjects.end()) gpuOf[i] = int(it - gpuObjects.begin());
    else if (isNvSwitch(pci)) isSwitch[i] = out->nvswitch = true;
  }
  auto mbs = [&](unsigned i, unsigned j) { return double(matrix->values[i * n + j]); };
  for (unsigned i = 0; i < n; ++i) {
    if (gpuOf[i] < 0) continue;
    for (unsigned j = 0; j < n; ++j) {
      if (gpuOf[j] < 0 || gpuOf[j] == gpuOf[i]) continue;
      double total = mbs(i, j);
      for (unsigned s = 0; s < n; ++s)
        if (isSwitch[s]) total += std::min(mbs(i, s), mbs(s, j));
      out->gpus[size_t(gpuOf[i])].nvlinkGBs[size_t(gpuOf[j])] = total / 1000.0;
    }
  }
  hwloc_distances_release(topo, matrix);
#endif
}

LinkLayer linkLayerOf(hwloc_obj_t pci, hwloc_obj_t openFabrics, hwloc_obj_t netdev) {
  if (openFabrics) {
    // Newer hwloc and our fixtures say it; hwloc 2.9 on Linux does not.
    if (const char *layer = hwloc_obj_get_info_by_name(openFabrics, "Port1LinkLayer")) {
      if (!strcasecmp(layer, "InfiniBand")) return LinkLayer::InfiniBand;
      if (!strcasecmp(layer, "Ethernet")) return LinkLayer::Ethernet;
    }
  }
  if (pci && pci->attr->pcidev.class_id == kClassInfiniBand) return LinkLayer::InfiniBand;
  if (pci && pci->attr->pcidev.class_id == kClassEthernet) return LinkLayer::Ethernet;
  // An IPoIB hardware address has 20 bytes, an Ethernet one 6.
  if (const char *address = netdev ? hwloc_obj_get_info_by_name(netdev, "Address") : nullptr) {
    const size_t length = strlen(address);
    if (length == 59) return LinkLayer::InfiniBand;
    if (length == 17) return LinkLayer::Ethernet;
  }
  return LinkLayer::Unknown;
}

void readNics(hwloc_topology_t topo, NodeTopology *out) {
  // One NIC per PCI function (or per OS device without one), found in hwloc
  // order; OpenFabrics devices name it, network interfaces otherwise.
  struct Found {
    hwloc_obj_t pci = nullptr, openFabrics = nullptr, netdev = nullptr;
  };
  std::vector<Found> found;
  for (hwloc_obj_t os = hwloc_get_next_osdev(topo, nullptr); os; os = hwloc_get_next_osdev(topo, os)) {
    const auto type = os->attr->osdev.type;
    if (type != HWLOC_OBJ_OSDEV_OPENFABRICS && type != HWLOC_OBJ_OSDEV_NETWORK) continue;
    hwloc_obj_t pci = pciDeviceOf(os);
    auto nic = std::find_if(found.begin(), found.end(), [&](const Found &f) { return pci && f.pci == pci; });
    if (nic == found.end()) nic = found.insert(found.end(), Found());
    nic->pci = pci;
    (type == HWLOC_OBJ_OSDEV_OPENFABRICS ? nic->openFabrics : nic->netdev) = os;
  }
  for (const Found &f : found) {
    Nic nic;
    hwloc_obj_t named = f.openFabrics ? f.openFabrics : f.netdev;
    nic.name = named->name ? named->name : "?";
    if (f.openFabrics && f.netdev && f.netdev->name) nic.netdev = f.netdev->name;
    nic.rdma = f.openFabrics != nullptr;
    nic.numa = numaOf(topo, named);
    nic.linkLayer = linkLayerOf(f.pci, f.openFabrics, f.netdev);
    if (f.pci) {
      nic.busId = busIdOf(f.pci->attr->pcidev);
      nic.pciLinkGBs = f.pci->attr->pcidev.linkspeed;
      nic.pciPath = pciPathOf(f.pci);
    }
    out->nics.push_back(nic);
  }
  std::stable_sort(out->nics.begin(), out->nics.end(), [](const Nic &x, const Nic &y) {
    if (x.numa != y.numa) return x.numa < y.numa;
    return x.pciPath != y.pciPath ? x.pciPath < y.pciPath : x.busId < y.busId;
  });
}

// A NIC's nearest GPUs: those below its deepest PCI ancestor that has any,
// else those of its NUMA domain.
void findNearestGpus(NodeTopology *topo) {
  for (Nic &nic : topo->nics) {
    nic.nearestGpus.clear();
    for (size_t depth = nic.pciPath.size(); depth-- > 0 && nic.nearestGpus.empty();)
      for (size_t g = 0; g < topo->gpus.size(); ++g) {
        const auto &path = topo->gpus[g].pciPath;
        if (std::find(path.begin(), path.end(), nic.pciPath[depth]) != path.end()) nic.nearestGpus.push_back(int(g));
      }
    if (nic.nearestGpus.empty() && nic.numa >= 0)
      for (size_t g = 0; g < topo->gpus.size(); ++g)
        if (topo->gpus[g].numa == nic.numa) nic.nearestGpus.push_back(int(g));
  }
}

Status fromHwloc(hwloc_topology_t topo, const std::string &source, NodeTopology *out) {
  NodeTopology result;
  result.source = source;
  readNuma(topo, &result);
  std::vector<hwloc_obj_t> gpuObjects;
  readGpus(topo, &result, &gpuObjects);
  readNvlink(topo, gpuObjects, &result);
  readNics(topo, &result);
  findNearestGpus(&result);
  CHORUS_INFO(kSubsysTopo, "topology of %s: %zu NUMA domains, %d cores, %zu GPUs%s, %zu NICs", source.c_str(),
              result.numa.size(), result.cores, result.gpus.size(), result.nvswitch ? " (NVSwitch)" : "",
              result.nics.size());
  *out = std::move(result);
  return Status::Ok;
}

// Write the topology where CHORUS_TOPO_DUMP_FILE says, through a temporary
// file beside it renamed into place, so that a reader never sees it half
// written (two ranks of a node dumping to one path write the same bytes).
// Never through a link planted at the path, nor over another user's file
// (refused as openOwnFile refuses them, core/log.h); the temporary is made
// with O_EXCL (mkstemp), mode 0600, and rename replaces whatever entry the
// path holds then without following it.  hwloc's own export would fopen
// the path and follow a link there.
int writeReplacing(const char *path, const char *bytes, size_t len) {
  struct stat st;
  if (lstat(path, &st) == 0) {
    if (S_ISLNK(st.st_mode)) return ELOOP;
    if (!isOwnPlainFile(st)) return EPERM;
  } else if (errno != ENOENT) {
    return errno;
  }
  std::string temporary = std::string(path) + ".XXXXXX";
  const int fd = mkstemp(&temporary[0]);
  if (fd < 0) return errno;
  int err = writeAll(fd, bytes, len);
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(temporary.c_str(), path) != 0) err = errno;
  if (err) unlink(temporary.c_str());
  return err;
}

void dumpXml(hwloc_topology_t topo, const char *path) {
  char *xml = nullptr;
  int len = 0;
  if (hwloc_topology_export_xmlbuffer(topo, &xml, &len, 0) != 0 || len <= 0) {
    CHORUS_WARN("CHORUS_TOPO_DUMP_FILE=%s: hwloc cannot export the topology: %s", path, strerror(errno));
    return;
  }
  const int err = writeReplacing(path, xml, strnlen(xml, size_t(len)));  // (hwloc counts the final NUL)
  hwloc_free_xmlbuffer(topo, xml);
  if (err) {
    CHORUS_WARN("CHORUS_TOPO_DUMP_FILE=%s: cannot write the topology: %s%s", path, strerror(err),
                err == ELOOP || err == EPERM ? " (a link, not a regular file, or not this user's file: refused)" : "");
    return;
  }
  CHORUS_INFO(kSubsysTopo, "topology written to %s", path);
}

// Read from `xmlPath`, or from this machine when null; dump when `dumpPath`.
Status loadTopology(const char *xmlPath, const char *dumpPath, NodeTopology *out) {
  if (xmlPath && access(xmlPath, R_OK) != 0) {
    CHORUS_WARN("topology file %s cannot be read: %s", xmlPath, strerror(errno));
    return Status::InvalidArgument;
  }
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) {
    CHORUS_WARN("hwloc_topology_init failed: %s", strerror(errno));
    return Status::SystemError;
  }
  // GPUs, NICs and the bridges above them; not every PCI device.
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  Status status = Status::Ok;
  if (xmlPath && hwloc_topology_set_xml(topo, xmlPath) != 0) {
    CHORUS_WARN("topology file %s is not an hwloc XML topology (%s; HWLOC_XML_VERBOSE=1 shows hwloc's reason)",
                xmlPath, strerror(errno));
    status = Status::InvalidArgument;
  } else if (hwloc_topology_load(topo) != 0) {
    if (xmlPath)
      CHORUS_WARN("topology file %s is not a valid hwloc XML topology (%s; HWLOC_XML_VERBOSE=1 shows hwloc's reason)",
                  xmlPath, strerror(errno));
    else
      CHORUS_WARN("hwloc could not read this machine's topology: %s", strerror(errno));
    status = xmlPath ? Status::InvalidArgument : Status::SystemError;
  } else {
    status = fromHwloc(topo, xmlPath ? xmlPath : "this machine", out);
    if (status == Status::Ok && dumpPath && *dumpPath) dumpXml(topo, dumpPath);
  }
  hwloc_topology_destroy(topo);
  return status;
}

struct Cached {
  std::once_flag once;
  Status status = Status::Ok;
  NodeTopology topo;
};

Cached &localCache() {
  static Cached cached;
  std::call_once(cached.once, [] {
    const char *file = paramRaw(ParamId::TopoFile);
    cached.status = loadTopology(file && *file ? file : nullptr, paramRaw(ParamId::TopoDumpFile), &cached.topo);
  });
  return cached;
}

// This machine, whatever CHORUS_TOPO_FILE says: what the host engine runs on.
Cached &machineCache() {
  const char *file = paramRaw(ParamId::TopoFile);
  if (!file || !*file) return localCache();
  static Cached cached;
  std::call_once(cached.once, [] { cached.status = loadTopology(nullptr, nullptr, &cached.topo); });
  return cached;
}

}  // namespace

int topoMachineCores() {
  const Cached &cached = machineCache();
  return cached.status == Status::Ok && cached.topo.cores > 0 ? cached.topo.cores : 1;
}

MachineNetwork topoMachineNetwork() {
  MachineNetwork network;
  const Cached &cached = machineCache();
  if (cached.status != Status::Ok) return network;
  network.gpus = !cached.topo.gpus.empty();
  network.gpuPeerGBs = cached.topo.slowestGpuPeerGBs();
  for (const Nic &nic : cached.topo.nics) {
    if (nic.linkLayer == LinkLayer::Unknown) continue;
    const double gbs = nicGBs(nic);
    network.allGBs += gbs;
    if (gbs > network.fastestGBs || (gbs == network.fastestGBs && nic.rdma)) {
      network.fastestGBs = gbs;
      network.fastestRdma = nic.rdma;
    }
  }
  return network;
}

Status topoLoadXml(const char *path, NodeTopology *out) {
  if (!path || !*path) {
    CHORUS_WARN("no topology file given");
    return Status::InvalidArgument;
  }
  return loadTopology(path, nullptr, out);
}

Status topoLoadLocal(NodeTopology *out) {
  Cached &cached = localCache();
  if (cached.status == Status::Ok) *out = cached.topo;
  return cached.status;
}

// ---------------------------------------------------------------------------
// Questions on a NodeTopology.

PathClass NodeTopology::gpuNicPath(int gpu, int nic) const {
  const Gpu &g = gpus[size_t(gpu)];
  const Nic &n = nics[size_t(nic)];
  return classify(g.pciPath, g.numa, n.pciPath, n.numa);
}

double NodeTopology::slowestGpuPeerGBs() const {
  if (gpus.size() < 2) return 0.0;
  double slowest = -1.0;
  for (size_t a = 0; a < gpus.size(); ++a)
    for (size_t b = 0; b < gpus.size(); ++b)
      if (a != b) {
        const double gbs = b < gpus[a].nvlinkGBs.size() ? gpus[a].nvlinkGBs[b] : 0.0;
        slowest = slowest < 0 ? gbs : std::min(slowest, gbs);
      }
  return slowest;
}

PathClass NodeTopology::gpuGpuPath(int a, int b) const {
  return classify(gpus[size_t(a)].pciPath, gpus[size_t(a)].numa, gpus[size_t(b)].pciPath, gpus[size_t(b)].numa);
}

std::vector<int> NodeTopology::nearestNics(int gpu) const {
  std::vector<int> best;
  PathClass bestClass = PathClass::CrossNuma;
  for (int n = 0; n < int(nics.size()); ++n) {
    const PathClass c = gpuNicPath(gpu, n);
    if (best.empty() || c < bestClass) {
      best.assign(1, n);
      bestClass = c;
    } else if (c == bestClass) {
      best.push_back(n);
    }
  }
  return best;
}

int NodeTopology::nicForGpu(int gpu) const {
  const std::vector<int> nearest = nearestNics(gpu);
  if (nearest.empty()) return -1;
  // Spread the GPUs that compete for the same NICs over them, in GPU order:
  // two GPUs and two NICs under one switch get one NIC each.
  int rank = 0;
  for (int g = 0; g < gpu; ++g)
    if (nearestNics(g) == nearest) ++rank;
  return nearest[size_t(rank) % nearest.size()];
}

int NodeTopology::nicForNuma(int domain, int spread) const {
  std::vector<int> local;
  for (int n = 0; n < int(nics.size()); ++n)
    if (nics[size_t(n)].numa == domain) local.push_back(n);
  const int count = int(local.empty() ? nics.size() : local.size());
  if (count == 0) return -1;
  const int pick = ((spread % count) + count) % count;
  return local.empty() ? pick : local[size_t(pick)];
}

int NodeTopology::gpuByBusId(const std::string &busId) const {
  for (size_t g = 0; g < gpus.size(); ++g)
    if (strcasecmp(gpus[g].busId.c_str(), busId.c_str()) == 0) return int(g);
  return -1;
}

int NodeTopology::numaOfCore(int core) const {
  for (size_t d = 0; d < numa.size(); ++d)
    if (std::find(numa[d].cores.begin(), numa[d].cores.end(), core) != numa[d].cores.end()) return int(d);
  return -1;
}

// ---------------------------------------------------------------------------
// Rank keys.  GPU keys sort after every host key; a host key packs the NUMA
// domain above the core, each plus one so that "unknown" (-1) packs as 0.

namespace {
constexpr int64_t kGpuKeyBase = int64_t(1) << 48;
constexpr int64_t kCoreBits = 24;

// NUMA domain and first core of this process's CPU binding, as logical
// indexes of this machine.
void boundPlace(int *numa, int *core) {
  *numa = *core = -1;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (hwloc_topology_load(topo) == 0 && set && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
    hwloc_obj_t first = hwloc_get_next_obj_covering_cpuset_by_type(topo, set, HWLOC_OBJ_CORE, nullptr);
    if (first) {
      *core = int(first->logical_index);
      hwloc_obj_t node = first->nodeset && hwloc_bitmap_weight(first->nodeset) > 0
                             ? hwloc_get_numanode_obj_by_os_index(topo, unsigned(hwloc_bitmap_first(first->nodeset)))
                             : nullptr;
      if (node) *numa = int(node->logical_index);
    }
  }
  hwloc_bitmap_free(set);
  hwloc_topology_destroy(topo);
}
}  // namespace

int64_t topoMakeGpuKey(int gpu) { return kGpuKeyBase + gpu; }
int64_t topoMakeHostKey(int numa, int core) { return (int64_t(numa + 1) << kCoreBits) | int64_t(core + 1); }
int topoKeyGpu(int64_t key) { return key >= kGpuKeyBase ? int(key - kGpuKeyBase) : -1; }
int topoKeyNuma(int64_t key) { return key >= kGpuKeyBase ? -1 : int(key >> kCoreBits) - 1; }
int topoKeyCore(int64_t key) { return key >= kGpuKeyBase ? -1 : int(key & ((int64_t(1) << kCoreBits) - 1)) - 1; }

int topoCurrentCudaDevice() {
#ifdef CHORUS_HAVE_CUDA
  int count = 0, device = -1;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0 && cudaGetDevice(&device) == cudaSuccess) return device;
  cudaGetLastError();  // no device is no error of the caller's next CUDA call
#endif
  return -1;
}

int64_t topoRankKey(int cudaDevice) {
#ifdef CHORUS_HAVE_CUDA
  if (cudaDevice >= 0) {
    char text[64] = "";
    unsigned domain = 0, bus = 0, dev = 0, func = 0;
    NodeTopology topo;
    // CUDA writes an 8-digit domain ("00000000:1B:00.0"); hwloc a 4-digit one.
    if (cudaDeviceGetPCIBusId(text, sizeof text, cudaDevice) == cudaSuccess &&
        sscanf(text, "%x:%x:%x.%x", &domain, &bus, &dev, &func) == 4 && topoLoadLocal(&topo) == Status::Ok) {
      char busId[32];
      snprintf(busId, sizeof busId, "%04x:%02x:%02x.%01x", domain, bus, dev, func);
      const int gpu = topo.gpuByBusId(busId);
      if (gpu >= 0) return topoMakeGpuKey(gpu);
      CHORUS_INFO(kSubsysTopo, "CUDA device %d (%s) is not in the topology; ordering by device number", cudaDevice,
                  busId);
    }
    return topoMakeGpuKey(cudaDevice);
  }
#else
  (void)cudaDevice;
#endif
  // Loading the topology costs milliseconds and every communicator asks:
  // the binding is read once per process (a rank rebound later keeps its
  // first place in the rings, which only costs speed).
  static std::once_flag once;
  static int numa = -1, core = -1;
  std::call_once(once, [] { boundPlace(&numa, &core); });
  return topoMakeHostKey(numa, core);
}

std::string topoUcxNetDevice(const NodeTopology &topo, int64_t rankKey, int spread) {
  std::vector<int> rdma, preferred;
  for (int n = 0; n < int(topo.nics.size()); ++n)
    if (topo.nics[size_t(n)].rdma) rdma.push_back(n);
  if (rdma.size() < 2) return "";
  const int gpu = topoKeyGpu(rankKey);
  if (gpu >= 0 && gpu < int(topo.gpus.size())) {
    for (int n : topo.nearestNics(gpu))
      if (topo.nics[size_t(n)].rdma) preferred.push_back(n);
  } else {
    const int numa = topoKeyNuma(rankKey);
    for (int n : rdma)
      if (numa >= 0 && topo.nics[size_t(n)].numa == numa) preferred.push_back(n);
  }
  const std::vector<int> &from = preferred.empty() ? rdma : preferred;
  const int count = int(from.size());
  const int pick = from[size_t(((spread % count) + count) % count)];
  return topo.nics[size_t(pick)].name + ":1";
}

}  // namespace chorus
