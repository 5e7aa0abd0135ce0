// Device FIFOs to ranks on other nodes: pinned host memory for the device
// proxy's FIFO copies, and the kernels' views of them (cuda_net.h).
//
// Without GPUDirect RDMA every byte crosses PCIe into host memory before
// it can leave the node, so the slots are pinned host memory the GPU maps:
// the kernel's stores go there directly (one PCIe crossing, as a NIC
// reading device memory would make), the peer's kernel reads its receive
// slots across PCIe, and no CPU copies a byte on the way when UCX puts
// (CHORUS_NET_PROTO).  With it (CHORUS_NET_GDR), the slots move to device
// memory registered with UCX as CUDA memory, which the NIC reads and writes
// directly; the counters stay in pinned host memory, since the proxy
// reads them.  UCX as Debian builds it has no CUDA memory support, so
// there `auto` says no; the CPU emulation runs the path under
// CHORUS_NET_GDR=1, its device memory being host memory.
#include "cuda/cuda_net.h"

#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/log.h"
#include "core/params.h"
#include "cuda/cuda_check.h"
#include "cuda/device_channel.h"
#include "cuda/device_pool.h"
#include "topo/topology.h"
#ifdef CHORUS_HAVE_UCX
#include <ucs/memory/memory_type.h>

#include "transport/ucx/ucx_proxy.h"
#endif

