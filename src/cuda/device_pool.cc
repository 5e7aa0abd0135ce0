#include "cuda/device_pool.h"

#include <algorithm>
#include <vector>

#include "core/log.h"
#include "cuda/cuda_check.h"

namespace chorus {

namespace {

struct Block {
  void *ptr;
  size_t bytes;
  PoolMemory kind;
  int device;  // device blocks: the device they are on
};

struct Pool {
  std::shared_mutex mu;  // exclusive but for launches
  std::vector<Block> taken;  // handed out
  std::vector<Block> idle;   // given back, not yet freed
  std::vector<cudaEvent_t> launches;
};

// Never destroyed: a communicator freed from a static destructor after
// MPI_Finalize must still find it.
Pool &pool() {
  static Pool *p = new Pool;
  return *p;
}

void freeBlock(const Block &b) {
  if (b.kind == PoolMemory::Device) CHORUS_CUDACHECK_IGNORE(cudaFree(b.ptr));
  else CHORUS_CUDACHECK_IGNORE(cudaFreeHost(b.ptr));
}

// No Chorus kernel of this process can be running: every tracked last
// launch has completed.  Under the pool's lock.
bool quiet(Pool &p) {
  for (cudaEvent_t e : p.launches) {
    const cudaError_t s = cudaEventQuery(e);
    if (s == cudaErrorNotReady) return false;
    if (s != cudaSuccess) cudaGetLastError();  // a failed kernel left an error: it runs no more
  }
  return true;
}

void freeIdleIfQuiet(Pool &p) {
  if (p.idle.empty() || !quiet(p)) return;
  for (const Block &b : p.idle) freeBlock(b);
  p.idle.clear();
}

}  // namespace

Status devicePoolTake(PoolMemory kind, size_t bytes, void **out) {
  *out = nullptr;
  int device = -1;
  if (kind == PoolMemory::Device) CHORUS_CUDACHECK(cudaGetDevice(&device));
  Pool &p = pool();
  std::lock_guard<std::shared_mutex> lock(p.mu);
  for (size_t i = 0; i < p.idle.size(); ++i) {
    const Block &b = p.idle[i];
    if (b.kind == kind && b.device == device && b.bytes >= bytes && b.bytes / 2 <= bytes) {
      *out = b.ptr;
      p.taken.push_back(b);
      p.idle.erase(p.idle.begin() + long(i));
      return Status::Ok;
    }
  }
  // cudaMalloc and cudaHostAlloc do not wait for running kernels; what
  // the pool holds goes first when it can, so that memory does not pile up.
  freeIdleIfQuiet(p);
  void *ptr = nullptr;
  if (kind == PoolMemory::Device) CHORUS_CUDACHECK(cudaMalloc(&ptr, bytes == 0 ? 1 : bytes));
  else CHORUS_CUDACHECK(cudaHostAlloc(&ptr, bytes == 0 ? 1 : bytes, cudaHostAllocMapped));
  p.taken.push_back(Block{ptr, bytes, kind, device});
  *out = ptr;
  return Status::Ok;
}

void devicePoolGive(void *ptr) {
  if (!ptr) return;
  Pool &p = pool();
  std::lock_guard<std::shared_mutex> lock(p.mu);
  auto it = std::find_if(p.taken.begin(), p.taken.end(), [ptr](const Block &b) { return b.ptr == ptr; });
  if (it == p.taken.end()) {
    CHORUS_WARN("device pool: %p was not taken from it; left alone", ptr);
    return;
  }
  p.idle.push_back(*it);
  p.taken.erase(it);
  freeIdleIfQuiet(p);
}

void devicePoolTrackLaunches(cudaEvent_t lastLaunch) {
  Pool &p = pool();
  std::lock_guard<std::shared_mutex> lock(p.mu);
  p.launches.push_back(lastLaunch);
}

void devicePoolUntrackLaunches(cudaEvent_t lastLaunch) {
  Pool &p = pool();
  std::lock_guard<std::shared_mutex> lock(p.mu);
  p.launches.erase(std::remove(p.launches.begin(), p.launches.end(), lastLaunch), p.launches.end());
}

std::shared_lock<std::shared_mutex> devicePoolLaunchGuard() {
  return std::shared_lock<std::shared_mutex>(pool().mu);
}

void devicePoolRelease() {
  Pool &p = pool();
  std::lock_guard<std::shared_mutex> lock(p.mu);
  for (const Block &b : p.idle) freeBlock(b);
  p.idle.clear();
}

}  // namespace chorus
