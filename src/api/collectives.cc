// The public entry points: validate like MPI would, resolve MPI_IN_PLACE,
// then hand a request to the executor of the communicator's context.
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "api/empty_call.h"
#include "api/nonblocking.h"
#include "api/signature_check.h"
#include "api/validate.h"
#include "chorus.h"
#include "coll/exact_executor.h"
#include "coll/host_executor.h"
#include "comm/context.h"
#include "comm/settings_agree.h"
#include "transport/fault.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "core/trace.h"
#include "cuda/memtype.h"
#ifdef CHORUS_HAVE_CUDA
#include "cuda/cuda_executor.h"
#endif

using namespace chorus;

thread_local EmptyCallMemo chorus::t_emptyCall __attribute__((tls_model("initial-exec")));

#define CHORUS_STRINGIFY_(x) #x
#define CHORUS_STRINGIFY(x) CHORUS_STRINGIFY_(x)

namespace {

// Where the call's buffers live.  Both must be of one kind (host, or
// device/managed); device buffers need a CUDA build and a GPU.  Returns
// false after raising the error.
bool locateBuffers(ApiCall &call, const void *sendbuf, const void *recvbuf, bool *onDevice) {
  *onDevice = false;
  if (!deviceMemoryPossible()) return true;
  MemType st = MemType::Host, rt = MemType::Host;
  detectMemType(sendbuf, &st);
  detectMemType(recvbuf, &rt);
  const bool sendDev = sendbuf && st != MemType::Host, recvDev = recvbuf && rt != MemType::Host;
  if (sendbuf && recvbuf && sendDev != recvDev) {
    call.fail(ErrorClass::Argument, "sendbuf is %s but recvbuf is %s: both must be host memory or both GPU memory",
              memTypeName(st), memTypeName(rt));
    return false;
  }
  *onDevice = sendDev || recvDev;
#ifndef CHORUS_HAVE_CUDA
  if (*onDevice) {
    call.fail(ErrorClass::Unsupported,
              "%s is %s, but this Chorus was built without CUDA (configure --with-cuda): only host buffers work",
              sendDev ? "sendbuf" : "recvbuf", memTypeName(sendDev ? st : rt));
    return false;
  }
#endif
  return true;
}

// Where this rank is, for peers on its node that look after a failure
// (fault.cc); a store to a line only this rank writes.
inline void publishProgress(Context &ctx, uint64_t seq, TraceState state) {
  __atomic_store_n(&ctx.status->seq, seq, __ATOMIC_RELAXED);
  __atomic_store_n(&ctx.status->state, uint64_t(state), __ATOMIC_RELEASE);
}

void traceArguments(TraceEntry &e, const CollRequest &req, bool onDevice, MPIX_Gpu_stream stream) {
  e.coll = req.coll;
  e.count = req.count;
  e.type = req.type;
  e.op = req.op;
  e.root = req.root;
  e.algo = req.algo;
  e.onDevice = onDevice;
  // The GPU engine picks its protocol per call inside the CUDA executor;
  // the recorder keeps the setting that steered it.
  e.proto = onDevice ? paramString(ParamId::Proto) : "simple";
  e.stream = stream;
}

// The collective failed: say which rank caused it where this rank can see
// (fault.cc), write the flight recorder, and raise the error.
int failCollective(ApiCall &call, Context &ctx, TraceEntry *trace, Status s, const char *detail) {
  traceEnd(trace, TraceState::Failed);
  publishProgress(ctx, ctx.collectives, TraceState::Failed);
  if (s == Status::Aborted) return call.failStatus(s, detail);  // reported (and written) when it first failed
  char cause[192] = "", text[512], path[512];
  // A corrupted message names its own cause, the link it came by.
  if (s != Status::DataCorrupt) describeCause(ctx, ctx.collectives, cause, sizeof cause);
  snprintf(text, sizeof text, "%s%s", cause, detail && *detail ? detail : statusName(s));
  if (traceDump(text, path, sizeof path))
    CHORUS_WARN("%s; flight recorder written to %s (chorus_trace reads every rank's)", text, path);
  else if (errno != ENOENT)  // recording is on and its file was refused or not written: say so, not nothing
    CHORUS_WARN("%s; flight recorder not written to %s: %s", text, path,
                errno == ELOOP ? "it is a symbolic link"
                : errno == EPERM ? "not a regular file of this user with one link"
                                 : strerror(errno));
  return call.failStatus(s, text);
}

// CHORUS_NET_DEVICE=staged (agreed by every rank of a communicator).
bool stagedAcrossNodes() {
  static const bool staged = strcmp(paramString(ParamId::NetDevice), "staged") == 0;
  return staged;
}

// Device buffers run on the kernels, across nodes too, except the exact
// mode's sums, across nodes under CHORUS_NET_DEVICE=staged, and across
// nodes where the kernels do not reach every remote peer the alltoall:
// those are staged through host memory (cuda_staged.cc) and run the host
// algorithms.  (There broadcasts and reduces stay on the kernels: their
// trees keep to the links made, coll/patterns.h: nodeTreeOnLinks.)
// Decided once per call: the plan (perform) and the engine (run) follow it.
bool stagedThroughHost(const Context &ctx, const CollRequest &req) {
  if (ctx.exactSums && exactApplies(req)) return true;
  if (ctx.nnodes < 2) return false;
  if (stagedAcrossNodes()) return true;
  if (ctx.planShape.kernelsEveryPeer) return false;
  return req.coll == Coll::Alltoall;
}

// Run collective `seq` (recorded in `trace`) on the context's engine
// (`staged`: stagedThroughHost, for device buffers).
int run(ApiCall &call, Context &ctx, const CollRequest &req, uint64_t seq, TraceEntry *trace, bool onDevice,
        bool staged, MPIX_Gpu_stream stream, bool enqueue) {
  HostChannel &ch = ctx.channel;
  // The tag every message of the call carries (fifo.h): what all ranks pass alike.
  hostBeginCall(ch, req.coll, req.algo, seq,
                hostCallArgs(req.count * req.elemSize, int(req.type), int(req.op), req.root));
  ch.tracing = trace;
  Status s = Status::Ok;
#ifdef CHORUS_HAVE_CUDA
  if (onDevice) {
    char text[320] = "";
    if (staged) {
      const bool exact = ctx.exactSums && exactApplies(req);
      size_t stagedBytes = 0;
      s = cudaExecuteStaged(ctx, ctx.channel, ctx.cuda, req, stream, exact ? &ctx.planShape : nullptr, &stagedBytes,
                            text, sizeof text);
      if (ctx.stats) ctx.stats->coll[int(req.coll)].staged += stagedBytes;
    } else {
      s = cudaExecute(ctx, ctx.cuda, req, stream, !enqueue, ctx.nnodes > 1 ? &ctx.nodeLayout : nullptr,
                      ctx.deviceWiring, text, sizeof text);
    }
    if (s == Status::Aborted)
      return failCollective(call, ctx, trace, s,
                            text[0] ? text : "an earlier collective on this communicator failed; free it");
    if (s != Status::Ok) return failCollective(call, ctx, trace, s, text);
    // Enqueued on the stream: the host cannot tell when it ends.
    const TraceState ended = enqueue ? TraceState::Queued : TraceState::Done;
    traceEnd(trace, ended);
    publishProgress(ctx, seq, ended);
    return MPI_SUCCESS;
  }
#else
  (void)onDevice;
  (void)staged;
  (void)stream;
  (void)enqueue;
#endif
  s = ctx.exactSums && exactApplies(req) ? hostExecuteExact(ch, req, ctx.planShape) : hostExecute(ch, req);
  if (s == Status::Aborted)
    return failCollective(call, ctx, trace, s,
                          "an earlier collective on this communicator failed; free it and use another");
  if (s != Status::Ok) return failCollective(call, ctx, trace, s, ch.errorText);
  traceEnd(trace, TraceState::Done);
  publishProgress(ctx, seq, TraceState::Done);
  return MPI_SUCCESS;
}

// Collective `req`, checked, on the context `ctx`: plan, number, record,
// compare (CHORUS_CHECK), run, count.  In the caller's thread for a blocking
// call, on the communicator's progress thread for a queued nonblocking one
// (never both at once: the blocking path waits for the queue first).
int perform(ApiCall &call, Context *ctx, CollRequest &req, size_t planBytes, bool onDevice, MPIX_Gpu_stream stream,
            bool enqueue) {
  Status s = Status::Ok;
  // With the TRACE log on, the plan is worked out afresh: its text may live
  // in a buffer that a later plan reuses (describeChoice).
  const bool logCalls = ctx->logCalls;
  const bool staged = onDevice && stagedThroughHost(*ctx, req);
  const Engine engine = onDevice && !staged ? Engine::Kernels : Engine::Host;
  auto &memo = ctx->lastPlan;
  if (!memo.valid || memo.coll != req.coll || memo.bytes != planBytes || memo.engine != engine || logCalls) {
    memo.plan = planCollective(req.coll, planBytes, ctx->planShape, engine);
    memo.coll = req.coll;
    memo.bytes = planBytes;
    memo.engine = engine;
    memo.valid = true;
  }
  Plan plan = memo.plan;
  // Publish rings exist on single-node communicators only; the ring stands in.
  if (plan.algo == Algo::Publish && !ctx->channel.publish) plan = {Algo::Ring, "no publish rings across nodes"};
  // Cross-memory attach reads host memory only, and not in place (alltoall_single_copy.h).
  if (plan.algo == Algo::SingleCopy && (onDevice || req.sendbuf == req.recvbuf))
    plan = {Algo::Pairwise, onDevice ? "device buffers: no single copy" : "in place: no single copy"};
  req.algo = plan.algo;
  const uint64_t seq = ++ctx->collectives;
  if (logCalls)
    CHORUS_TRACE(kSubsysColl, "%s #%llu: %zu x %zu B, %d ranks -> %s (%s)", call.name(), (unsigned long long)seq,
                 req.count, req.elemSize, ctx->nranks, algoName(plan.algo), plan.why);
  TraceEntry *trace = traceBegin(ctx->trace, seq);
  if (trace) traceArguments(*trace, req, onDevice, stream);
  publishProgress(*ctx, seq, TraceState::Running);
  const int64_t start = ctx->stats ? statsNowNs() : 0;
  int rc;
  char text[400];
  if (ctx->checkComm != MPI_COMM_NULL && (s = checkSignatures(*ctx, req, seq, text, sizeof text)) != Status::Ok)
    rc = failCollective(call, *ctx, trace, s, text);
  else
    rc = run(call, *ctx, req, seq, trace, onDevice, staged, stream, enqueue);
  if (ctx->stats) statsRecord(*ctx->stats, req.coll, req.algo, planBytes, statsNowNs() - start, rc != MPI_SUCCESS);
  return rc;
}

// A blocking collective on a communicator whose nonblocking ones are still
// queued runs after them: same order on every rank (MPI's rule), and never
// two collectives of one communicator at once.  One pointer test when the
// communicator never had a nonblocking collective.
inline void waitForQueued(Context &ctx) {
  if (ctx.progress && !ctx.progress->idle()) ctx.progress->drain();
}

// Communicators whose Chorus set-up failed under the interposer: their
// later calls go to MPI at once, on every rank (each saw the same agreed
// failure), instead of trying the set-up again.  An attribute, so that it
// goes with the communicator.
int setupFailedKeyval() {
  static int keyval = MPI_KEYVAL_INVALID;
  static std::once_flag once;
  std::call_once(once, [] { MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &keyval, nullptr); });
  return keyval;
}