namespace chorus {

namespace {

// The process's pinned blocks given to proxies, with their device
// addresses, so that a FIFO end's pointers can be translated.
struct MappedBlock {
  char *host;
  char *device;
  size_t bytes;
};
std::mutex g_blocksMutex;
std::vector<MappedBlock> g_blocks;

void *takeMapped(size_t bytes) {
  void *host = nullptr;
  if (devicePoolTake(PoolMemory::HostMapped, bytes, &host) != Status::Ok) return nullptr;
  void *device = nullptr;
  if (cudaHostGetDevicePointer(&device, host, 0) != cudaSuccess) {
    cudaGetLastError();
    devicePoolGive(host);
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(g_blocksMutex);
  g_blocks.push_back({static_cast<char *>(host), static_cast<char *>(device), bytes});
  return host;
}

void giveMapped(void *host) {
  {
    std::lock_guard<std::mutex> lock(g_blocksMutex);
    for (size_t i = 0; i < g_blocks.size(); ++i)
      if (g_blocks[i].host == host) {
        g_blocks[i] = g_blocks.back();
        g_blocks.pop_back();
        break;
      }
  }
  devicePoolGive(host);
}

template <typename T>
T *deviceAddress(T *host) {
  if (!host) return nullptr;
  const char *p = reinterpret_cast<const char *>(host);
  std::lock_guard<std::mutex> lock(g_blocksMutex);
  for (const MappedBlock &b : g_blocks)
    if (p >= b.host && p < b.host + b.bytes) return reinterpret_cast<T *>(b.device + (p - b.host));
  return nullptr;
}

#ifdef CHORUS_HAVE_UCX
// Device memory for the slots under GPUDirect RDMA: its own address on
// the device.
void *takeDeviceSlots(size_t bytes) {
  void *p = nullptr;
  if (devicePoolTake(PoolMemory::Device, bytes, &p) != Status::Ok) return nullptr;
  std::lock_guard<std::mutex> lock(g_blocksMutex);
  g_blocks.push_back({static_cast<char *>(p), static_cast<char *>(p), bytes});
  return p;
}

FifoEnd deviceView(const FifoEnd &host) {
  FifoEnd e = host;
  e.header = deviceAddress(host.header);
  e.inlineSlots = deviceAddress(host.inlineSlots);
  e.slots = deviceAddress(host.slots);
  e.step = e.seen = 0;
  e.sums = nullptr;
  e.remote = 1;
  return e;
}

// The device whose GPUDirect writes a put's arrival flushes (the proxy's
// and UCX's threads have no current device of their own).
int g_gdrDevice = 0;

// A put into device memory has landed (its notice came behind a fence):
// its PCIe writes may still be on their way into the GPU's memory, which
// the kernel reads once the tail rises.  The flush makes them visible
// first, as NCCL's flush read does.
void flushGdrWrites() {
#ifndef CHORUS_CUDA_EMULATION
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != g_gdrDevice) cudaSetDevice(g_gdrDevice);
  if (cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
                                         cudaFlushGPUDirectRDMAWritesToOwner) != cudaSuccess)
    cudaGetLastError();
#endif
}

#ifndef CHORUS_CUDA_EMULATION
// CHORUS_NET_GDR_LEVEL as a path class (PIX, PXB, PHB, SYS).
PathClass gdrLevel() {
  const char *level = paramString(ParamId::NetGdrLevel);
  for (int c = int(PathClass::SameSwitch); c <= int(PathClass::CrossNuma); ++c)
    if (strcmp(level, pathClassName(PathClass(c))) == 0) return PathClass(c);
  return PathClass::SwitchTree;
}
#endif

// This rank's answer to CHORUS_NET_GDR, before the ranks agree; `why`
// says what decided it.
bool gdrHere(const PeerLinks &links, char *why, size_t len) {
  const char *setting = paramString(ParamId::NetGdr);
  if (strcmp(setting, "0") == 0) {
    snprintf(why, len, "CHORUS_NET_GDR=0");
    return false;
  }
  const bool forced = strcmp(setting, "1") == 0;
#ifdef CHORUS_CUDA_EMULATION
  (void)links;
  if (forced) snprintf(why, len, "CHORUS_NET_GDR=1 on the CPU emulation of CUDA, whose device memory is host memory");
  else snprintf(why, len, "the CPU emulation of CUDA has no GPUDirect RDMA (CHORUS_NET_GDR=1 runs the path)");
  return forced;
#else
  void *probe = nullptr;
  constexpr size_t kProbeBytes = 64 * 1024;
  if (devicePoolTake(PoolMemory::Device, kProbeBytes, &probe) != Status::Ok) {
    snprintf(why, len, "no device memory for a registration probe");
    return false;
  }
  const bool registers = netProxyCanRegister(links, UCS_MEMORY_TYPE_CUDA, probe, kProbeBytes, why, len);
  devicePoolGive(probe);
  if (!registers) return false;
  if (forced) {
    snprintf(why, len, "CHORUS_NET_GDR=1, and UCX registers CUDA memory");
    return true;
  }
  NodeTopology topo;
  int gpu = -1, nic = -1;
  if (topoLoadLocal(&topo) == Status::Ok) {
    gpu = topoKeyGpu(topoRankKey(topoCurrentCudaDevice()));
    if (gpu >= 0 && gpu < int(topo.gpus.size())) nic = topo.nicForGpu(gpu);
  }
  if (nic < 0) {
    snprintf(why, len, "the topology shows no NIC for this rank's GPU");
    return false;
  }
  const PathClass path = topo.gpuNicPath(gpu, nic);
  const bool near = int(path) <= int(gdrLevel());
  snprintf(why, len, "UCX registers CUDA memory, and GPU %d meets NIC %s at %s, %s CHORUS_NET_GDR_LEVEL=%s", gpu,
           topo.nics[size_t(nic)].name.c_str(), pathClassName(path), near ? "within" : "beyond",
           paramString(ParamId::NetGdrLevel));
  return near;
#endif
}
#endif

}  // namespace

struct CudaNet {
#ifdef CHORUS_HAVE_UCX
  NetProxy *proxy = nullptr;
#endif
  int *abortHost = nullptr;  // pinned, mapped: DevCollArgs::netAbort
  int *abortDevice = nullptr;
  bool gdr = false;          // the slots in device memory (CHORUS_NET_GDR)
};

