// Errors, devices and memory of the emulation.
//
// Devices: CHORUS_EMU_DEVICES of them per node (default 1), so several
// ranks share one as on a one-GPU machine; the current device is per host
// thread.  The clock runs at 1 GHz: clock64() counts nanoseconds.
//
// Device memory: each process gets one POSIX shared-memory arena per
// device it allocates on ("/chorus-emu-<pid>-<device>", CHORUS_EMU_MEMORY
// bytes, 4 GiB by default, reserved sparse: pages exist once touched), so
// that another process can map it: an IPC handle names the arena and an
// offset in it.  A process unlinks its arenas when it exits, and removes
// those left by processes that died.  Host allocations are plain pages;
// mapped ones have the same address on the device (unified addressing).
#include <dirent.h>
#include <linux/falloc.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "emu_internal.h"

namespace chorus_emu {

namespace {

thread_local cudaError_t tLastError = cudaSuccess;
thread_local int tCurrentDevice = 0;

constexpr size_t kAlign = 256;  // cudaMalloc's alignment
constexpr int kMaxDevices = 64;
constexpr uint32_t kHandleMagic = 0x43454d55;  // "CEMU"

size_t envSize(const char *name, size_t fallback) {
  const char *v = getenv(name);
  if (!v || !*v) return fallback;
  char *end = nullptr;
  const unsigned long long x = strtoull(v, &end, 0);
  if (*end || x == 0) {
    fprintf(stderr, "chorus cuda emulation: %s=%s is not a positive number; using %zu\n", name, v, fallback);
    return fallback;
  }
  return size_t(x);
}

// The handle's 64 bytes.
struct HandleData {
  uint32_t magic;
  int32_t device;
  uint64_t offset;
  uint64_t bytes;
  char arena[40];
};
static_assert(sizeof(HandleData) <= sizeof(cudaIpcMemHandle_t), "an IPC handle holds the arena name and offset");

// One device's memory in this process: first fit over a free list.
struct Arena {
  int device = 0;
  std::string name;
  int fd = -1;
  char *base = nullptr;
  size_t capacity = 0;
  std::map<size_t, size_t> freeBlocks;  // offset -> bytes
  std::map<size_t, size_t> used;        // offset -> bytes

  bool contains(const void *p) const {
    return p >= base && static_cast<const char *>(p) < base + capacity;
  }

  void *allocate(size_t bytes) {
    bytes = (bytes + kAlign - 1) / kAlign * kAlign;
    for (auto it = freeBlocks.begin(); it != freeBlocks.end(); ++it) {
      if (it->second < bytes) continue;
      const size_t off = it->first, left = it->second - bytes;
      freeBlocks.erase(it);
      if (left) freeBlocks[off + bytes] = left;
      used[off] = bytes;
      return base + off;
    }
    return nullptr;
  }

  bool release(void *p) {
    auto it = used.find(size_t(static_cast<char *>(p) - base));
    if (it == used.end()) return false;
    size_t off = it->first, bytes = it->second;
    used.erase(it);
    // Give large blocks' pages back to the system: /dev/shm is memory.
    if (bytes >= (1u << 20)) fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(off), off_t(bytes));
    auto next = freeBlocks.lower_bound(off);
    if (next != freeBlocks.end() && off + bytes == next->first) {
      bytes += next->second;
      freeBlocks.erase(next);
    }
    auto prev = freeBlocks.lower_bound(off);
    if (prev != freeBlocks.begin()) {
      --prev;
      if (prev->first + prev->second == off) {
        prev->second += bytes;
        return true;
      }
    }
    freeBlocks[off] = bytes;
    return true;
  }

  // The allocation that holds p: its offset and size.
  bool find(const void *p, size_t *off, size_t *bytes) const {
    const size_t at = size_t(static_cast<const char *>(p) - base);
    auto it = used.upper_bound(at);
    if (it == used.begin()) return false;
    --it;
    if (at >= it->first + it->second) return false;
    *off = it->first;
    *bytes = it->second;
    return true;
  }
};

// A peer's arena mapped here by cudaIpcOpenMemHandle.
struct Mapping {
  std::string name;
  int device = 0;
  char *base = nullptr;
  size_t capacity = 0;
  int opens = 0;
};

struct Memory {
  std::mutex mu;
  Arena *arenas[kMaxDevices] = {};
  std::vector<Mapping> mappings;
  std::map<void *, size_t> hostAllocs;
};
Memory &memory() {
  static Memory *m = new Memory;  // never destroyed: streams may still copy at exit
  return *m;
}

// Unlinks this process's arenas at exit; peers have mapped them by then.
struct ArenaNames {
  std::mutex mu;
  std::vector<std::string> names;
  ~ArenaNames() {
    for (const std::string &n : names) shm_unlink(n.c_str());
  }
};
ArenaNames g_arenaNames;

// Arenas of processes that no longer exist (killed by a failing test).
void removeStaleArenas() {
  DIR *d = opendir("/dev/shm");
  if (!d) return;
  while (dirent *e = readdir(d)) {
    int pid = 0, dev = 0;
    if (sscanf(e->d_name, "chorus-emu-%d-%d", &pid, &dev) != 2) continue;
    if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) shm_unlink((std::string("/") + e->d_name).c_str());
  }
  closedir(d);
}

