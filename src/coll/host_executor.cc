// Dispatch of a validated request to the algorithm templates.  The copy-only
// collectives move bytes and need no element type.
#include <cstdio>
#include <memory>
#include <new>

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
  runCopyAlgorithm(a, req.coll, req.algo, prims, reinterpret_cast<uint8_t *>(ch.scratch));
  return ch.error;
}

Status runDense(HostChannel &ch, const CollRequest &req) {
  switch (req.coll) {
    case Coll::Bcast:
    case Coll::Allgather:
    case Coll::Alltoall:
    case Coll::Barrier:
      return runCopyCollective(ch, req);
    default:
      break;
  }
  switch (typeGroup(req.type)) {
    case 1: return hostExecuteGroup<1>(ch, req);
    case 2: return hostExecuteGroup<2>(ch, req);
    case 3: return hostExecuteGroup<3>(ch, req);
    case 4: return hostExecuteGroup<4>(ch, req);
    case 5: return hostExecuteGroup<5>(ch, req);
    default: return Status::InternalError;
  }
}

// The receive side of a type with gaps: the collective writes whole
// elements into staging memory, and only their data blocks reach recvbuf.
// Allocated per call: such types (MPI_DOUBLE_INT, MPI_SHORT_INT...) carry
// small MINLOC/MAXLOC vectors, not bulk data.
Status runGapped(HostChannel &ch, const CollRequest &req) {
  const size_t bytes = receivedBytes(req, ch.rank, ch.nranks);
  if (bytes == 0) return runDense(ch, req);
  std::unique_ptr<unsigned char[]> staging(new (std::nothrow) unsigned char[bytes]);
  if (!staging) {
    snprintf(ch.errorText, sizeof ch.errorText, "%s: no memory for %zu bytes of staging for a datatype with gaps",
             collName(ch.coll), bytes);
    return ch.error = Status::SystemError;
  }
  CollRequest staged = req;
  staged.recvbuf = staging.get();
  if (req.coll == Coll::Bcast) staged.sendbuf = staging.get();  // a non-root: the buffer is only received
  const Status s = runDense(ch, staged);
  if (s == Status::Ok) copyDataBlocks(staging.get(), req.recvbuf, bytes / req.elemSize, req.elemSize, *req.gaps);
  return s;
}

}  // namespace

size_t receivedBytes(const CollRequest &req, int rank, int nranks) {
  const size_t block = req.count * req.elemSize;
  switch (req.coll) {
    case Coll::Allreduce: case Coll::ReduceScatter: return block;
    case Coll::Reduce: return rank == req.root ? block : 0;
    case Coll::Bcast: return rank == req.root ? 0 : block;
    case Coll::Allgather: case Coll::Alltoall: return block * size_t(nranks);
    default: return 0;
  }
}

size_t sentBytes(const CollRequest &req, int rank, int nranks) {
  const size_t block = req.count * req.elemSize;
  switch (req.coll) {
    case Coll::Allreduce: case Coll::Reduce: case Coll::Allgather: return block;
    case Coll::Bcast: return rank == req.root ? block : 0;
    case Coll::ReduceScatter: case Coll::Alltoall: return block * size_t(nranks);
    default: return 0;
  }
}

Status hostExecute(HostChannel &ch, const CollRequest &req) {
  if (ch.error != Status::Ok) return Status::Aborted;
  if (ch.net) ch.netOps->enter(ch.net);
  Status s = req.gaps ? runGapped(ch, req) : runDense(ch, req);
  // Messages to other nodes must be in the transport's hands before we
  // return: the caller may not call Chorus again for a long time (ucx's
  // progress thread then finishes what the network still owes).
  if (s == Status::Ok && ch.net) {
    s = ch.netOps->flush(ch.net, ch.seq, ch.timeoutNs, ch.errorText, sizeof ch.errorText);
    if (s != Status::Ok) ch.error = s;
  }
  if (s != Status::Ok && ch.net) ch.netOps->abort(ch.net, ch.seq, s, ch.errorText);
  if (ch.net) ch.netOps->leave(ch.net);
  return s;
}

}  // namespace chorus
