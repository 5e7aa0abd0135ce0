// The device language of CUDA as Chorus's kernels use it, for g++: a kernel
// is a plain function, each of its threads a fiber on its block's host
// thread (block.cc switches them at __syncthreads and the clock).
//
// Per-thread state (threadIdx, the block's shared memory...) lives in an
// inline thread_local of *this header*, set by the launch closure below,
// which is compiled into the same shared object as the kernel: libchorus
// hides its symbols, so a variable defined in libchorus_cudaemu would be
// another copy from the one the kernel reads.
#pragma once

#include <sched.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

// ---- qualifiers ----------------------------------------------------------------------
// Empty: everything is host code.  __noinline__ too: libstdc++ spells
// __attribute__((__noinline__)), which stays valid as __attribute__(()).
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)

namespace chorus_emu {

struct BlockState;  // block.cc: the barrier and shared memory of one block

// What a device thread knows about itself.
// (Not named like the built-ins: those are macros below.)
struct ThreadCoords {
  uint3 threadIndex, blockIndex;
  dim3 blockSize, gridSize;
  BlockState *block;
  // The kernel as its launch spelled it, and the function that launched it
  // (its template arguments name the instantiation): for the alignment trap.
  const char *kernel;
  const char *launcher;
};

inline thread_local ThreadCoords tDevice;
inline thread_local size_t tSharedUsed;  // bytes of the block's shared memory handed out so far

// A block's threads are fibers on one host thread (block.cc), switched
// only inside the barriers and the clock: each call that may switch keeps
// the calling thread's locals above on its own stack and puts them back.
struct FiberLocals {
  ThreadCoords device = tDevice;
  size_t sharedUsed = tSharedUsed;
  ~FiberLocals() {
    tDevice = device;
    tSharedUsed = sharedUsed;
  }
};

// block.cc, exported by libchorus_cudaemu.
void blockBarrier(BlockState *block);
// The barrier that also ORs a predicate over the block (__syncthreads_or).
int blockBarrierOr(BlockState *block, int predicate);
void *blockSharedMemory(BlockState *block, size_t *capacity);
long long deviceClock();

// The k-th shared variable a thread declares is the k-th of every thread of
// its block (all threads run the same declarations in the same order), so a
// bump allocator per thread hands every thread the same address.
template <typename T>
T &blockShared() {
  static_assert(std::is_trivial<T>::value, "shared memory holds trivial types, uninitialised as on a GPU");
  size_t capacity = 0;
  char *base = static_cast<char *>(blockSharedMemory(tDevice.block, &capacity));
  const size_t at = (tSharedUsed + alignof(T) - 1) / alignof(T) * alignof(T);
  tSharedUsed = at + sizeof(T);
  if (tSharedUsed > capacity) __builtin_trap();  // more __shared__ than a block has
  return *reinterpret_cast<T *>(base + at);
}

// One thread of one block of a launched grid: what the stream runs.
using DeviceThreadBody = std::function<void(const ThreadCoords &)>;

// streams.cc: queue a grid of `grid` blocks of `block` threads on `stream`;
// sets the launch error cudaGetLastError reports.
void submitKernel(cudaStream_t stream, dim3 grid, dim3 block, DeviceThreadBody body);

// <<<grid, block, shmem, stream>>>(args...): the arguments are converted to
// the kernel's parameter types now and copied into the closure, as CUDA
// copies them at launch; each thread then gets its own copy as a call would.
template <typename... Params, typename... Args>
void launchKernel(const char *name, const char *launcher, void (*kernel)(Params...), dim3 grid, dim3 block,
                  size_t /*sharedBytes: static only*/, cudaStream_t stream, Args &&...args) {
  std::tuple<std::decay_t<Params>...> params(std::forward<Args>(args)...);
  submitKernel(stream, grid, block, [kernel, params, name, launcher](const ThreadCoords &coords) {
    tDevice = coords;
    tDevice.kernel = name;
    tDevice.launcher = launcher;
    tSharedUsed = 0;
    std::apply(kernel, params);
  });
}

// A GPU faults on an access not aligned to its width ("misaligned
// address", the kernel dies); x86 does it silently.  So the sized accesses
// the kernels make through the helpers below check, and a misaligned one
// aborts the process naming the kernel, the thread and the address, as
// the GPU would have failed the launch.
__attribute__((noinline, cold)) inline void misalignedAccess(const void *p, size_t width, const char *what) {
  fprintf(stderr,
          "chorus cuda emulation: misaligned %zu-byte %s at %p in kernel %s (block %u, thread %u), launched by %s: "
          "a GPU faults here\n",
          width, what, p, tDevice.kernel ? tDevice.kernel : "?", tDevice.blockIndex.x, tDevice.threadIndex.x,
          tDevice.launcher ? tDevice.launcher : "?");
  fflush(stderr);
  abort();
}
inline void checkAligned(const void *p, size_t width, const char *what) {
  if (__builtin_expect((reinterpret_cast<uintptr_t>(p) & (width - 1)) != 0, 0)) misalignedAccess(p, width, what);
}

}  // namespace chorus_emu