Arena *arenaFor(int device) {
  Memory &m = memory();
  if (m.arenas[device]) return m.arenas[device];
  removeStaleArenas();
  auto *a = new Arena;
  a->device = device;
  a->name = "/chorus-emu-" + std::to_string(getpid()) + "-" + std::to_string(device);
  a->capacity = envSize("CHORUS_EMU_MEMORY", size_t(4) << 30);
  a->fd = shm_open(a->name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (a->fd < 0 || ftruncate(a->fd, off_t(a->capacity)) != 0) {
    perror("chorus cuda emulation: cannot create the device memory arena");
    if (a->fd >= 0) close(a->fd);
    delete a;
    return nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(g_arenaNames.mu);
    g_arenaNames.names.push_back(a->name);
  }
  void *p = mmap(nullptr, a->capacity, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, a->fd, 0);
  if (p == MAP_FAILED) {
    perror("chorus cuda emulation: cannot map the device memory arena");
    delete a;
    return nullptr;
  }
  a->base = static_cast<char *>(p);
  a->freeBlocks[0] = a->capacity;
  m.arenas[device] = a;
  return a;
}

Arena *arenaHolding(const void *p) {
  for (Arena *a : memory().arenas)
    if (a && a->contains(p)) return a;
  return nullptr;
}

}  // namespace

cudaError_t fail(cudaError_t e) {
  if (e != cudaSuccess) tLastError = e;
  return e;
}

int deviceCount() {
  static const int n = [] {
    const size_t v = envSize("CHORUS_EMU_DEVICES", 1);
    return int(v > size_t(kMaxDevices) ? kMaxDevices : v);
  }();
  return n;
}

// Streaming multiprocessors a device reports: CHORUS_EMU_SMS (default 132,
// an H100's or H200's).  Nothing runs on them here (every block of a
// launch runs at once on host threads); Chorus sizes its channels by them.
int smCount() {
  static const int n = [] {
    const size_t v = envSize("CHORUS_EMU_SMS", 132);
    return int(v > 100000 ? 100000 : v);
  }();
  return n;
}

int currentDevice() { return tCurrentDevice; }

int deviceOfPointer(const void *p) {
  Memory &m = memory();
  std::lock_guard<std::mutex> lock(m.mu);
  if (Arena *a = arenaHolding(p)) return a->device;
  for (const Mapping &mp : m.mappings)
    if (p >= mp.base && static_cast<const char *>(p) < mp.base + mp.capacity) return mp.device;
  return -1;
}

}  // namespace chorus_emu

using chorus_emu::fail;

namespace {

struct ErrorText {
  cudaError_t code;
  const char *name, *text;
};
const ErrorText kErrors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidContext, "cudaErrorInvalidContext", "invalid device context"},
    {cudaErrorMapBufferObjectFailed, "cudaErrorMapBufferObjectFailed", "mapping of buffer object failed"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
     "operation not permitted when stream is capturing"},
    {cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated",
     "operation failed due to a previous error during capture"},
    {cudaErrorStreamCaptureIsolation, "cudaErrorStreamCaptureIsolation",
     "operation would have resulted in a merge of separate capture sequences"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

const ErrorText &errorText(cudaError_t e) {
  for (const ErrorText &t : kErrors)
    if (t.code == e) return t;
  return kErrors[sizeof kErrors / sizeof kErrors[0] - 1];
}

bool validDevice(int d) { return d >= 0 && d < chorus_emu::deviceCount(); }

}  // namespace

