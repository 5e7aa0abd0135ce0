// Argument checks shared by every entry point.  Each check that fails
// raises the error through the communicator's handler (once) and makes the
// call return its code; the message names the call, the argument and value.
#pragma once

#include <mpi.h>

#include <string>

#include "api/errors.h"
#include "api/mpi_types.h"
#include "coll/algorithms.h"
#include "comm/context.h"

namespace chorus {

// The interposition library (src/interpose) asks "would Chorus run this
// call?" by calling the MPIX_* entry point with a probe on: every check runs
// as for a real call, but a failed one raises nothing and the call returns
// before any data moves, so the answer can never drift from the checks.
struct ApiProbe {
  bool active = false;
  bool commOk = false;  // checkComm passed (the rest may still fail)
  int where = -1;       // -1 no buffer was looked at (count 0), 0 host, 1 device
  // A try rather than a question: once every check passed, execute() ends
  // the probe and runs the call (errors from then on are raised as for any
  // call), so a routed call is checked once.
  bool run = false;
  // Refuse (silently) a communicator without a context yet: its set-up is
  // collective and blocking, which a nonblocking MPI_I* call must not be.
  bool needContext = false;
};
extern thread_local ApiProbe t_probe __attribute__((tls_model("initial-exec")));
// Nonzero while this thread is inside an MPIX_* call: the MPI_* calls Chorus
// makes itself (its bootstrap allgathers on the user's communicator) must
// reach MPI, not loop back into Chorus through the interposer.
extern thread_local int t_apiDepth __attribute__((tls_model("initial-exec")));

class ApiCall {
 public:
  ApiCall(const char *name, MPI_Comm comm) : name_(name), comm_(comm) { ++t_apiDepth; }
  ~ApiCall() { --t_apiDepth; }
  ApiCall(const ApiCall &) = delete;
  ApiCall &operator=(const ApiCall &) = delete;

  bool failed() const { return code_ != MPI_SUCCESS; }
  int code() const { return code_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }
  const char *name() const { return name_; }
  // The communicator's Chorus context when checkComm found one cached.
  Context *context() const { return ctx_; }

  // Each returns false (after raising) when the argument is bad.  The test
  // is inline and the message out of line: a small call runs a dozen of
  // these, and as calls they cost a third of its argument checks
  // (callgrind: ~60 of ~180 instructions of an 8-byte broadcast).
  bool checkComm() {
    if (comm_ != MPI_COMM_NULL && (ctx_ = contextCached(comm_))) return adoptContext();  // this thread's last one
    return checkCommAfresh();
  }
  bool checkCount(const char *arg, MPI_Count count) { return count >= 0 || failCount(arg, count); }
  bool checkRoot(int root) { return (root >= 0 && root < size_) || failRoot(root); }
  bool checkType(const char *arg, MPI_Datatype dt, TypeMapping *out) {
    return mapDatatypeAgain(dt, out) || checkTypeAfresh(arg, dt, out);  // the repeat costs a compare
  }
  bool checkReduction(MPI_Datatype dt, MPI_Op op, TypeMapping *type, RedOp *redop);
  bool checkBuffer(const char *arg, const void *buf, MPI_Count count) {
    return buf || count == 0 || failBuffer(arg, count);
  }
  bool checkNotInPlace(const char *arg, const void *buf) { return buf != MPI_IN_PLACE || failInPlace(arg); }
  // MPI forbids a send buffer that is the receive buffer: in place is said
  // with MPI_IN_PLACE (which each collective defines), and the algorithms
  // would read what they already overwrote.
  bool checkNotAliased(const void *sendbuf, const void *recvbuf, MPI_Count count) {
    return sendbuf != recvbuf || count == 0 || failAliased(sendbuf);
  }
  bool checkBytes(MPI_Count count, size_t elemSize, int blocks) {
    const unsigned long long limit = ~0ull >> 2;
    unsigned long long bytes = 0;  // multiplied, not divided: divisions cost ~20 ns per call
    return (!__builtin_mul_overflow((unsigned long long)count, (unsigned long long)elemSize, &bytes) &&
            !__builtin_mul_overflow(bytes, (unsigned long long)blocks, &bytes) && bytes <= limit) ||
           failBytes(count, elemSize, blocks);
  }
  bool checkSameSignature(MPI_Count sendcount, MPI_Datatype sendtype, const TypeMapping &send, MPI_Count recvcount,
                          MPI_Datatype recvtype, const TypeMapping &recv);

  // Raise an error of class `cls` with "name: " prefixed to the message.
  int fail(ErrorClass cls, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
  // Under the interposer's probe a refusal needs no text: true (the call
  // refused) then, so that the caller skips building the message.
  bool quietRefusal() {
    if (!t_probe.active) return false;
    code_ = MPI_ERR_OTHER;
    return true;
  }
  // Turn an internal status into an MPI error, with `detail` when known.
  int failStatus(Status s, const char *detail);

 private:
  // The checks' slow halves: the first call on a communicator, a type not
  // seen last, and every failure (each raises and returns false).
  bool checkCommAfresh();
  // comm has a context (ctx_): it was checked when the context was made.
  bool adoptContext() {
    rank_ = ctx_->rank;
    size_ = ctx_->nranks;
    t_probe.commOk = true;
    return true;
  }
  bool checkTypeAfresh(const char *arg, MPI_Datatype dt, TypeMapping *out);
  bool failCount(const char *arg, MPI_Count count);
  bool failRoot(int root);
  bool failBuffer(const char *arg, MPI_Count count);
  bool failInPlace(const char *arg);
  bool failAliased(const void *buf);
  bool failBytes(MPI_Count count, size_t elemSize, int blocks);

  const char *name_;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 0;
  int code_ = MPI_SUCCESS;
  Context *ctx_ = nullptr;
};

}  // namespace chorus
