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
  // Non-null when the element type has gaps that the receive buffer's
  // owner keeps (MPI_DOUBLE_INT...): the executors stage the result.
  const TypeLayout *gaps = nullptr;
  bool skipOwnBlock = false;  // see CollArgs
};

Status hostExecute(HostChannel &ch, const CollRequest &req);

// Bytes this rank's recvbuf receives in `req` (0 when it receives none:
// a bcast root, a reduce non-root, a barrier).
size_t receivedBytes(const CollRequest &req, int rank, int nranks);

// Bytes this rank's sendbuf contributes in `req` (0 when it sends none: a
// bcast non-root, a barrier).
size_t sentBytes(const CollRequest &req, int rank, int nranks);

// The reductions of one group of the type table (coll/type_table.h),
// instantiated in host_exec_*.cc to spread compile time.
template <int Group>
Status hostExecuteGroup(HostChannel &ch, const CollRequest &req);

}  // namespace chorus
