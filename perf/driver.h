// The shared driver of the perf tools.  Each tool (allreduce_perf.cc, ...)
// fills one Collective descriptor and calls perfMain; the driver owns flags,
// buffers, timing, correctness checks, the table and the JSON report.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "datatypes.h"

namespace perf {

// The arguments of one collective call, the same for Chorus and for MPI.
struct CollArgs {
  const void *sendbuf;  // nullptr for in-place collectives (bcast)
  void *recvbuf;
  size_t count;         // the call's count argument (per rank for the
                        // gather/scatter/alltoall ones)
  MPI_Datatype type;
  MPI_Op op;            // Chorus's op, or MPI's reference op
  int root;
  int rank;             // the caller's rank in comm (in place at the root only)
  MPI_Comm comm;
};

// Element counts of one test size.
struct CollCounts {
  size_t count;      // the count argument
  size_t sendElems;  // elements of the send buffer (0: in place on recv)
  size_t recvElems;  // elements of the receive buffer
  size_t sizeElems;  // elements behind the reported size (see README)
};

// Everything a collective's data callbacks need to know.
struct DataCtx {
  const DataGen *gen;
  CollCounts counts;
  int rank;
  int nranks;
  int root;
};

struct Collective {
  const char *name;  // "allreduce"
  bool usesOp;       // reduces: -o applies
  bool usesRoot;     // rooted: -r applies
  // Counts for a requested size in bytes (rounded down to whole elements).
  CollCounts (*counts)(size_t bytes, size_t typeSize, int nranks);
  // busbw = algbw * busBwFactor(nranks).
  double (*busBwFactor)(int nranks);
  // Value of element i of this rank's send buffer (of its receive buffer for
  // in-place collectives); NaN leaves the element as the driver's poison.
  double (*input)(const DataCtx &ctx, size_t i);
  // Expected value of element i of this rank's receive buffer after the call.
  double (*expected)(const DataCtx &ctx, size_t i);
  // Whether this rank's receive buffer is defined after the call (reduce:
  // root only).  nullptr: every rank.
  bool (*checksRank)(const DataCtx &ctx);
  // One call, returning MPI_SUCCESS or an MPI error code.
  int (*runChorus)(const CollArgs &args);
  int (*runMpi)(const CollArgs &args);
  // The same call with MPI_IN_PLACE, working on recvbuf (which the driver
  // sizes for both the send and the receive side); nullptr where the
  // collective has no in-place form distinct from runChorus (broadcast,
  // barrier).
  int (*runChorusInPlace)(const CollArgs &args);
};

// The whole tool: MPI_Init to MPI_Finalize.  Returns the process exit code:
// 0 success, 1 wrong results, 2 bad usage or unusable setup.
int perfMain(int argc, char **argv, const Collective &coll);

// Count arguments beyond int cannot go to MPI-3 calls; the MPI runs skip them.
bool fitsInt(size_t count);

}  // namespace perf
