// The exact mode's collectives on the host executor (CHORUS_REPRODUCIBLE=
// exact, issue 30): a sum as three passes over the ranks, each an ordinary
// collective on integers (coll/exact_sum.h says why that is exact).
#pragma once

#include "coll/algorithms.h"
#include "coll/host_executor.h"

namespace chorus {

// Whether `req` is one the exact mode changes: MPI_SUM or MPIX_GPU_AVG on
// half, bfloat16, float or double (complex types arrive as their parts) in
// allreduce, reduce or reduce-scatter.
bool exactApplies(const CollRequest &req);

// Why the exact mode refuses (type, op), or nullptr when it takes it: a
// floating type with an op other than SUM, AVG, MIN, MAX (order-dependent,
// so not silently left so), or SUM/AVG on the fp8 types.
const char *exactRefusal(DataType type, RedOp op);

// Run `req` (exactApplies) on `ch`, planning each pass as `shape` says.
Status hostExecuteExact(HostChannel &ch, const CollRequest &req, const PlanShape &shape);

}  // namespace chorus
