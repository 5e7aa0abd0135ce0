// The nonblocking collectives, MPIX_I*_gpu: MPI generalized requests whose
// progress comes from Chorus.
//
// At the call, in the caller's thread: every argument check, the
// communicator's context (its set-up is itself collective over MPI, so it
// cannot move to another thread), and the memory-type test: a bad argument
// is reported by the MPIX_I call itself, through the communicator's error
// handler, exactly as by the blocking call.
//
// Then, by thread level and memory:
//  - MPI_THREAD_MULTIPLE, host buffers: the collective is queued on the
//    communicator's progress thread (core/progress.h: one per communicator,
//    asleep while idle), which runs its communicator's collectives in call
//    order and completes the request with MPI_Grequest_complete.  Open MPI
//    4.1 has no generalized request with a poll function (MPIX_Grequest_
//    class_create), and MPI lets a thread other than the caller's complete a
//    request only under MPI_THREAD_MULTIPLE, hence the thread.  The
//    collective's progress never depends on the user calling MPI_Test, so a
//    program may overlap point-to-point traffic with it.
//  - below MPI_THREAD_MULTIPLE: the collective runs at the call, and the
//    returned request is already complete.  Correct, without overlap; but a
//    program that makes its peers' participation wait on traffic between
//    the call and MPI_Wait (rank 0: Iallreduce then Send; rank 1: Recv then
//    Iallreduce) deadlocks, as it would with blocking collectives.  Said
//    once at CHORUS_DEBUG=INFO.  Initialise MPI with MPI_THREAD_MULTIPLE
//    for overlap.
//  - device buffers (CUDA builds): run at the call as by the blocking call,
//    request returned complete.  For overlap on the GPU use the stream-
//    ordered MPIX_*_gpu_enqueue calls.  (Queuing device collectives on the
//    progress thread would need the caller's CUDA device and stream order
//    carried over; not done.)
//
// A failure while the collective runs on the progress thread (a peer died,
// CHORUS_TIMEOUT) is raised there through the communicator's error handler,
// as a blocking call raises it, and the request's status carries the code
// (MPI_Wait returns it).
#include <atomic>

#include "api/nonblocking.h"
#include "api/validate.h"
#include "chorus.h"
#include "comm/context.h"
#include "core/log.h"
#include "core/progress.h"

using namespace chorus;

thread_local CompletionHook chorus::t_completionHook;

