// CHORUS_CHECK=1: before any data moves, every rank's call is compared with
// the others' (collective, count, element type, op, root, sequence number)
// over a private duplicate of the communicator, so user traffic never
// mixes with it.  Names every argument that differs, where the check every
// message's header makes always (transport/fifo.h) only says that the
// calls differ, at the price of a small gather to rank 0 and an answer
// back per call (point to point, so that a rank that never joins is named).
#pragma once

#include <mpi.h>

#include "coll/host_executor.h"
#include "core/common.h"

namespace chorus {

struct Context;

// Ok when every rank makes the same call `seq`; Mismatch with `text`
// naming this rank's call and another rank's otherwise (on every rank:
// they all see the mismatch).  Timeout when a rank has not joined within
// CHORUS_TIMEOUT (it skipped the call, or is far behind): `text` names it,
// and the context is broken (its channel's error set), as after any
// timeout.  MpiError when MPI fails; Aborted on a broken context.  `text`
// is filled whenever the result is not Ok.
Status checkSignatures(Context &ctx, const CollRequest &req, uint64_t seq, char *text, size_t size);

}  // namespace chorus
