// The nonblocking forms, MPI_Iallreduce ... MPI_Ibarrier: to MPIX_I*_gpu
// where Chorus supports the call and nothing at the call waits for a peer,
// else to PMPI_I*.  Three conditions on top of the blocking calls':
//  - the job routes by type signature (routing.h): an agreement would
//    block, and MPI_Iallreduce must not wait for its peers to start it;
//  - MPI runs at MPI_THREAD_MULTIPLE: below it Chorus runs a nonblocking
//    collective at the call (api/nonblocking.cc), which waits for the peers;
//  - the communicator has its Chorus context already (a blocking collective
//    routed to Chorus, or MPIX_Comm_gpu_init): setting one up is collective
//    and blocking.  Contexts are made by the same calls on every rank, so
//    this too comes out the same everywhere.
// A type that is not dense is staged: packed at the call, and the result
// copied back by Chorus's completion hook before the request completes.
#include <mpi.h>

#include <utility>

#include "chorus.h"
#include "routing.h"
#include "type_shape.h"

using namespace chorus_interpose;

namespace {

bool routable() { return decideBy() == Decide::Signature && threadMultiple(); }

// Try `call` (an MPIX_I* call) in Chorus, else run `mpi`.
template <class Call, class Mpi>
int tryOrMpi(Coll coll, Call &&call, Mpi &&mpi) {
  if (chorus_interpose_inside()) return mpi();
  chorus_interpose_try_begin(1);
  const int rc = call();
  if (chorus_interpose_try_end(rc)) {
    countChorus(coll);
    return rc;
  }
  countMpi(coll, refusal());
  return mpi();
}

// The staging of one nonblocking call: its staged buffers, and where the
// result goes back to (with its own handle of the type: the user may free
// theirs before the request completes, as MPI allows).
struct StagedCall {
  void *in = nullptr, *out = nullptr;
  void *user = nullptr;
  MPI_Count count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  TypeShape shape;

  ~StagedCall() {
    stageFree(in);
    stageFree(out);
    if (type != MPI_DATATYPE_NULL) PMPI_Type_free(&type);
  }
  // The result is copied back to `user` (count elements of `dt`).
  bool returnTo(void *userBuf, MPI_Count n, MPI_Datatype dt, const TypeShape &s) {
    user = userBuf, count = n, shape = s;
    return PMPI_Type_dup(dt, &type) == MPI_SUCCESS;
  }
};

// Chorus's completion hook: on the thread that completes the collective.
void finishStaged(void *arg, int rc) {
  auto *staged = static_cast<StagedCall *>(arg);
  if (rc == MPI_SUCCESS && staged->user)
    stageOut(staged->out, staged->user, staged->count, staged->type, staged->shape, MPI_COMM_SELF);
  delete staged;
}

template <class Call, class Mpi>
int tryStaged(Coll coll, StagedCall *staged, Call &&call, Mpi &&mpi) {
  chorus_interpose_set_hook(finishStaged, staged);
  chorus_interpose_try_begin(1);
  const int rc = call();
  const bool took = chorus_interpose_try_end(rc);
  if (chorus_interpose_take_back_hook()) delete staged;  // not started
  if (took) {
    countChorus(coll);
    return rc;
  }
  countMpi(coll, refusal());
  return mpi();
}

// Iallgather and Ialltoall: routeExchange of interpose.cc, staged results
// coming back through the completion hook.
template <class Chorus, class Mpi>
int tryExchange(Coll coll, const ExchangeArgs &a, bool sendPerPeer, Chorus &&chorus, Mpi &&mpi) {
  const bool inPlace = a.sendbuf == MPI_IN_PLACE;
  TypeShape st, rt;
  if (!routable() || !typeShape(a.recvtype, &rt) || (!inPlace && !typeShape(a.sendtype, &st)))
    return viaMpi(coll, jobReason(true, kDatatype), mpi);
  if (inPlace) st = rt;
  const MPI_Count rn = a.recvcount * rt.per, sn = inPlace ? rn : a.sendcount * st.per;
  if (st.dense && rt.dense)
    return tryOrMpi(coll, [&] { return chorus(a.sendbuf, sn, st.base, a.recvbuf, rn, rt.base); }, mpi);
  // Negative counts are MPI's to report (MPI_ERR_COUNT), not staging's.
  if (a.recvcount < 0 || (!inPlace && a.sendcount < 0)) return viaMpi(coll, kArguments, mpi);
  int size = 1;
  PMPI_Comm_size(a.comm, &size);
  const MPI_Count sendElems = MPI_Count(a.sendcount) * (sendPerPeer ? size : 1);
  const MPI_Count recvElems = MPI_Count(a.recvcount) * size;
  auto *staged = new StagedCall;
  if (!inPlace && !st.dense) staged->in = stageIn(a.sendbuf, sendElems, a.sendtype, st, true, MPI_COMM_SELF);
  if (!rt.dense) staged->out = stageIn(a.recvbuf, recvElems, a.recvtype, rt, inPlace, MPI_COMM_SELF);
  if ((!inPlace && !st.dense && !staged->in) ||
      (!rt.dense && (!staged->out || !staged->returnTo(a.recvbuf, recvElems, a.recvtype, rt)))) {
    delete staged;
    return stagingFailed(a.comm);
  }
  const void *s = inPlace ? MPI_IN_PLACE : staged->in ? staged->in : a.sendbuf;
  void *r = staged->out ? staged->out : a.recvbuf;
  return tryStaged(coll, staged, [&] { return chorus(s, sn, st.base, r, rn, rt.base); }, mpi);
}

}  // namespace

