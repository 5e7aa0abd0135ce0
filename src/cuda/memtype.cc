#include "cuda/memtype.h"

#include <dlfcn.h>
#include <link.h>

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

int findDriver(dl_phdr_info *info, size_t, void *found) {
  const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : nullptr;
  base = base ? base + 1 : info->dlpi_name;
  if (base && strncmp(base, "libcuda.so", 10) == 0) {
    *static_cast<bool *>(found) = true;
    return 1;
  }
  return 0;
}

bool driverLoaded() {
  static std::atomic<bool> loaded{false};
  static std::atomic<unsigned long long> lastLoadCount{~0ull};
  if (loaded.load(std::memory_order_relaxed)) return true;
  unsigned long long count = 0;
  dl_iterate_phdr(readLoadCount, &count);
  if (count == lastLoadCount.load(std::memory_order_relaxed)) return false;
  bool found = false;
  dl_iterate_phdr(findDriver, &found);
  lastLoadCount = count;
  if (found) loaded = true;  // the driver is never unloaded once in use
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
  static GetAttr getAttr = nullptr;
  if (!getAttr) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (lib) getAttr = reinterpret_cast<GetAttr>(dlsym(lib, "cuPointerGetAttribute"));
    if (!getAttr) return Status::Ok;
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
