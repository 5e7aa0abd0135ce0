// Device FIFOs to ranks on other nodes: pinned host memory for the device
// proxy's FIFO copies, and the kernels' views of them (cuda_net.h).
//
// Why pinned host memory and not device memory registered with UCX
// (GPUDirect RDMA): UCX as Debian builds it has no CUDA memory support, and
// without GPUDirect every byte crosses PCIe into host memory before it can
// leave the node anyway.  The kernel's stores go there directly (one PCIe
// crossing, as a NIC reading device memory would make), and the peer's
// kernel reads its receive slots across PCIe; no CPU copies a byte on the
// way when UCX puts (CHORUS_NET_PROTO).
#include "cuda/cuda_net.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/log.h"
#include "cuda/cuda_check.h"
#include "cuda/device_channel.h"
#include "cuda/device_pool.h"
#ifdef CHORUS_HAVE_UCX
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

}  // namespace

struct CudaNet {
#ifdef CHORUS_HAVE_UCX
  NetProxy *proxy = nullptr;
#endif
  int *abortHost = nullptr;  // pinned, mapped: DevCollArgs::netAbort
  int *abortDevice = nullptr;
};

Status cudaNetCreate(const PeerLinks &links, int nchannels, CudaNet **out) {
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
  config.slotBytes = kCudaSlotBytes;
  config.nslots = kCudaSlots;
  config.alloc = takeMapped;
  config.release = giveMapped;
  // Collective: every rank enters, whatever failed above.
  const Status s = netProxyCreate(links, config, &net->proxy);
  if (s != Status::Ok) return s;
  return word ? Status::Ok : Status::CudaError;
#else
  (void)links;
  (void)nchannels;
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
