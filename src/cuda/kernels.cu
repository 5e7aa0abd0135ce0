// Dispatch of a launch to its kernel group, by the element type's row of
// the instantiation table.
#include "cuda/kernel_table.h"
#include "cuda/kernels.h"

namespace chorus {

Status launchCollective(const LaunchRequest &reqIn, cudaStream_t stream) {
  LaunchRequest req = reqIn;
  if (req.coll == Coll::Bcast || req.coll == Coll::Allgather || req.coll == Coll::Alltoall)
    return launchKernelGroup<0>(req, stream);
  if (isSignedInteger(req.type) && signAgnostic(req.op)) req.type = unsignedTwin(req.type);
  switch (req.type) {
#define CHORUS_TYPE_CASE(D, T, G) \
  case DataType::D: return launchKernelGroup<G>(req, stream);
    CHORUS_TYPE_TABLE(CHORUS_TYPE_CASE)
#undef CHORUS_TYPE_CASE
    default: return Status::InternalError;
  }
}

}  // namespace chorus
