// CHORUS_CHECK=1: before any data moves, every rank's call is compared with
// the others' (collective, count, element type, op, root, sequence number)
// over a private duplicate of the communicator, so user traffic never
// mixes with it.  Catches the mismatches that otherwise hang or corrupt
// silently, at the price of one small MPI_Allreduce per call.
#pragma once

#include <mpi.h>

#include "coll/host_executor.h"
#include "core/common.h"

namespace chorus {

struct Context;

// Ok when every rank makes the same call `seq`; InvalidArgument with
// `text` naming this rank's call and another rank's otherwise (on every
// rank: they all see the mismatch).  MpiError when MPI fails.
Status checkSignatures(Context &ctx, const CollRequest &req, uint64_t seq, char *text, size_t size);

}  // namespace chorus