namespace {

// One queued collective, the extra state of its generalized request.
struct PendingCollective {
  MPI_Request request = MPI_REQUEST_NULL;
  const char *name;
  MPI_Comm comm;
  DeferredCollective work;
  int rc = MPI_SUCCESS;  // written by the progress thread before it completes the request
  CompletionHook hook;
};

CompletionHook takeHook() {
  const CompletionHook hook = t_completionHook;
  t_completionHook = {};
  return hook;
}

void runHook(const CompletionHook &hook, int rc) {
  if (hook.fn) hook.fn(hook.arg, rc);
}

int queryPending(void *state, MPI_Status *status) {
  MPI_Status_set_elements_x(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  const int rc = state ? static_cast<PendingCollective *>(state)->rc : MPI_SUCCESS;
  status->MPI_ERROR = rc;
  return rc;
}

int freePending(void *state) {
  delete static_cast<PendingCollective *>(state);
  return MPI_SUCCESS;
}

// A collective cannot be called off once its peers may have started it:
// MPI_Cancel has no effect, and the request completes normally.
int cancelPending(void *, int) { return MPI_SUCCESS; }

// On the progress thread.
void runPending(void *arg) {
  auto *p = static_cast<PendingCollective *>(arg);
  p->rc = runDeferred(p->name, p->comm, p->work);
  runHook(p->hook, p->rc);
  const MPI_Request request = p->request;
  MPI_Grequest_complete(request);  // the user's MPI_Wait may free `p` from here on
}

// A request that is complete already: the collective ran at the call.
int completedRequest(ApiCall &call, MPI_Request *request) {
  int rc = MPI_Grequest_start(queryPending, freePending, cancelPending, nullptr, request);
  if (rc == MPI_SUCCESS) rc = MPI_Grequest_complete(*request);
  if (rc != MPI_SUCCESS) return call.fail(ErrorClass::Internal, "MPI_Grequest_start/complete failed (code %d)", rc);
  return MPI_SUCCESS;
}

void sayRunsAtCallOnce() {
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    CHORUS_INFO(kSubsysColl,
                "nonblocking collectives run at the call and return a complete request: MPI is not at "
                "MPI_THREAD_MULTIPLE (a program that sends between the call and MPI_Wait what a peer must receive "
                "before its own call deadlocks, as with blocking calls)");
}

// `blocking` is the blocking implementation with this call's arguments.
template <class Blocking>
int startNonblocking(const char *name, MPI_Comm comm, MPI_Request *request, Blocking &&blocking) {
  ApiCall call(name, comm);
  if (request == nullptr) {
    if (!call.checkComm()) return call.code();
    return call.fail(ErrorClass::Argument, "request is NULL: pass the address of an MPI_Request");
  }
  *request = MPI_REQUEST_NULL;
  DeferredCollective work;
  t_deferred = &work;
  int rc = blocking();
  t_deferred = nullptr;
  if (rc != MPI_SUCCESS) return rc;                                // raised by the checks
  if (!work.captured) {  // empty, or device buffers: done
    runHook(takeHook(), MPI_SUCCESS);
    return completedRequest(call, request);
  }
  if (!threadMultiple()) {
    sayRunsAtCallOnce();
    rc = runDeferred(name, comm, work);
    if (rc != MPI_SUCCESS) return rc;
    runHook(takeHook(), MPI_SUCCESS);
    return completedRequest(call, request);
  }
  Context &ctx = *work.ctx;
  if (!ctx.progress) ctx.progress = new ProgressQueue;
  auto *pending = new PendingCollective{MPI_REQUEST_NULL, name, comm, work, MPI_SUCCESS, takeHook()};
  rc = MPI_Grequest_start(queryPending, freePending, cancelPending, pending, request);
  if (rc != MPI_SUCCESS) {
    t_completionHook = pending->hook;  // not started: the hook stays the caller's
    delete pending;
    return call.fail(ErrorClass::Internal, "MPI_Grequest_start failed (code %d)", rc);
  }
  pending->request = *request;
  if (ctx.progress->submit(runPending, pending) != Status::Ok) {
    // No thread: run it here rather than leave a request nobody completes.
    ctx.progress->drain();
    runPending(pending);
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPIX_Iallreduce_gpu(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm, MPI_Request *request) {
  static const char kName[] = "MPIX_Iallreduce_gpu";
  return startNonblocking(kName, comm, request,
                          [&] { return allreduceEntry(sendbuf, recvbuf, count, datatype, op, comm, kName); });
}

int MPIX_Ireduce_gpu(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                     MPI_Comm comm, MPI_Request *request) {
  static const char kName[] = "MPIX_Ireduce_gpu";
  return startNonblocking(kName, comm, request,
                          [&] { return reduceEntry(sendbuf, recvbuf, count, datatype, op, root, comm, kName); });
}

int MPIX_Ibcast_gpu(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Request *request) {
  static const char kName[] = "MPIX_Ibcast_gpu";
  return startNonblocking(kName, comm, request,
                          [&] { return bcastEntry(buffer, count, datatype, root, comm, kName); });
}

int MPIX_Iallgather_gpu(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  static const char kName[] = "MPIX_Iallgather_gpu";
  return startNonblocking(kName, comm, request, [&] {
    return allgatherEntry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, kName);
  });
}

int MPIX_Ireduce_scatter_block_gpu(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  static const char kName[] = "MPIX_Ireduce_scatter_block_gpu";
  return startNonblocking(kName, comm, request, [&] {
    return reduceScatterBlockEntry(sendbuf, recvbuf, recvcount, datatype, op, comm, kName);
  });
}

int MPIX_Ialltoall_gpu(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  static const char kName[] = "MPIX_Ialltoall_gpu";
  return startNonblocking(kName, comm, request, [&] {
    return alltoallEntry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, kName);
  });
}

int MPIX_Ibarrier_gpu(MPI_Comm comm, MPI_Request *request) {
  static const char kName[] = "MPIX_Ibarrier_gpu";
  return startNonblocking(kName, comm, request, [&] { return barrierEntry(comm, kName); });
}

}  // extern "C"
