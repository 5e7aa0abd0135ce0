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

struct Context;
struct CudaState;

// Run (blocking: wait for completion) or enqueue `req` on `stream` (nullptr:
// the legacy default stream).  On failure `errText` says why.
Status cudaExecute(Context &ctx, const CollRequest &req, CUstream_st *stream, bool blocking, char *errText,
                   size_t errLen);

// Release the CUDA state of a context (local, from the context's destructor).
void cudaStateFree(CudaState *st);

// Device buffers on a communicator spanning nodes (cuda_staged.cc): copied
// into pinned host memory, run by the host executor, copied back; returns
// once the result is in recvbuf.
Status cudaExecuteStaged(Context &ctx, const CollRequest &req, CUstream_st *stream, char *errText, size_t errLen);
// Release the context's staging memory (local).
void cudaStagingFree(Context &ctx);

}  // namespace chorus