// ---- built-in variables and functions -----------------------------------------------

#define threadIdx (::chorus_emu::tDevice.threadIndex)
#define blockIdx (::chorus_emu::tDevice.blockIndex)
#define blockDim (::chorus_emu::tDevice.blockSize)
#define gridDim (::chorus_emu::tDevice.gridSize)

inline void __syncthreads() {
  ::chorus_emu::FiberLocals keep;
  ::chorus_emu::blockBarrier(::chorus_emu::tDevice.block);
}
inline int __syncthreads_or(int predicate) {
  ::chorus_emu::FiberLocals keep;
  return ::chorus_emu::blockBarrierOr(::chorus_emu::tDevice.block, predicate);
}

// x86-64 orders loads and stores more strongly than a GPU; a full fence is
// the closest host equivalent (and what keeps the compiler from moving
// accesses across it).
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// Cycles, counted in nanoseconds (cudaDevAttrClockRate says 1 GHz).  Every
// spin-wait of the kernels reads the clock now and then: that is where a
// device thread that has run for 20 us yields its core to the others
// (threads outnumber cores; block.cc says why 20).
inline long long clock64() {
  ::chorus_emu::FiberLocals keep;
  return ::chorus_emu::deviceClock();
}

// The scoped memory operations of src/cuda/device_lang.h, as C++ atomics
// (x86 makes every one of them cheap; what they prove here is that the
// primitives call them where the PTX versions go).  The global timer yields
// like clock64: the kernels' spin-waits read it every 1024 polls.
#define CHORUS_MEMORY_MODEL_DEFINED 1
inline uint64_t chorusLoadRelaxedSys(const uint64_t *p) {
  ::chorus_emu::checkAligned(p, 8, "load");
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
inline void chorusStoreRelaxedSys(uint64_t *p, uint64_t v) {
  ::chorus_emu::checkAligned(p, 8, "store");
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
inline void chorusLoadRelaxedSys2(const uint64_t *p, uint64_t *a, uint64_t *b) {
  ::chorus_emu::checkAligned(p, 16, "load");
  *a = __atomic_load_n(p, __ATOMIC_RELAXED);
  *b = __atomic_load_n(p + 1, __ATOMIC_RELAXED);
}
inline void chorusStoreRelaxedSys2(uint64_t *p, uint64_t a, uint64_t b) {
  ::chorus_emu::checkAligned(p, 16, "store");
  __atomic_store_n(p, a, __ATOMIC_RELAXED);
  __atomic_store_n(p + 1, b, __ATOMIC_RELAXED);
}
inline uint64_t chorusLoadAcquireSys(const uint64_t *p) {
  ::chorus_emu::checkAligned(p, 8, "load");
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
inline void chorusStoreReleaseSys(uint64_t *p, uint64_t v) {
  ::chorus_emu::checkAligned(p, 8, "store");
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
inline void chorusFenceAcqRelSys() { std::atomic_thread_fence(std::memory_order_acq_rel); }
inline uint64_t chorusGlobalTimerNs() {
  ::chorus_emu::FiberLocals keep;
  return uint64_t(::chorus_emu::deviceClock());
}

// "Cache volatile": a load the compiler may not cache or merge.
inline unsigned int __ldcv(const unsigned int *p) {
  ::chorus_emu::checkAligned(p, 4, "load");
  return *reinterpret_cast<const volatile unsigned int *>(p);
}
inline unsigned long long __ldcv(const unsigned long long *p) {
  ::chorus_emu::checkAligned(p, 8, "load");
  return *reinterpret_cast<const volatile unsigned long long *>(p);
}
inline uint4 __ldcv(const uint4 *p) {
  ::chorus_emu::checkAligned(p, 16, "load");
  const volatile unsigned long long *q = reinterpret_cast<const volatile unsigned long long *>(p);
  const unsigned long long lo = q[0], hi = q[1];
  uint4 v;
  std::memcpy(&v, &lo, 8);
  std::memcpy(reinterpret_cast<char *>(&v) + 8, &hi, 8);
  return v;
}

// "Cache global": a store to L2 only; here a plain store of the same width.
template <typename W>
inline void __stcg(W *p, W v) {
  ::chorus_emu::checkAligned(p, sizeof(W), "store");
  *p = v;
}

inline int atomicCAS(int *address, int compare, int val) {
  __atomic_compare_exchange_n(address, &compare, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;  // the old value, whether or not it was swapped
}

// Chorus's spellings of what g++ cannot parse (src/cuda/device_lang.h).
#define CHORUS_LAUNCH(kernel, grid, block, sharedBytes, stream, ...) \
  ::chorus_emu::launchKernel(#kernel, __PRETTY_FUNCTION__, kernel, grid, block, sharedBytes, stream, __VA_ARGS__)
#define CHORUS_BLOCK_SHARED(Type, name) Type &name = ::chorus_emu::blockShared<Type>()