bool setupFailedBefore(MPI_Comm comm) {
  void *value = nullptr;
  int found = 0;
  const int keyval = setupFailedKeyval();
  return keyval != MPI_KEYVAL_INVALID && MPI_Comm_get_attr(comm, keyval, &value, &found) == MPI_SUCCESS && found;
}

// The context of the call's communicator could not be set up (status `s`).
// Settings that differ between ranks are the user's to fix: raised, on
// every rank, naming them.  Anything else (a full /dev/shm, a segment
// refused) under the interposer's try falls back to MPI, which needs none
// of it: the set-up agrees its failure on every rank, so every rank falls
// back alike.  Elsewhere it is raised.
int failSetup(ApiCall &call, Status s, bool interposed) {
  const char *disagreement = contextSettingsDisagreement();
  if (*disagreement) return call.fail(ErrorClass::Argument, "%s", disagreement);
  if (interposed) {
    const int keyval = setupFailedKeyval();
    if (keyval != MPI_KEYVAL_INVALID) MPI_Comm_set_attr(call.comm(), keyval, nullptr);
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      CHORUS_WARN("%s: Chorus could not set up on this communicator (%s; the WARN lines above say why): its "
                  "collectives go to MPI", call.name(), statusName(s));
    t_probe.active = true;  // the try turns into a refusal: the interposer calls MPI
    return call.fail(ErrorClass::Unsupported, "set-up failed");
  }
  return call.failStatus(s, "could not set up Chorus on this communicator (the WARN lines above say why)");
}

