// Device buffers through the CUDA runtime.  Built only when configure found
// CUDA (Automake conditional HAVE_CUDA); compiled by the host C++ compiler,
// no kernels here.
#include "memory.h"

#include <cuda_runtime.h>

#include <cstdio>

namespace perf {
namespace cudamem {
namespace {

// The runtime's message for a failing call, prefixed by the call.
std::string cudaWhy(const char *call, cudaError_t err) {
  return std::string(call) + ": " + cudaGetErrorString(err);
}

}  // namespace

bool setup(int localRank, std::string *where, std::string *why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    *why = "-m device: no usable GPU (" + cudaWhy("cudaGetDeviceCount", err) + ")";
    return false;
  }
  if (count == 0) {
    *why = "-m device: no GPU found (cudaGetDeviceCount returned 0)";
    return false;
  }
  // Ranks of a node share GPUs round robin; Chorus allows several per GPU.
  const int dev = localRank % count;
  err = cudaSetDevice(dev);
  if (err != cudaSuccess) {
    *why = "-m device: " + cudaWhy("cudaSetDevice", err);
    return false;
  }
  cudaDeviceProp prop;
  err = cudaGetDeviceProperties(&prop, dev);
  if (err != cudaSuccess) {
    *why = "-m device: " + cudaWhy("cudaGetDeviceProperties", err);
    return false;
  }
  char desc[512];
  std::snprintf(desc, sizeof desc, "GPU %d %s (pci %04x:%02x:%02x.0)", dev, prop.name, prop.pciDomainID,
                prop.pciBusID, prop.pciDeviceID);
  *where = desc;
  return true;
}

void *alloc(size_t bytes) {
  void *p = nullptr;
  return cudaMalloc(&p, bytes) == cudaSuccess ? p : nullptr;
}

void free(void *p) {
  if (p) cudaFree(p);
}

bool copyIn(void *dst, const void *hostSrc, size_t bytes) {
  return bytes == 0 || cudaMemcpy(dst, hostSrc, bytes, cudaMemcpyHostToDevice) == cudaSuccess;
}

bool copyOut(void *hostDst, const void *src, size_t bytes) {
  return bytes == 0 || cudaMemcpy(hostDst, src, bytes, cudaMemcpyDeviceToHost) == cudaSuccess;
}

}  // namespace cudamem
}  // namespace perf
