// Host buffers, and dispatch to the CUDA half when it is built.
#include "memory.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace perf {
namespace {

constexpr size_t kPage = 4096;

size_t roundUp(size_t bytes) {
  const size_t b = bytes < 64 ? 64 : bytes;
  return (b + kPage - 1) / kPage * kPage;
}

}  // namespace

bool memSetup(MemKind kind, int localRank, std::string *where, std::string *why) {
  if (kind == MemKind::Host) {
    *where = "host";
    return true;
  }
#ifdef CHORUS_PERF_HAVE_CUDA
  return cudamem::setup(localRank, where, why);
#else
  (void)localRank;
  (void)where;
  *why = "-m device needs CUDA, but Chorus and its perf tools were built without it (configure --with-cuda)";
  return false;
#endif
}

void *memAlloc(MemKind kind, size_t bytes) {
  if (kind == MemKind::Host) return std::aligned_alloc(kPage, roundUp(bytes));
#ifdef CHORUS_PERF_HAVE_CUDA
  return cudamem::alloc(roundUp(bytes));
#else
  return nullptr;
#endif
}

void memFree(MemKind kind, void *p) {
  if (kind == MemKind::Host) {
    std::free(p);
    return;
  }
#ifdef CHORUS_PERF_HAVE_CUDA
  cudamem::free(p);
#endif
}

bool memCopyIn(MemKind kind, void *dst, const void *hostSrc, size_t bytes) {
  if (kind == MemKind::Host) {
    if (bytes) std::memcpy(dst, hostSrc, bytes);
    return true;
  }
#ifdef CHORUS_PERF_HAVE_CUDA
  return cudamem::copyIn(dst, hostSrc, bytes);
#else
  return false;
#endif
}

bool memCopyOut(MemKind kind, void *hostDst, const void *src, size_t bytes) {
  if (kind == MemKind::Host) {
    if (bytes) std::memcpy(hostDst, src, bytes);
    return true;
  }
#ifdef CHORUS_PERF_HAVE_CUDA
  return cudamem::copyOut(hostDst, src, bytes);
#else
  return false;
#endif
}

Footprint processFootprint() {
  Footprint f = {0, 0};
  FILE *status = std::fopen("/proc/self/status", "r");
  if (!status) return f;
  char line[256];
  while (std::fgets(line, sizeof line, status)) {
    long long kb = 0;
    if (std::sscanf(line, "VmHWM: %lld kB", &kb) == 1) f.peakRss = kb * 1024;
    if (std::sscanf(line, "RssShmem: %lld kB", &kb) == 1) f.shmRss = kb * 1024;
  }
  std::fclose(status);
  return f;
}

}  // namespace perf