// `req` by rvalue reference: passed by value, GCC copied it with `rep movs`,
// which waits for the stores of the previous collective (a broadcast root's
// writes into its peers' FIFOs) to drain: 60% of a small broadcast's time.
int execute(ApiCall &call, CollRequest &&req, size_t planBytes, MPIX_Gpu_stream stream = nullptr, bool enqueue = false) {
  bool onDevice = false;
  if (!locateBuffers(call, req.sendbuf, req.recvbuf, &onDevice)) return call.code();
  const bool interposed = t_probe.active;
  if (t_probe.active) {  // the interposer's question is answered: Chorus would run it
    t_probe.where = onDevice ? 1 : 0;
    if (!t_probe.run) return MPI_SUCCESS;
    if (!call.context() && (t_probe.needContext || setupFailedBefore(call.comm())))
      return call.fail(ErrorClass::Unsupported, "the communicator has no Chorus context");
    t_probe.active = false;  // the interposer's try: run it
  }
  Context *ctx = call.context();
  Status s = ctx ? Status::Ok : contextGet(call.comm(), &ctx);
  if (s != Status::Ok) return failSetup(call, s, interposed);
  // A nonblocking call on host buffers stops here, checked and with its
  // context set up; api/nonblocking.cc queues the rest.  Device buffers run
  // now (see there).
  if (DeferredCollective *d = t_deferred; d && !onDevice) {
    *d = {true, ctx, req, planBytes};
    return MPI_SUCCESS;
  }
  waitForQueued(*ctx);
  return perform(call, ctx, req, planBytes, onDevice, stream, enqueue);
}