Status cudaNetCreate(const PeerLinks &links, int nchannels, const std::vector<int> &peers, CudaNet **out) {
  auto *net = new CudaNet;
  *out = net;
  void *word = takeMapped(sizeof(int));
  net->abortHost = static_cast<int *>(word);
  if (word) {
    *net->abortHost = 0;
    net->abortDevice = deviceAddress(net->abortHost);
  }
#ifdef CHORUS_HAVE_UCX
  NetProxyConfig config;
  config.nchannels = nchannels;
  config.peers = peers;
  config.slotBytes = kCudaSlotBytes;
  config.nslots = kCudaSlots;
  config.memory.alloc = takeMapped;
  config.memory.release = giveMapped;
  // GPUDirect RDMA: on every rank or none (a full slot into device memory
  // may come by put only, so both ends of a link must agree).
  char why[256] = "";
  const int here = word && gdrHere(links, why, sizeof why);
  int everywhere = 0;
  CHORUS_MPICHECK(MPI_Allreduce(&here, &everywhere, 1, MPI_INT, MPI_MIN, links.comm));
  if (strcmp(paramString(ParamId::NetGdr), "1") == 0 && !everywhere) {
    // (An agreed setting: every rank returns here.)
    CHORUS_WARN("rank %d: CHORUS_NET_GDR=1, but %s", links.rank,
                here ? "another rank cannot use GPUDirect RDMA (its WARN line says why)" : why);
    return Status::Unsupported;
  }
  CHORUS_INFO(kSubsysNet, "rank %d: GPUDirect RDMA %s for the device links across nodes: %s", links.rank,
              everywhere ? "on" : "off", here && !everywhere ? "another rank cannot use it" : why);
  net->gdr = everywhere != 0;
  if (everywhere) {
    CHORUS_CUDACHECK(cudaGetDevice(&g_gdrDevice));
    config.memory.slotAlloc = takeDeviceSlots;
    config.memory.slotFree = giveMapped;
#ifdef CHORUS_CUDA_EMULATION
    config.memory.slotsMemoryType = UCS_MEMORY_TYPE_HOST;
#else
    config.memory.slotsMemoryType = UCS_MEMORY_TYPE_CUDA;
#endif
    config.memory.slotsFlush = flushGdrWrites;
  }
  // Collective: every rank enters, whatever failed above.
  const Status s = netProxyCreate(links, config, &net->proxy);
  if (s != Status::Ok) return s;
  return word ? Status::Ok : Status::CudaError;
#else
  (void)links;
  (void)nchannels;
  (void)peers;
  CHORUS_WARN("rank %d: device buffers across nodes need the ucx transport, which this build lacks; set "
              "CHORUS_NET_DEVICE=staged", links.rank);
  return Status::Unsupported;
#endif
}

FifoEnd cudaNetEnd(const CudaNet &net, int channel, int peer, bool send) {
#ifdef CHORUS_HAVE_UCX
  return deviceView(send ? netProxySendEnd(*net.proxy, channel, peer) : netProxyRecvEnd(*net.proxy, channel, peer));
#else
  (void)net, (void)channel, (void)send;
  FifoEnd e{};
  e.peer = peer;
  return e;
#endif
}

const int *cudaNetAbortWord(const CudaNet &net) { return net.abortDevice; }

bool cudaNetGdr(const CudaNet &net) { return net.gdr; }

Status cudaNetStart(CudaNet &net) {
#ifdef CHORUS_HAVE_UCX
  return netProxyStart(*net.proxy, net.abortHost);
#else
  (void)net;
  return Status::Unsupported;
#endif
}

void cudaNetKick(CudaNet &net) {
#ifdef CHORUS_HAVE_UCX
  netProxyKick(*net.proxy);
#else
  (void)net;
#endif
}

void cudaNetClosing(CudaNet &net) {
#ifdef CHORUS_HAVE_UCX
  netProxyClosing(*net.proxy);
#else
  (void)net;
#endif
}

bool cudaNetFailed(CudaNet &net, Status *status, char *text, size_t len) {
#ifdef CHORUS_HAVE_UCX
  return net.proxy && netProxyFailure(*net.proxy, status, text, len);
#else
  (void)net, (void)status, (void)text, (void)len;
  return false;
#endif
}

void cudaNetFree(CudaNet *net) {
  if (!net) return;
#ifdef CHORUS_HAVE_UCX
  netProxyFree(net->proxy);
#endif
  if (net->abortHost) giveMapped(net->abortHost);
  delete net;
}

}  // namespace chorus
