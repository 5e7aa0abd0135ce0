// The CUDA executor: runs the shared algorithm templates in a kernel on
// device (or managed) buffers, one block per channel, over cuda_ipc FIFOs.
// Its state is created on the first device-buffer call on a communicator
// (collectively), so host-only programs never initialise CUDA.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "coll/host_executor.h"  // CollRequest
#include "core/common.h"

struct CUstream_st;

namespace chorus {

struct PeerLinks;
struct HostChannel;
struct CudaState;

// What a communicator keeps for this executor (comm/context.h holds one):
// its state, created on the first device-buffer call, and the pinned host
// memory that stages device buffers across nodes.
struct CudaAttachment {
  CudaState *state = nullptr;
  void *staging = nullptr;
  size_t stagingBytes = 0;
  bool released = false;  // cudaBeginFree ran
};

// Run (blocking: wait for completion) or enqueue `req` on `stream` (nullptr:
// the legacy default stream) over the communicator's `links`, creating the
// CUDA state collectively on first use.  `nodes`: on a communicator
// spanning nodes, the ranks grouped by node in ring order (the host
// engine's), which the kernels' rings and trees follow; null on one node.
// `wiring`: the channels and device links the planner was given
// (Context::deviceWiring, cudaDeviceWiring), which the set-up follows.
// On failure `errText` says why.
struct NodeLayout;
struct DeviceWiring;
Status cudaExecute(PeerLinks &links, CudaAttachment &cuda, const CollRequest &req, CUstream_st *stream,
                   bool blocking, const NodeLayout *nodes, const DeviceWiring &wiring, char *errText, size_t errLen);

// Device buffers on a communicator spanning nodes (cuda_staged.cc): copied
// into pinned host memory, run by the host executor on `channel`, copied
// back; returns once the result is in recvbuf.  `exactShape`: non-null
// for the exact mode's sums (coll/exact_executor.h, planned as it says).
// `stagedBytes`: the bytes it copied through host memory, both ways
// (CHORUS_STATS).  Also on one node for the exact mode, whose passes have
// no device kernels yet.
Status cudaExecuteStaged(const PeerLinks &links, HostChannel &channel, CudaAttachment &cuda, const CollRequest &req,
                         CUstream_st *stream, const PlanShape *exactShape, size_t *stagedBytes, char *errText,
                         size_t errLen);

// Teardown, around the release's barrier (comm/context.cc): cudaBeginFree,
// before it, waits for the communicator's last launch and unmaps the peers'
// FIFOs; cudaDetach, after it, releases the state and the staging memory,
// this rank's FIFO memory only when `peersDone` (every rank passed the
// barrier, so no peer's kernel still writes into it).
void cudaBeginFree(CudaAttachment &cuda);
void cudaDetach(CudaAttachment &cuda, bool peersDone);
// Its halves (cuda_executor.cc, cuda_staged.cc).  keepFifos: leave this
// rank's FIFO memory allocated (a peer may still write into it).
void cudaStateFree(CudaState *st, bool keepFifos = false);
void cudaStagingFree(CudaAttachment &cuda);

}  // namespace chorus