CollRequest request(Coll coll, const TypeMapping &type, RedOp op, MPI_Count count, const void *sendbuf, void *recvbuf,
                    int root) {
  CollRequest r;
  r.coll = coll;
  r.algo = Algo::Ring;
  r.type = type.type;
  r.op = op;
  // A complex sum runs on the parts: twice the elements, each half the size.
  // (components is 1 or 2: no division on the per-call path.)
  r.count = size_t(count) * size_t(type.components);
  r.elemSize = type.components == 2 ? type.size / 2 : type.size;
  r.sendbuf = sendbuf;
  r.recvbuf = recvbuf;
  r.root = root;
  r.gaps = type.gaps;
  return r;
}

// Compare an empty call with the peers' (CHORUS_CHECK): nothing else to do.
int checkEmpty(ApiCall &call, Context &ctx, const CollRequest &req) {
  const uint64_t seq = ++ctx.collectives;
  char text[400];
  const Status s = checkSignatures(ctx, req, seq, text, sizeof text);
  if (s != Status::Ok) return failCollective(call, ctx, nullptr, s, text);
  return MPI_SUCCESS;
}

// An empty call returns after its checks.  With CHORUS_CHECK on it still
// takes part in the comparison: a rank passing count 0 where the others pass
// 1000 is a mismatch like any other, and returning at once would leave the
// others waiting in the check until CHORUS_TIMEOUT.  Such calls are never
// remembered by the fast path (api/empty_call.h).
int finishEmpty(ApiCall &call, CollRequest &&req, const EmptyCall &empty) {
  if (!paramInt(ParamId::Check)) return emptyCallPassed(empty, call.context());
  Context *ctx = call.context();
  Status s = ctx ? Status::Ok : contextGet(call.comm(), &ctx);
  if (s != Status::Ok) return failSetup(call, s, t_probe.active && t_probe.run);
  if (ctx->checkComm == MPI_COMM_NULL) return emptyCallPassed(empty, ctx);
  // A nonblocking call compares later, on the communicator's queue: its
  // comparison waits for the peers' calls, and MPI lets a rank send, before
  // it waits, what a peer must receive before making its own call.
  if (DeferredCollective *d = t_deferred) {
    *d = {true, ctx, req, 0, true};
    return MPI_SUCCESS;
  }
  waitForQueued(*ctx);  // the comparison is numbered in call order, after the queued ones
  return checkEmpty(call, *ctx, req);
}

}  // namespace

