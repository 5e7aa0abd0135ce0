// The seam between the blocking implementations (api/collectives.cc) and
// the nonblocking entry points (api/nonblocking.cc).  A nonblocking call
// runs the blocking implementation with t_deferred set: every check, the
// context's set-up and the memory-type test happen in the caller's thread
// as for a blocking call, and for host buffers the collective stops there,
// captured, to be run later by runDeferred on the communicator's progress
// thread.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "coll/host_executor.h"

namespace chorus {

struct Context;

struct DeferredCollective {
  bool captured = false;  // false: nothing left to run (it failed, was empty, or ran at the call)
  Context *ctx = nullptr;
  CollRequest req{};
  size_t planBytes = 0;
  // An empty call under CHORUS_CHECK: nothing moves, but its comparison
  // with the peers' calls is still to be made, in its turn on the queue.
  bool checkOnly = false;
};
// Set by a nonblocking entry point around its blocking implementation.
extern thread_local DeferredCollective *t_deferred __attribute__((tls_model("initial-exec")));

// The interposer's completion hook for the next MPIX_I* call of this
// thread (interpose_support.cc): it copies a staged result into the user's
// buffers, so it runs once the collective is done and before its request
// completes.  A call that starts the collective takes it (and later calls
// it once, with the collective's code); one that fails at the call leaves
// it to the interposer.
struct CompletionHook {
  void (*fn)(void *arg, int rc) = nullptr;
  void *arg = nullptr;
};
extern thread_local CompletionHook t_completionHook;

// Run a captured collective; raises its error through `comm`'s handler.
int runDeferred(const char *name, MPI_Comm comm, DeferredCollective &d);

// The blocking implementations, reporting errors under `name`.
int allreduceEntry(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, const char *name);
int reduceEntry(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm, const char *name);
int bcastEntry(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, const char *name);
int allgatherEntry(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, const char *name);
int reduceScatterBlockEntry(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm, const char *name);
int alltoallEntry(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, const char *name);
int barrierEntry(MPI_Comm comm, const char *name);

}  // namespace chorus
