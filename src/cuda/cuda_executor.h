// The CUDA executor: runs the shared algorithm templates in a kernel on
// device (or managed) buffers, one block per channel, over cuda_ipc FIFOs.
// Its state is created on the first device-buffer call on a communicator
// (collectively), so host-only programs never initialise CUDA.
#pragma once

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
};

// Run (blocking: wait for completion) or enqueue `req` on `stream` (nullptr:
// the legacy default stream) over the communicator's `links`, creating the
// CUDA state collectively on first use.  On failure `errText` says why.
Status cudaExecute(PeerLinks &links, CudaAttachment &cuda, const CollRequest &req, CUstream_st *stream,
                   bool blocking, char *errText, size_t errLen);

// Device buffers on a communicator spanning nodes (cuda_staged.cc): copied
// into pinned host memory, run by the host executor on `channel`, copied
// back; returns once the result is in recvbuf.
Status cudaExecuteStaged(const PeerLinks &links, HostChannel &channel, CudaAttachment &cuda, const CollRequest &req,
                         CUstream_st *stream, char *errText, size_t errLen);

// Release the state and the staging memory (local, from the context's
// destructor).
void cudaDetach(CudaAttachment &cuda);
// Its two halves (cuda_executor.cc, cuda_staged.cc).
void cudaStateFree(CudaState *st);
void cudaStagingFree(CudaAttachment &cuda);

}  // namespace chorus