// Everything but the repeated empty call: apart, so that the fast path
// of allreduceImpl does not pay this frame's set-up.
static int __attribute__((noinline))
allreduceChecked(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPIX_Gpu_stream stream, bool enqueue, const char *name, const EmptyCall &empty) {
  ApiCall call(name, comm);
  TypeMapping type;
  RedOp redop;
  if (!call.checkComm() || !call.checkCount("count", count) || !call.checkReduction(datatype, op, &type, &redop) ||
      !call.checkBytes(count, type.size, 1) || !call.checkBuffer("sendbuf", sendbuf, count) ||
      !call.checkBuffer("recvbuf", recvbuf, count) || !call.checkNotInPlace("recvbuf", recvbuf) ||
      !call.checkNotAliased(sendbuf, recvbuf, count))
    return call.code();
  if (count == 0) return finishEmpty(call, request(Coll::Allreduce, type, redop, count, sendbuf, recvbuf, 0), empty);
  if (sendbuf == MPI_IN_PLACE) sendbuf = recvbuf;
  return execute(call, request(Coll::Allreduce, type, redop, count, sendbuf, recvbuf, 0), count * type.size, stream,
                 enqueue);
}

static int allreduceImpl(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm, MPIX_Gpu_stream stream, bool enqueue, const char *name) {
  const EmptyCall empty{comm, datatype, datatype, op, 0, emptyTag(Coll::Allreduce, 0, sendbuf, recvbuf)};
  if (count == 0 && emptyCallRepeats(empty)) return MPI_SUCCESS;
  return allreduceChecked(sendbuf, recvbuf, count, datatype, op, comm, stream, enqueue, name, empty);
}

static int __attribute__((noinline))
reduceChecked(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
              MPI_Comm comm, MPIX_Gpu_stream stream, bool enqueue, const char *name, const EmptyCall &empty) {
  ApiCall call(name, comm);
  TypeMapping type;
  RedOp redop;
  if (!call.checkComm() || !call.checkCount("count", count) || !call.checkRoot(root) ||
      !call.checkReduction(datatype, op, &type, &redop) || !call.checkBytes(count, type.size, 1) ||
      !call.checkBuffer("sendbuf", sendbuf, count))
    return call.code();
  const bool isRoot = call.rank() == root;
  if (isRoot && (!call.checkBuffer("recvbuf", recvbuf, count) || !call.checkNotInPlace("recvbuf", recvbuf) ||
                 !call.checkNotAliased(sendbuf, recvbuf, count)))
    return call.code();
  if (!isRoot && !call.checkNotInPlace("sendbuf (MPI_IN_PLACE is for the root only)", sendbuf)) return call.code();
  if (count == 0)
    return finishEmpty(call, request(Coll::Reduce, type, redop, count, sendbuf, isRoot ? recvbuf : nullptr, root),
                       empty);
  if (sendbuf == MPI_IN_PLACE) sendbuf = recvbuf;
  return execute(call, request(Coll::Reduce, type, redop, count, sendbuf, isRoot ? recvbuf : nullptr, root),
                 count * type.size, stream, enqueue);
}

static int reduceImpl(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                      MPI_Comm comm, MPIX_Gpu_stream stream, bool enqueue, const char *name) {
  const EmptyCall empty{comm, datatype, datatype, op, 0, emptyTag(Coll::Reduce, root, sendbuf, recvbuf)};
  if (count == 0 && emptyCallRepeats(empty)) return MPI_SUCCESS;
  return reduceChecked(sendbuf, recvbuf, count, datatype, op, root, comm, stream, enqueue, name, empty);
}

static int __attribute__((noinline))
bcastChecked(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPIX_Gpu_stream stream,
             bool enqueue, const char *name, const EmptyCall &empty) {
  ApiCall call(name, comm);
  TypeMapping type;
  if (!call.checkComm() || !call.checkCount("count", count) || !call.checkRoot(root) ||
      !call.checkType("datatype", datatype, &type) || !call.checkBytes(count, type.size, 1) ||
      !call.checkBuffer("buffer", buffer, count) || !call.checkNotInPlace("buffer", buffer))
    return call.code();
  if (count == 0) return finishEmpty(call, request(Coll::Bcast, type, RedOp::Sum, count, buffer, buffer, root), empty);
  return execute(call, request(Coll::Bcast, type, RedOp::Sum, count, buffer, buffer, root), count * type.size, stream,
                 enqueue);
}

static int bcastImpl(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                     MPIX_Gpu_stream stream, bool enqueue, const char *name) {
  const EmptyCall empty{comm, datatype, datatype, MPI_OP_NULL, 0, emptyTag(Coll::Bcast, root, buffer, nullptr)};
  if (count == 0 && emptyCallRepeats(empty)) return MPI_SUCCESS;
  return bcastChecked(buffer, count, datatype, root, comm, stream, enqueue, name, empty);
}

