// Where the perf tools put their buffers: host memory always, device memory
// when the tools were built with CUDA (CHORUS_PERF_HAVE_CUDA) and a GPU is
// present.  Host-side staging and all checking go through copyIn/copyOut, so
// the driver never touches device memory directly.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>

namespace perf {

enum class MemKind { Host, Device };

// Prepare `kind` on this rank (device: pick GPU localRank % deviceCount).
// False, with a one-line reason in *why, if it cannot be used here.
// *where describes the memory (e.g. "host", "GPU 0 NVIDIA H200 (pci 0000:1b:00.0)").
bool memSetup(MemKind kind, int localRank, std::string *where, std::string *why);

// nullptr on failure.  Allocations are at least 64 bytes and page aligned.
void *memAlloc(MemKind kind, size_t bytes);
void memFree(MemKind kind, void *p);
// Copy between a host staging buffer and a buffer of `kind`; false on error.
bool memCopyIn(MemKind kind, void *dst, const void *hostSrc, size_t bytes);
bool memCopyOut(MemKind kind, void *hostDst, const void *src, size_t bytes);

// This process's memory from /proc/self/status, in bytes: peak resident
// set (VmHWM) and resident shared memory now (RssShmem: the FIFOs of Chorus
// and MPI's own shared memory).  Zero where the kernel does not say.
struct Footprint {
  long long peakRss;
  long long shmRss;
};
Footprint processFootprint();

// The device half, in memory_cuda.cc (built only with CUDA).
namespace cudamem {
bool setup(int localRank, std::string *where, std::string *why);
void *alloc(size_t bytes);
void free(void *p);
bool copyIn(void *dst, const void *hostSrc, size_t bytes);
bool copyOut(void *hostDst, const void *src, size_t bytes);
}  // namespace cudamem

}  // namespace perf
