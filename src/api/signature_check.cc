#include "api/signature_check.h"

#include <cstdio>
#include <vector>

#include "comm/context.h"

namespace chorus {

namespace {

enum Field { kSeq, kColl, kCount, kType, kElemSize, kOp, kRoot, kFields };

void describeCall(const int64_t *f, char *out, size_t size) {
  const Coll coll = Coll(f[kColl]);
  int n = snprintf(out, size, "%s #%lld (count %lld of %s, %lld B each", collName(coll), (long long)f[kSeq],
                   (long long)f[kCount], dataTypeName(DataType(f[kType])), (long long)f[kElemSize]);
  if (n < 0 || size_t(n) >= size) return;
  if (coll == Coll::Allreduce || coll == Coll::Reduce || coll == Coll::ReduceScatter)
    n += snprintf(out + n, size - size_t(n), ", op %s", redOpName(RedOp(f[kOp])));
  if (n < 0 || size_t(n) >= size) return;
  if (coll == Coll::Reduce || coll == Coll::Bcast) n += snprintf(out + n, size - size_t(n), ", root %lld", (long long)f[kRoot]);
  if (n < 0 || size_t(n) >= size) return;
  snprintf(out + n, size - size_t(n), ")");
}

}  // namespace

Status checkSignatures(Context &ctx, const CollRequest &req, uint64_t seq, char *text, size_t size) {
  const int64_t mine[kFields] = {int64_t(seq),          int64_t(req.coll), int64_t(req.count), int64_t(req.type),
                                 int64_t(req.elemSize), int64_t(req.op),   int64_t(req.root)};
  // The minimum of each field and of its negation (the maximum) in one call.
  int64_t both[2 * kFields], agreed[2 * kFields];
  for (int i = 0; i < kFields; ++i) {
    both[i] = mine[i];
    both[kFields + i] = -mine[i];
  }
  CHORUS_MPICHECK(MPI_Allreduce(both, agreed, 2 * kFields, MPI_INT64_T, MPI_MIN, ctx.checkComm));
  bool same = true;
  for (int i = 0; i < kFields; ++i) same = same && agreed[i] == -agreed[kFields + i];
  if (same) return Status::Ok;
  // Every rank saw the mismatch, so every rank takes part in naming it.
  std::vector<int64_t> all(size_t(kFields) * size_t(ctx.nranks));
  CHORUS_MPICHECK(MPI_Allgather(mine, kFields, MPI_INT64_T, all.data(), kFields, MPI_INT64_T, ctx.checkComm));
  int other = 0;
  for (int r = 0; r < ctx.nranks; ++r) {
    bool differs = false;
    for (int i = 0; i < kFields; ++i) differs = differs || all[size_t(r) * kFields + size_t(i)] != mine[i];
    if (differs) {
      other = r;
      break;
    }
  }
  char ours[128], theirs[128];
  describeCall(mine, ours, sizeof ours);
  describeCall(&all[size_t(other) * kFields], theirs, sizeof theirs);
  snprintf(text, size, "the ranks' calls differ (CHORUS_CHECK): rank %d called %s, rank %d called %s", ctx.rank, ours,
           other, theirs);
  return Status::InvalidArgument;
}

}  // namespace chorus