// The arguments of allgather and alltoall: one block of recvcount x recvtype
// per rank, and a send side (unless MPI_IN_PLACE) whose type signature must
// match one block's.  False (with the error recorded in `call`) if any is bad.
static bool checkBlockExchange(ApiCall &call, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, TypeMapping *rtype) {
  TypeMapping stype;
  if (!call.checkComm() || !call.checkCount("recvcount", recvcount) || !call.checkType("recvtype", recvtype, rtype) ||
      !call.checkBytes(recvcount, rtype->size, call.size()) || !call.checkBuffer("recvbuf", recvbuf, recvcount) ||
      !call.checkNotInPlace("recvbuf", recvbuf))
    return false;
  return sendbuf == MPI_IN_PLACE ||
         (call.checkCount("sendcount", sendcount) && call.checkType("sendtype", sendtype, &stype) &&
          call.checkSameSignature(sendcount, sendtype, stype, recvcount, recvtype, *rtype) &&
          call.checkBuffer("sendbuf", sendbuf, sendcount) && call.checkNotAliased(sendbuf, recvbuf, recvcount));
}

static int __attribute__((noinline))
allgatherChecked(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm, MPIX_Gpu_stream stream, bool enqueue, const char *name,
                 const EmptyCall &empty) {
  ApiCall call(name, comm);
  TypeMapping rtype;
  if (!checkBlockExchange(call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &rtype))
    return call.code();
  if (recvcount == 0)
    return finishEmpty(call, request(Coll::Allgather, rtype, RedOp::Sum, recvcount, sendbuf, recvbuf, 0), empty);
  if (sendbuf == MPI_IN_PLACE)
    sendbuf = static_cast<char *>(recvbuf) + size_t(call.rank()) * size_t(recvcount) * rtype.size;
  return execute(call, request(Coll::Allgather, rtype, RedOp::Sum, recvcount, sendbuf, recvbuf, 0),
                 recvcount * rtype.size, stream, enqueue);
}

static int allgatherImpl(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPIX_Gpu_stream stream,
                         bool enqueue, const char *name) {
  const EmptyCall empty{comm,        sendtype,  recvtype,
                        MPI_OP_NULL, sendcount, emptyTag(Coll::Allgather, 0, sendbuf, recvbuf)};
  if (recvcount == 0 && emptyCallRepeats(empty)) return MPI_SUCCESS;
  return allgatherChecked(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, stream, enqueue, name,
                          empty);
}

static int __attribute__((noinline))
reduceScatterBlockChecked(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, MPIX_Gpu_stream stream, bool enqueue, const char *name,
                          const EmptyCall &empty) {
  ApiCall call(name, comm);
  TypeMapping type;
  RedOp redop;
  if (!call.checkComm() || !call.checkCount("recvcount", recvcount) ||
      !call.checkReduction(datatype, op, &type, &redop) || !call.checkBytes(recvcount, type.size, call.size()) ||
      !call.checkBuffer("sendbuf", sendbuf, recvcount) || !call.checkBuffer("recvbuf", recvbuf, recvcount) ||
      !call.checkNotInPlace("recvbuf", recvbuf) || !call.checkNotAliased(sendbuf, recvbuf, recvcount))
    return call.code();
  if (recvcount == 0)
    return finishEmpty(call, request(Coll::ReduceScatter, type, redop, recvcount, sendbuf, recvbuf, 0), empty);
  if (sendbuf == MPI_IN_PLACE) sendbuf = recvbuf;
  return execute(call, request(Coll::ReduceScatter, type, redop, recvcount, sendbuf, recvbuf, 0), recvcount * type.size,
                 stream, enqueue);
}

static int reduceScatterBlockImpl(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm, MPIX_Gpu_stream stream, bool enqueue, const char *name) {
  const EmptyCall empty{comm, datatype, datatype, op, 0, emptyTag(Coll::ReduceScatter, 0, sendbuf, recvbuf)};
  if (recvcount == 0 && emptyCallRepeats(empty)) return MPI_SUCCESS;
  return reduceScatterBlockChecked(sendbuf, recvbuf, recvcount, datatype, op, comm, stream, enqueue, name, empty);
}

static int __attribute__((noinline))
alltoallChecked(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                MPI_Datatype recvtype, MPI_Comm comm, MPIX_Gpu_stream stream, bool enqueue, const char *name,
                const EmptyCall &empty) {
  ApiCall call(name, comm);
  TypeMapping rtype;
  if (!checkBlockExchange(call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &rtype))
    return call.code();
  if (recvcount == 0)
    return finishEmpty(call, request(Coll::Alltoall, rtype, RedOp::Sum, recvcount, sendbuf, recvbuf, 0), empty);
  if (sendbuf == MPI_IN_PLACE) sendbuf = recvbuf;
  return execute(call, request(Coll::Alltoall, rtype, RedOp::Sum, recvcount, sendbuf, recvbuf, 0),
                 recvcount * rtype.size, stream, enqueue);
}

