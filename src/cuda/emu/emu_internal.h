// Internals shared by the files of libchorus_cudaemu: the last-error slot,
// the current device, the grid runner and the stream queues.
#pragma once

#include <cuda_runtime.h>

#include <functional>

namespace chorus_emu {

// Record `e` as the calling thread's last error (cudaGetLastError) unless it
// is cudaSuccess, and return it: `return fail(cudaErrorInvalidValue);`.
cudaError_t fail(cudaError_t e);

int currentDevice();
int deviceCount();  // CHORUS_EMU_DEVICES, read once
int smCount();      // CHORUS_EMU_SMS, read once

// Run every thread of a grid as a host thread, all at once; returns when
// the last has finished (block.cc).
void runGrid(dim3 grid, dim3 block, const DeviceThreadBody &body);

// Work a stream does in order (streams.cc).
using StreamOp = std::function<void()>;
cudaError_t enqueue(cudaStream_t stream, StreamOp op);
// Wait for everything queued so far on every stream of this process.
void synchronizeAllStreams();

// Memory of emulated devices (runtime.cc): which device `p` lies on, or -1.
int deviceOfPointer(const void *p);

}  // namespace chorus_emu
