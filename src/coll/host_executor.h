// The host executor: runs the shared algorithm templates in the calling
// thread over host memory, with the shm primitives.
#pragma once

#include "coll/algorithms.h"
#include "coll/host_channel.h"

namespace chorus {

struct CollRequest {
  Coll coll;
  Algo algo;
  DataType type;     // Bytes for the copy-only collectives
  RedOp op;
  size_t count;      // elements (see CollArgs::count)
  size_t elemSize;   // bytes per element
  const void *sendbuf;  // MPI_IN_PLACE already resolved
  void *recvbuf;
  int root;
};

Status hostExecute(HostChannel &ch, const CollRequest &req);

// Per element type, instantiated in host_exec_*.cc to spread compile time.
template <typename T>
Status hostExecuteReduction(HostChannel &ch, const CollRequest &req);

}  // namespace chorus