static int alltoallImpl(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPIX_Gpu_stream stream, bool enqueue,
                        const char *name) {
  const EmptyCall empty{comm,        sendtype,  recvtype,
                        MPI_OP_NULL, sendcount, emptyTag(Coll::Alltoall, 0, sendbuf, recvbuf)};
  if (recvcount == 0 && emptyCallRepeats(empty)) return MPI_SUCCESS;
  return alltoallChecked(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, stream, enqueue, name,
                         empty);
}

static int barrierImpl(MPI_Comm comm, const char *name) {
  ApiCall call(name, comm);
  if (!call.checkComm()) return call.code();
  const TypeMapping none{DataType::Bytes, 1};
  return execute(call, request(Coll::Barrier, none, RedOp::Sum, 0, nullptr, nullptr, 0), 0);
}

// For api/nonblocking.cc: the blocking implementations under the
// nonblocking calls' names, and the second half of a deferred collective.
namespace chorus {

thread_local DeferredCollective *t_deferred __attribute__((tls_model("initial-exec"))) = nullptr;

int runDeferred(const char *name, MPI_Comm comm, DeferredCollective &d) {
  ApiCall call(name, comm);
  if (d.checkOnly) return checkEmpty(call, *d.ctx, d.req);
  return perform(call, d.ctx, d.req, d.planBytes, false, nullptr, false);
}

int allreduceEntry(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, const char *name) {
  return allreduceImpl(sendbuf, recvbuf, count, datatype, op, comm, nullptr, false, name);
}
int reduceEntry(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm, const char *name) {
  return reduceImpl(sendbuf, recvbuf, count, datatype, op, root, comm, nullptr, false, name);
}
int bcastEntry(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, const char *name) {
  return bcastImpl(buffer, count, datatype, root, comm, nullptr, false, name);
}
int allgatherEntry(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, const char *name) {
  return allgatherImpl(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr, false, name);
}
int reduceScatterBlockEntry(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm, const char *name) {
  return reduceScatterBlockImpl(sendbuf, recvbuf, recvcount, datatype, op, comm, nullptr, false, name);
}
int alltoallEntry(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, const char *name) {
  return alltoallImpl(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr, false, name);
}
int barrierEntry(MPI_Comm comm, const char *name) { return barrierImpl(comm, name); }

}  // namespace chorus

