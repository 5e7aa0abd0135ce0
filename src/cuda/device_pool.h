// The memory of communicators' CUDA state (device FIFOs, channel tables,
// scratch, the host-mapped error record), taken from and given back to one
// process-wide pool, so that creating and freeing a communicator never
// makes a call that waits for the whole device while a Chorus kernel may be
// running.
//
// Why: cudaFree and cudaFreeHost wait for every kernel on the device.  A
// kernel of another communicator may be waiting for a peer rank that
// cannot launch its half until this rank leaves the free (it waits for us
// in MPI, or in the next communicator's set-up): a deadlock that CUDA
// cannot break (NCCL had it, NVIDIA/nccl#194).  So a block given back is
// freed at once only while no Chorus launch of this process is in flight
// (every live communicator's last launch has completed); otherwise it
// waits in the pool, for reuse by the next communicator of its size or for
// the next moment the process is idle, or for MPI_Finalize.  Launches hold
// the pool's lock shared (devicePoolLaunchGuard), so none starts between
// that check and the free, and launches of several threads (communicators
// of one process) do not wait for each other.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <shared_mutex>

#include "core/common.h"

namespace chorus {

enum class PoolMemory { Device, HostMapped };

// A block of at least `bytes` (a reused one is at most twice that), or
// cudaMalloc / cudaHostAlloc(cudaHostAllocMapped).  Device blocks are on
// the current device.  Not zeroed.
Status devicePoolTake(PoolMemory kind, size_t bytes, void **out);
// Give back a block devicePoolTake returned (null: nothing).
void devicePoolGive(void *p);

// The last-launch events of live communicators, which say whether a Chorus
// kernel may be running: registered at set-up, removed before the state goes.
void devicePoolTrackLaunches(cudaEvent_t lastLaunch);
void devicePoolUntrackLaunches(cudaEvent_t lastLaunch);

// Held around a launch and the record of its event (cuda_executor.cc).
std::shared_lock<std::shared_mutex> devicePoolLaunchGuard();

// At MPI_Finalize, after every communicator is freed: free what is left.
void devicePoolRelease();

}  // namespace chorus
