// Dispatch of a validated request to the algorithm templates.  The copy-only
// collectives move bytes and need no element type.
#include "coll/host_executor_impl.h"

namespace chorus {

namespace {

// Copy-only collectives move whole elements as bytes; Func is never applied.
using Bytes = uint8_t;
using CopyFunc = FuncSum<Bytes>;

Status runCopyCollective(HostChannel &ch, const CollRequest &req) {
  HostPrims<Bytes, CopyFunc> prims(ch);
  CollArgs a = makeArgs(ch, req, 1);
  a.count = req.count * req.elemSize;
  switch (req.coll) {
    case Coll::Bcast:
      if (req.algo == Algo::Direct) bcastDirect<Bytes>(a, prims);
      else if (req.algo == Algo::Publish && prims.canPublish()) bcastPublish<Bytes>(a, prims);
      else if (req.algo != Algo::Local) bcastChain<Bytes>(a, prims);
      break;
    case Coll::Allgather:
      if (req.algo == Algo::Direct || req.algo == Algo::Local) allgatherDirect<Bytes>(a, prims);
      else if (req.algo == Algo::Publish && prims.canPublish()) allgatherPublish<Bytes>(a, prims);
      else allgatherRing<Bytes>(a, prims);
      break;
    case Coll::Alltoall:
      alltoallPairwise<Bytes>(a, prims);
      break;
    case Coll::Barrier:
      barrierDissemination(ch.rank, ch.nranks, prims);
      break;
    default:
      return Status::InternalError;
  }
  return ch.error;
}

}  // namespace

Status hostExecute(HostChannel &ch, const CollRequest &req) {
  if (ch.error != Status::Ok) return Status::Aborted;
  switch (req.coll) {
    case Coll::Bcast:
    case Coll::Allgather:
    case Coll::Alltoall:
    case Coll::Barrier:
      return runCopyCollective(ch, req);
    default:
      break;
  }
  switch (req.type) {
    case DataType::Int8: return hostExecuteReduction<int8_t>(ch, req);
    case DataType::Uint8: return hostExecuteReduction<uint8_t>(ch, req);
    case DataType::Int16: return hostExecuteReduction<int16_t>(ch, req);
    case DataType::Uint16: return hostExecuteReduction<uint16_t>(ch, req);
    case DataType::Int32: return hostExecuteReduction<int32_t>(ch, req);
    case DataType::Uint32: return hostExecuteReduction<uint32_t>(ch, req);
    case DataType::Int64: return hostExecuteReduction<int64_t>(ch, req);
    case DataType::Uint64: return hostExecuteReduction<uint64_t>(ch, req);
    case DataType::Float16: return hostExecuteReduction<Half>(ch, req);
    case DataType::BFloat16: return hostExecuteReduction<BFloat16>(ch, req);
    case DataType::Fp8E4M3: return hostExecuteReduction<Fp8E4M3>(ch, req);
    case DataType::Fp8E5M2: return hostExecuteReduction<Fp8E5M2>(ch, req);
    case DataType::Float32: return hostExecuteReduction<float>(ch, req);
    case DataType::Float64: return hostExecuteReduction<double>(ch, req);
    default: return Status::InternalError;
  }
}

}  // namespace chorus