extern "C" {

int MPIX_Allreduce_gpu(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm) {
  return allreduceImpl(sendbuf, recvbuf, count, datatype, op, comm, nullptr, false, "MPIX_Allreduce_gpu");
}

int MPIX_Reduce_gpu(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                    MPI_Comm comm) {
  return reduceImpl(sendbuf, recvbuf, count, datatype, op, root, comm, nullptr, false, "MPIX_Reduce_gpu");
}

int MPIX_Bcast_gpu(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return bcastImpl(buffer, count, datatype, root, comm, nullptr, false, "MPIX_Bcast_gpu");
}

int MPIX_Allgather_gpu(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return allgatherImpl(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr, false,
                       "MPIX_Allgather_gpu");
}

int MPIX_Reduce_scatter_block_gpu(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm) {
  return reduceScatterBlockImpl(sendbuf, recvbuf, recvcount, datatype, op, comm, nullptr, false,
                                "MPIX_Reduce_scatter_block_gpu");
}

int MPIX_Alltoall_gpu(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                      MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoallImpl(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr, false,
                      "MPIX_Alltoall_gpu");
}

int MPIX_Barrier_gpu(MPI_Comm comm) { return barrierImpl(comm, "MPIX_Barrier_gpu"); }

// Stream-ordered variants: device buffers are enqueued on `stream`; host
// buffers complete before returning.
int MPIX_Allreduce_gpu_enqueue(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPIX_Gpu_stream stream) {
  return allreduceImpl(sendbuf, recvbuf, count, datatype, op, comm, stream, true, "MPIX_Allreduce_gpu_enqueue");
}
int MPIX_Reduce_gpu_enqueue(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                            int root, MPI_Comm comm, MPIX_Gpu_stream stream) {
  return reduceImpl(sendbuf, recvbuf, count, datatype, op, root, comm, stream, true, "MPIX_Reduce_gpu_enqueue");
}
int MPIX_Bcast_gpu_enqueue(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                           MPIX_Gpu_stream stream) {
  return bcastImpl(buffer, count, datatype, root, comm, stream, true, "MPIX_Bcast_gpu_enqueue");
}
int MPIX_Allgather_gpu_enqueue(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPIX_Gpu_stream stream) {
  return allgatherImpl(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, stream, true,
                       "MPIX_Allgather_gpu_enqueue");
}
int MPIX_Reduce_scatter_block_gpu_enqueue(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPIX_Gpu_stream stream) {
  return reduceScatterBlockImpl(sendbuf, recvbuf, recvcount, datatype, op, comm, stream, true,
                                "MPIX_Reduce_scatter_block_gpu_enqueue");
}
int MPIX_Alltoall_gpu_enqueue(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPIX_Gpu_stream stream) {
  return alltoallImpl(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, stream, true,
                      "MPIX_Alltoall_gpu_enqueue");
}

int MPIX_Comm_gpu_init(MPI_Comm comm, MPI_Info info) {
  ApiCall call("MPIX_Comm_gpu_init", comm);
  if (!call.checkComm()) return call.code();
  // The hint chorus_reproducible = exact | default: this communicator's
  // sums, whatever CHORUS_REPRODUCIBLE says (coll/exact_executor.h).
  int exact = -1;  // -1: no hint
  if (info != MPI_INFO_NULL) {
    char value[32] = "";
    int found = 0;
    if (MPI_Info_get(info, "chorus_reproducible", int(sizeof value) - 1, value, &found) != MPI_SUCCESS)
      return call.fail(ErrorClass::Argument, "info: cannot read the key chorus_reproducible");
    if (found) {
      if (!strcmp(value, "exact")) exact = 1;
      else if (!strcmp(value, "default")) exact = 0;
      else
        return call.fail(ErrorClass::Argument, "info: chorus_reproducible = \"%s\" is neither \"exact\" nor \"default\"",
                         value);
    }
  }
  Context *ctx = nullptr;
  Status s = contextGet(comm, &ctx);
  if (s != Status::Ok) return failSetup(call, s, false);
  // Every rank must pass the same hint: compared, so that no rank sums
  // exactly against a peer that does not (the passes would not match).
  int range[2] = {exact, -exact}, agreed[2] = {0, 0};
  if (PMPI_Allreduce(range, agreed, 2, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
    return call.fail(ErrorClass::Internal, "could not compare the chorus_reproducible hint between the ranks");
  if (agreed[0] != -agreed[1])
    return call.fail(ErrorClass::Argument, "info: chorus_reproducible differs between the ranks of comm (this rank: %s)",
                     exact < 0 ? "not given" : exact ? "exact" : "default");
  if (exact >= 0) {
    waitForQueued(*ctx);  // the queued nonblocking calls were made before the hint
    ctx->exactSums = exact == 1;
  }
  return MPI_SUCCESS;
}

int MPIX_Comm_gpu_free(MPI_Comm comm) {
  ApiCall call("MPIX_Comm_gpu_free", comm);
  if (!call.checkComm()) return call.code();
  Status s = contextFree(comm);
  return s == Status::Ok ? MPI_SUCCESS : call.failStatus(s, nullptr);
}

int MPIX_Comm_gpu_trace_dump(MPI_Comm comm) {
  ApiCall call("MPIX_Comm_gpu_trace_dump", comm);
  if (!call.checkComm()) return call.code();
  if (paramInt(ParamId::TraceDepth) <= 0)
    return call.fail(ErrorClass::Unsupported, "the flight recorder is off (CHORUS_TRACE_DEPTH=0)");
  char path[512];
  if (!traceDump("MPIX_Comm_gpu_trace_dump", path, sizeof path))
    return call.fail(ErrorClass::Argument, "cannot write the flight recorder to CHORUS_TRACE_FILE = %s: %s", path,
                     strerror(errno));
  return MPI_SUCCESS;
}

const char *MPIX_Gpu_version_string(void) {
  return "Chorus " CHORUS_STRINGIFY(CHORUS_VERSION_MAJOR) "." CHORUS_STRINGIFY(
      CHORUS_VERSION_MINOR) "." CHORUS_STRINGIFY(CHORUS_VERSION_PATCH)
#ifdef CHORUS_HAVE_CUDA
      " (CUDA)"
#else
      " (host only)"
#endif
      ;
}

}  // extern "C"
