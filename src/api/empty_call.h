// Empty collectives (count 0) cost only their argument checks, and a loop of
// them costs less still: a call whose arguments equal those this thread
// last checked and passed, on a communicator whose context is still alive,
// returns at once.  Open MPI returns an empty MPI_Alltoall in about 4 ns;
// the full checks (two datatype lookups, the op, the buffers) cost about
// 20 ns, which made the empty rows of the perf tables 0.2x.
//
// Only calls that passed are remembered, and only the arguments that decide
// the outcome are compared (a count-0 call reads no buffer, so only whether
// a buffer is MPI_IN_PLACE matters).  A communicator is recognised through
// the context lookup's epoch (core/context.h): freeing any context moves it
// on, so a freed communicator whose handle MPI reuses cannot hit.  Datatype
// and op handles are compared as they are: only predefined handles (which
// never change) and Chorus's own named ones pass the checks, since derived
// datatypes and user ops are refused, so only those are ever remembered.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "coll/algorithms.h"
#include "core/common.h"
#include "comm/context.h"

namespace chorus {

// Every field a whole 8 bytes: with ints side by side the compiler stored
// them separately and compared them as one 8-byte load, which stalls on
// store forwarding (measured: 70% of an empty call's time on that load).
struct EmptyCall {
  MPI_Comm comm;
  MPI_Datatype sendtype, recvtype;
  MPI_Op op;
  int64_t sendcount;
  uint64_t tag;  // the collective, the root and which buffers are MPI_IN_PLACE: emptyTag()

  bool operator==(const EmptyCall &o) const {
    return comm == o.comm && sendtype == o.sendtype && recvtype == o.recvtype && op == o.op &&
           sendcount == o.sendcount && tag == o.tag;
  }
};

inline uint64_t emptyTag(Coll coll, int root, const void *sendbuf, const void *recvbuf) {
  return uint64_t(coll) | (sendbuf == MPI_IN_PLACE ? 0x100u : 0u) | (recvbuf == MPI_IN_PLACE ? 0x200u : 0u) |
         (uint64_t(uint32_t(root)) << 32);
}

struct EmptyCallMemo {
  EmptyCall call;
  uint64_t epoch;  // 0: empty
};
// initial-exec: a static TLS slot, read without a call to __tls_get_addr
// (the general model's price in a shared library, a third of an empty call).
extern thread_local EmptyCallMemo t_emptyCall __attribute__((tls_model("initial-exec")));

// Whether `c` repeats this thread's last empty call that passed its checks.
inline bool emptyCallRepeats(const EmptyCall &c) {
  const EmptyCallMemo &m = t_emptyCall;
  return m.epoch != 0 && m.call == c && m.epoch == contextEpoch();
}

// Remember `c`, which just passed its checks on communicator context `ctx`
// (nothing is remembered without a context: no epoch guards the handle).
inline int emptyCallPassed(const EmptyCall &c, const Context *ctx) {
  if (ctx) t_emptyCall = {c, contextEpoch()};
  return MPI_SUCCESS;
}

}  // namespace chorus