extern "C" {

const char *cudaGetErrorName(cudaError_t e) { return errorText(e).name; }
const char *cudaGetErrorString(cudaError_t e) { return errorText(e).text; }

cudaError_t cudaGetLastError(void) {
  const cudaError_t e = chorus_emu::tLastError;
  chorus_emu::tLastError = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return chorus_emu::tLastError; }

// ---- devices ------------------------------------------------------------------------------

cudaError_t cudaGetDeviceCount(int *count) {
  if (!count) return fail(cudaErrorInvalidValue);
  *count = chorus_emu::deviceCount();
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (!validDevice(device)) return fail(cudaErrorInvalidDevice);
  chorus_emu::tCurrentDevice = device;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device) {
  if (!device) return fail(cudaErrorInvalidValue);
  *device = chorus_emu::tCurrentDevice;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device) {
  if (!value) return fail(cudaErrorInvalidValue);
  if (!validDevice(device)) return fail(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = 1024; return cudaSuccess;
    case cudaDevAttrClockRate: *value = 1000000; return cudaSuccess;  // kHz: clock64() counts nanoseconds
    case cudaDevAttrMultiProcessorCount: *value = chorus_emu::smCount(); return cudaSuccess;
    case cudaDevAttrPciBusId: *value = 0x10 + device; return cudaSuccess;
    case cudaDevAttrPciDeviceId: *value = 0; return cudaSuccess;
    case cudaDevAttrPciDomainId: *value = 0; return cudaSuccess;
  }
  return fail(cudaErrorInvalidValue);
}

// Bus ids no real machine has next to a GPU, so the topology never takes an
// emulated device for one of its PCI devices.
cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device) {
  if (!pciBusId || len <= 0) return fail(cudaErrorInvalidValue);
  if (!validDevice(device)) return fail(cudaErrorInvalidDevice);
  snprintf(pciBusId, size_t(len), "0000:%02x:00.0", 0x10 + device);
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device) {
  if (!prop) return fail(cudaErrorInvalidValue);
  if (!validDevice(device)) return fail(cudaErrorInvalidDevice);
  memset(prop, 0, sizeof *prop);
  snprintf(prop->name, sizeof prop->name, "Chorus CPU emulation (device %d)", device);
  prop->totalGlobalMem = chorus_emu::envSize("CHORUS_EMU_MEMORY", size_t(4) << 30);
  prop->maxThreadsPerBlock = 1024;
  prop->clockRate = 1000000;
  prop->multiProcessorCount = chorus_emu::smCount();
  prop->pciBusID = 0x10 + device;
  return cudaSuccess;
}

// ---- memory -------------------------------------------------------------------------------

cudaError_t cudaMalloc(void **devPtr, size_t size) {
  if (!devPtr) return fail(cudaErrorInvalidValue);
  *devPtr = nullptr;
  if (size == 0) return cudaSuccess;
  chorus_emu::Memory &m = chorus_emu::memory();
  std::lock_guard<std::mutex> lock(m.mu);
  chorus_emu::Arena *a = chorus_emu::arenaFor(chorus_emu::tCurrentDevice);
  void *p = a ? a->allocate(size) : nullptr;
  if (!p) return fail(cudaErrorMemoryAllocation);
  *devPtr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void *devPtr) {
  if (!devPtr) return cudaSuccess;
  // CUDA's cudaFree waits for the device: queued work may still use it.
  chorus_emu::synchronizeAllStreams();
  chorus_emu::Memory &m = chorus_emu::memory();
  std::lock_guard<std::mutex> lock(m.mu);
  chorus_emu::Arena *a = chorus_emu::arenaHolding(devPtr);
  if (!a || !a->release(devPtr)) return fail(cudaErrorInvalidDevicePointer);
  return cudaSuccess;
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t) { return cudaMalloc(devPtr, size); }

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream) {
  if (!devPtr) return cudaSuccess;
  return chorus_emu::enqueue(stream, [devPtr] {
    chorus_emu::Memory &m = chorus_emu::memory();
    std::lock_guard<std::mutex> lock(m.mu);
    if (chorus_emu::Arena *a = chorus_emu::arenaHolding(devPtr)) a->release(devPtr);
  });
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int) {
  if (!pHost) return fail(cudaErrorInvalidValue);
  void *p = mmap(nullptr, size ? size : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return fail(cudaErrorMemoryAllocation);
  chorus_emu::Memory &m = chorus_emu::memory();
  std::lock_guard<std::mutex> lock(m.mu);
  m.hostAllocs[p] = size ? size : 1;
  *pHost = p;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void *ptr) {
  if (!ptr) return cudaSuccess;
  chorus_emu::Memory &m = chorus_emu::memory();
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.hostAllocs.find(ptr);
  if (it == m.hostAllocs.end()) return fail(cudaErrorInvalidValue);
  munmap(it->first, it->second);
  m.hostAllocs.erase(it);
  return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int) {
  if (!pDevice || !pHost) return fail(cudaErrorInvalidValue);
  *pDevice = pHost;  // one address space
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *attr, const void *ptr) {
  if (!attr) return fail(cudaErrorInvalidValue);
  memset(attr, 0, sizeof *attr);
  attr->device = -1;
  const int dev = chorus_emu::deviceOfPointer(ptr);
  if (dev >= 0) {
    attr->type = cudaMemoryTypeDevice;
    attr->device = dev;
    attr->devicePointer = const_cast<void *>(ptr);
    return cudaSuccess;
  }
  chorus_emu::Memory &m = chorus_emu::memory();
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.hostAllocs.upper_bound(const_cast<void *>(ptr));
  if (it != m.hostAllocs.begin()) {
    --it;
    if (static_cast<const char *>(ptr) < static_cast<char *>(it->first) + it->second) {
      attr->type = cudaMemoryTypeHost;
      attr->device = chorus_emu::tCurrentDevice;
      attr->devicePointer = attr->hostPointer = const_cast<void *>(ptr);
      return cudaSuccess;
    }
  }
  attr->type = cudaMemoryTypeUnregistered;  // plain host memory, as CUDA 11+ reports it
  attr->hostPointer = const_cast<void *>(ptr);
  return cudaSuccess;
}

// ---- IPC ----------------------------------------------------------------------------------

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr) {
  if (!handle || !devPtr) return fail(cudaErrorInvalidValue);
  chorus_emu::Memory &m = chorus_emu::memory();
  std::lock_guard<std::mutex> lock(m.mu);
  chorus_emu::Arena *a = chorus_emu::arenaHolding(devPtr);
  size_t off = 0, bytes = 0;
  if (!a || !a->find(devPtr, &off, &bytes)) return fail(cudaErrorInvalidValue);
  chorus_emu::HandleData h;
  memset(&h, 0, sizeof h);
  h.magic = chorus_emu::kHandleMagic;
  h.device = a->device;
  h.offset = off;
  h.bytes = bytes;
  snprintf(h.arena, sizeof h.arena, "%s", a->name.c_str());
  memset(handle, 0, sizeof *handle);
  memcpy(handle, &h, sizeof h);
  return cudaSuccess;
}

cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int) {
  if (!devPtr) return fail(cudaErrorInvalidValue);
  chorus_emu::HandleData h;
  memcpy(&h, &handle, sizeof h);
  if (h.magic != chorus_emu::kHandleMagic || memchr(h.arena, 0, sizeof h.arena) == nullptr)
    return fail(cudaErrorInvalidResourceHandle);
  chorus_emu::Memory &m = chorus_emu::memory();
  std::lock_guard<std::mutex> lock(m.mu);
  for (chorus_emu::Arena *a : m.arenas)
    if (a && a->name == h.arena) return fail(cudaErrorInvalidContext);  // CUDA: not the exporting process
  for (chorus_emu::Mapping &mp : m.mappings) {
    if (mp.name == h.arena) {
      ++mp.opens;
      *devPtr = mp.base + h.offset;
      return cudaSuccess;
    }
  }
  const int fd = shm_open(h.arena, O_RDWR, 0);
  if (fd < 0) return fail(cudaErrorMapBufferObjectFailed);
  struct stat st;
  void *p = MAP_FAILED;
  if (fstat(fd, &st) == 0 && size_t(st.st_size) >= h.offset + h.bytes)
    p = mmap(nullptr, size_t(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return fail(cudaErrorMapBufferObjectFailed);
  chorus_emu::Mapping mp;
  mp.name = h.arena;
  mp.device = h.device;
  mp.base = static_cast<char *>(p);
  mp.capacity = size_t(st.st_size);
  mp.opens = 1;
  m.mappings.push_back(mp);
  *devPtr = mp.base + h.offset;
  return cudaSuccess;
}

cudaError_t cudaIpcCloseMemHandle(void *devPtr) {
  chorus_emu::Memory &m = chorus_emu::memory();
  std::lock_guard<std::mutex> lock(m.mu);
  for (size_t i = 0; i < m.mappings.size(); ++i) {
    chorus_emu::Mapping &mp = m.mappings[i];
    if (devPtr < mp.base || static_cast<char *>(devPtr) >= mp.base + mp.capacity) continue;
    if (--mp.opens == 0) {
      munmap(mp.base, mp.capacity);
      m.mappings.erase(m.mappings.begin() + long(i));
    }
    return cudaSuccess;
  }
  return fail(cudaErrorInvalidResourceHandle);
}

// The driver call memtype.cc makes in builds without the runtime
// (CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2, CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
// CU_MEMORYTYPE_DEVICE = 2; CUDA_ERROR_INVALID_VALUE = 1 for memory it does
// not know).
int cuPointerGetAttribute(void *data, int attribute, unsigned long long ptr) {
  const int dev = chorus_emu::deviceOfPointer(reinterpret_cast<const void *>(uintptr_t(ptr)));
  if (dev < 0 || !data) return 1;
  if (attribute == 2) *static_cast<unsigned int *>(data) = 2;
  else if (attribute == 8) *static_cast<unsigned int *>(data) = 0;
  else return 1;
  return 0;
}

}  // extern "C"