extern "C" {

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request *request) {
  auto mpi = [&] { return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request); };
  TypeShape t;
  if (!routable() || !typeShape(datatype, &t)) return viaMpi(kIallreduce, jobReason(true, kDatatype), mpi);
  const MPI_Count n = count * t.per;
  if (t.dense)
    return tryOrMpi(kIallreduce, [&] { return MPIX_Iallreduce_gpu(sendbuf, recvbuf, n, t.base, op, comm, request); },
                    mpi);
  if (count < 0) return viaMpi(kIallreduce, kArguments, mpi);  // MPI_ERR_COUNT, MPI's to raise
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  auto *staged = new StagedCall;
  if (!inPlace) staged->in = stageIn(sendbuf, count, datatype, t, true, MPI_COMM_SELF);
  staged->out = stageIn(recvbuf, count, datatype, t, inPlace, MPI_COMM_SELF);
  if ((!inPlace && !staged->in) || !staged->out || !staged->returnTo(recvbuf, count, datatype, t)) {
    delete staged;
    return stagingFailed(comm);
  }
  return tryStaged(kIallreduce, staged, [&] {
    return MPIX_Iallreduce_gpu(inPlace ? MPI_IN_PLACE : staged->in, staged->out, n, t.base, op, comm, request);
  }, mpi);
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *request) {
  auto mpi = [&] { return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request); };
  TypeShape t;
  if (!routable() || !typeShape(datatype, &t)) return viaMpi(kIreduce, jobReason(true, kDatatype), mpi);
  const MPI_Count n = count * t.per;
  if (t.dense)
    return tryOrMpi(kIreduce, [&] { return MPIX_Ireduce_gpu(sendbuf, recvbuf, n, t.base, op, root, comm, request); },
                    mpi);
  if (count < 0) return viaMpi(kIreduce, kArguments, mpi);
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  const bool isRoot = rank == root, inPlace = sendbuf == MPI_IN_PLACE;
  auto *staged = new StagedCall;
  if (!inPlace) staged->in = stageIn(sendbuf, count, datatype, t, true, MPI_COMM_SELF);
  if (isRoot) staged->out = stageIn(recvbuf, count, datatype, t, inPlace, MPI_COMM_SELF);
  if ((!inPlace && !staged->in) || (isRoot && (!staged->out || !staged->returnTo(recvbuf, count, datatype, t)))) {
    delete staged;
    return stagingFailed(comm);
  }
  return tryStaged(kIreduce, staged, [&] {
    return MPIX_Ireduce_gpu(inPlace ? MPI_IN_PLACE : staged->in, isRoot ? staged->out : recvbuf, n, t.base, op, root,
                            comm, request);
  }, mpi);
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request) {
  auto mpi = [&] { return PMPI_Ibcast(buffer, count, datatype, root, comm, request); };
  TypeShape t;
  if (!routable() || !typeShape(datatype, &t)) return viaMpi(kIbcast, jobReason(true, kDatatype), mpi);
  const MPI_Count n = count * t.per;
  if (t.dense)
    return tryOrMpi(kIbcast, [&] { return MPIX_Ibcast_gpu(buffer, n, t.base, root, comm, request); }, mpi);
  if (count < 0) return viaMpi(kIbcast, kArguments, mpi);
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  auto *staged = new StagedCall;
  staged->out = stageIn(buffer, count, datatype, t, rank == root, MPI_COMM_SELF);
  if (!staged->out || (rank != root && !staged->returnTo(buffer, count, datatype, t))) {
    delete staged;
    return stagingFailed(comm);
  }
  return tryStaged(kIbcast, staged,
                   [&] { return MPIX_Ibcast_gpu(staged->out, n, t.base, root, comm, request); }, mpi);
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  return tryExchange(
      kIallgather, {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm}, false,
      [&](const void *s, MPI_Count sn, MPI_Datatype st, void *r, MPI_Count rn, MPI_Datatype rt) {
        return MPIX_Iallgather_gpu(s, sn, st, r, rn, rt, comm, request);
      },
      [&] { return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request); });
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Request *request) {
  auto mpi = [&] { return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request); };
  TypeShape t;
  if (!routable() || !typeShape(datatype, &t)) return viaMpi(kIreduceScatterBlock, jobReason(true, kDatatype), mpi);
  const MPI_Count n = recvcount * t.per;
  if (t.dense)
    return tryOrMpi(kIreduceScatterBlock, [&] {
      return MPIX_Ireduce_scatter_block_gpu(sendbuf, recvbuf, n, t.base, op, comm, request);
    }, mpi);
  if (recvcount < 0) return viaMpi(kIreduceScatterBlock, kArguments, mpi);
  int size = 1;
  PMPI_Comm_size(comm, &size);
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  auto *staged = new StagedCall;
  // In place, the input is the whole receive buffer and the result its first block.
  staged->in = stageIn(inPlace ? recvbuf : sendbuf, MPI_Count(recvcount) * size, datatype, t, true, MPI_COMM_SELF);
  if (!inPlace) staged->out = stageIn(recvbuf, recvcount, datatype, t, false, MPI_COMM_SELF);
  if (!staged->in || (!inPlace && !staged->out) || !staged->returnTo(recvbuf, recvcount, datatype, t)) {
    delete staged;
    return stagingFailed(comm);
  }
  if (inPlace) std::swap(staged->in, staged->out);  // the hook copies `out` back
  return tryStaged(kIreduceScatterBlock, staged, [&] {
    return MPIX_Ireduce_scatter_block_gpu(inPlace ? MPI_IN_PLACE : staged->in, staged->out, n, t.base, op, comm,
                                          request);
  }, mpi);
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  return tryExchange(
      kIalltoall, {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm}, true,
      [&](const void *s, MPI_Count sn, MPI_Datatype st, void *r, MPI_Count rn, MPI_Datatype rt) {
        return MPIX_Ialltoall_gpu(s, sn, st, r, rn, rt, comm, request);
      },
      [&] { return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request); });
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
  auto mpi = [&] { return PMPI_Ibarrier(comm, request); };
  // (Signature implies CHORUS_INTERPOSE=all)
  if (!routable()) return viaMpi(kIbarrier, jobReason(true, kArguments), mpi);
  return tryOrMpi(kIbarrier, [&] { return MPIX_Ibarrier_gpu(comm, request); }, mpi);
}

}  // extern "C"
