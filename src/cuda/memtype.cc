#include "cuda/memtype.h"

#include <dlfcn.h>
#include <link.h>
#include <time.h>

#include <atomic>
#include <cstring>

#ifdef CHORUS_HAVE_CUDA
#include <cuda_runtime.h>

#include <mutex>
#endif

namespace chorus {

namespace {

// A process that holds device memory has loaded the driver (libcuda), even
// through a statically linked cudart.  Until it is loaded every pointer is
// host memory, and asking CUDA would load and initialise the driver in
// host-only programs.  This runs on every call, so it must cost nothing:
// dlopen(RTLD_NOLOAD) searches the library path on disk each time (about a
// millisecond); instead look at the list of loaded objects, and only when
// its "objects ever added" count has moved since the last look.
int readLoadCount(dl_phdr_info *info, size_t, void *count) {
  *static_cast<unsigned long long *>(count) = info->dlpi_adds;
  return 1;  // the count is the same in every entry: stop at the first
}

// The driver, or the CPU emulation of CUDA that stands in for it in builds
// configured with --enable-cuda-emulation (src/cuda/emu).
int findDriver(dl_phdr_info *info, size_t, void *found) {
  const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : nullptr;
  base = base ? base + 1 : info->dlpi_name;
  if (base && (strncmp(base, "libcuda.so", 10) == 0 || strncmp(base, "libchorus_cudaemu.so", 20) == 0)) {
    *static_cast<bool *>(found) = true;
    return 1;
  }
  return 0;
}

// Even that look is too dear for every call: dl_iterate_phdr takes the
// loader's lock, and the locked instruction waits for the caller's earlier
// stores to drain.  A broadcast root's stores into its peers' FIFOs then
// stall it: 8-byte broadcasts at 2 ranks took 0.30 us instead of 0.2.  So
// a look that found no driver stands until the coarse clock ticks (1-4
// ms): loading the driver, creating a context and allocating device
// memory take far longer than one tick, so no device pointer can appear
// before the next look.  Reading the coarse clock costs ~4 ns, no lock.
int64_t coarseTick() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool driverLoaded() {
  static std::atomic<bool> loaded{false};
  static std::atomic<unsigned long long> lastLoadCount{~0ull};
  static std::atomic<int64_t> absentAtTick{-1};
  if (loaded.load(std::memory_order_relaxed)) return true;
  const int64_t tick = coarseTick();
  if (tick == absentAtTick.load(std::memory_order_relaxed)) return false;
  absentAtTick.store(-1, std::memory_order_relaxed);
  unsigned long long count = 0;
  dl_iterate_phdr(readLoadCount, &count);
  bool found = false;
  if (count != lastLoadCount.load(std::memory_order_relaxed)) {
    dl_iterate_phdr(findDriver, &found);
    lastLoadCount = count;
  }
  if (found) loaded = true;  // the driver is never unloaded once in use
  else absentAtTick.store(tick, std::memory_order_relaxed);
  return found;
}

}  // namespace

bool deviceMemoryPossible() { return driverLoaded(); }

const char *memTypeName(MemType t) {
  switch (t) {
    case MemType::Host: return "host memory";
    case MemType::Device: return "device memory";
    case MemType::Managed: return "managed memory";
  }
  return "?";
}

#ifdef CHORUS_HAVE_CUDA

namespace {

// cudart is linked statically and loads the driver on first use; with no
// driver or no GPU every call fails, and we must then treat all memory as
// host memory without touching CUDA again.
bool probeGpu() {
  static std::once_flag once;
  static bool present = false;
  std::call_once(once, [] {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    present = e == cudaSuccess && n > 0;
    cudaGetLastError();  // clear a sticky "no driver" error
  });
  return present;
}

}  // namespace

bool cudaAvailable() { return driverLoaded() && probeGpu(); }

Status detectMemType(const void *p, MemType *out) {
  *out = MemType::Host;
  if (p == nullptr || !driverLoaded() || !probeGpu()) return Status::Ok;
  cudaPointerAttributes attr;
  cudaError_t e = cudaPointerGetAttributes(&attr, p);
  if (e != cudaSuccess) {
    // Older runtimes return cudaErrorInvalidValue for plain malloc memory.
    cudaGetLastError();
    return Status::Ok;
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice: *out = MemType::Device; break;
    case cudaMemoryTypeManaged: *out = MemType::Managed; break;
    default: *out = MemType::Host; break;  // unregistered, pinned or registered host memory
  }
  return Status::Ok;
}

#else  // !CHORUS_HAVE_CUDA

bool cudaAvailable() { return false; }

// Without CUDA we still want a clear error, not a crash, for a device
// pointer.  A process holding device memory has the driver loaded already:
// ask it for the pointer's attributes once driverLoaded() sees it.  (Driver
// API values: CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
// CU_POINTER_ATTRIBUTE_IS_MANAGED = 8, CU_MEMORYTYPE_DEVICE = 2.)
Status detectMemType(const void *p, MemType *out) {
  *out = MemType::Host;
  if (p == nullptr || !driverLoaded()) return Status::Ok;
  using GetAttr = int (*)(void *, int, unsigned long long);
  // Threads may look it up at once; they all find the same address.
  static std::atomic<GetAttr> cachedGetAttr{nullptr};
  GetAttr getAttr = cachedGetAttr.load(std::memory_order_acquire);
  if (!getAttr) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (lib) getAttr = reinterpret_cast<GetAttr>(dlsym(lib, "cuPointerGetAttribute"));
    if (!getAttr) return Status::Ok;
    cachedGetAttr.store(getAttr, std::memory_order_release);
  }
  unsigned int memType = 0, managed = 0;
  const auto addr = static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p));
  if (getAttr(&memType, 2, addr) != 0) return Status::Ok;  // unknown to the driver: host memory
  if (getAttr(&managed, 8, addr) == 0 && managed) *out = MemType::Managed;
  else if (memType == 2) *out = MemType::Device;
  return Status::Ok;
}

#endif

}  // namespace chorus
