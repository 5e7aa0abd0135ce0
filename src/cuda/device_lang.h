// Two spellings of CUDA's device language that g++ cannot parse, so that the
// kernels also compile against the CPU emulation (src/cuda/emu), whose
// cuda_runtime.h defines them its own way first.
//
//   CHORUS_LAUNCH(kernel, grid, block, sharedBytes, stream, args...)
//       kernel<<<grid, block, sharedBytes, stream>>>(args...); a kernel
//       template's name goes in parentheses: CHORUS_LAUNCH((k<A, B>), ...).
//   CHORUS_BLOCK_SHARED(Type, name)
//       __shared__ Type name;  one per block, uninitialised.
#pragma once

#include <cuda_runtime.h>

#ifndef CHORUS_LAUNCH
#define CHORUS_LAUNCH(kernel, grid, block, sharedBytes, stream, ...) \
  kernel<<<grid, block, sharedBytes, stream>>>(__VA_ARGS__)
#endif

#ifndef CHORUS_BLOCK_SHARED
#define CHORUS_BLOCK_SHARED(Type, name) __shared__ Type name
#endif

// The memory-model operations the primitives need with a stated scope and
// order, which CUDA's intrinsics do not say (__threadfence_system is a
// fence.sc.sys, volatile is relaxed.sys by the PTX ISA's definition but
// reads as "no ordering" to a C++ reader).  Each is one PTX instruction
// (PTX ISA, "Memory Consistency Model"; sm_70 and later):
//
//   chorusLoadRelaxedSys(p)     ld.relaxed.sys.global.u64: a strong load, morally
//                               strong with the peer GPU's strong stores, so an
//                               8-byte LL line is read whole (single-copy atomicity)
//   chorusStoreRelaxedSys(p,v)  st.relaxed.sys.global.u64
//   chorusLoadRelaxedSys2(p,&a,&b)  ld.relaxed.sys.global.v2.u64 of 16 aligned
//                               bytes: two strong 8-byte loads in one instruction,
//                               each whole on its own (not the pair: an LL unit's
//                               two lines carry a flag each)
//   chorusStoreRelaxedSys2(p,a,b)   st.relaxed.sys.global.v2.u64, likewise
//   chorusLoadAcquireSys(p)     ld.acquire.sys.global.u64
//   chorusStoreReleaseSys(p,v)  st.release.sys.global.u64
//   chorusFenceAcqRelSys()      fence.acq_rel.sys: with a strong load before it an
//                               acquire pattern, with a strong store after it a
//                               release pattern, at system scope (another GPU, the host)
//   chorusGlobalTimerNs()       %globaltimer: nanoseconds, one clock for every SM,
//                               so a block the scheduler moves sees no jump
//
// The CPU emulation (src/cuda/emu) defines them first, as C++ atomics.
#ifndef CHORUS_MEMORY_MODEL_DEFINED
#define CHORUS_MEMORY_MODEL_DEFINED 1
#include <cstdint>

__device__ __forceinline__ uint64_t chorusLoadRelaxedSys(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void chorusStoreRelaxedSys(uint64_t *p, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void chorusLoadRelaxedSys2(const uint64_t *p, uint64_t *a, uint64_t *b) {
  asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];" : "=l"(*a), "=l"(*b) : "l"(p) : "memory");
}
__device__ __forceinline__ void chorusStoreRelaxedSys2(uint64_t *p, uint64_t a, uint64_t b) {
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}
__device__ __forceinline__ uint64_t chorusLoadAcquireSys(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void chorusStoreReleaseSys(uint64_t *p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void chorusFenceAcqRelSys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
__device__ __forceinline__ uint64_t chorusGlobalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#endif
