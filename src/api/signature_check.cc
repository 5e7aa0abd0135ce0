#include "api/signature_check.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "comm/context.h"

namespace chorus {

namespace {

enum Field { kSeq, kColl, kCount, kType, kElemSize, kOp, kRoot, kFields };

// What the comparing rank (rank 0 of the check's communicator) answers each
// rank: every call alike, another rank's differs (which, and its fields), or
// some rank never joined in time (the first such and how many).
enum Verdict : int64_t { kSame, kDiffers, kMissing };
enum VerdictField { kKind, kOther, kTheirs, kVerdictFields = kTheirs + kFields };
enum Tag { kTagCall = 1, kTagVerdict = 2 };

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

// The fields in which two calls differ, with both ranks' values: "count
// (rank 0: 8, rank 1: 1024)".  The mismatch message leads with them, as
// MPI_Error_string keeps only MPI_MAX_ERROR_STRING-1 characters of it.
// Another collective makes its other fields moot; another datatype, its
// element size.
void describeDifference(const int64_t *a, int rankA, const int64_t *b, long long rankB, char *out, size_t size) {
  std::string text;
  auto add = [&](const char *field, const std::string &va, const std::string &vb) {
    if (va == vb) return;
    text += (text.empty() ? "" : ", ") + std::string(field) + " (rank " + std::to_string(rankA) + ": " + va +
            ", rank " + std::to_string(rankB) + ": " + vb + ")";
  };
  auto num = [](int64_t v) { return std::to_string((long long)v); };
  add("collective", collName(Coll(a[kColl])), collName(Coll(b[kColl])));
  add("call number", "#" + num(a[kSeq]), "#" + num(b[kSeq]));
  if (a[kColl] == b[kColl]) {
    const Coll coll = Coll(a[kColl]);
    add("count", num(a[kCount]), num(b[kCount]));
    add("datatype", dataTypeName(DataType(a[kType])), dataTypeName(DataType(b[kType])));
    if (a[kType] == b[kType]) add("element size", num(a[kElemSize]) + " B", num(b[kElemSize]) + " B");
    if (coll == Coll::Allreduce || coll == Coll::Reduce || coll == Coll::ReduceScatter)
      add("op", redOpName(RedOp(a[kOp])), redOpName(RedOp(b[kOp])));
    if (coll == Coll::Reduce || coll == Coll::Bcast) add("root", num(a[kRoot]), num(b[kRoot]));
  }
  snprintf(out, size, "%s", text.empty() ? "their arguments" : text.c_str());
}

int64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Test `reqs` until all complete or `deadline` (0: none) passes; true when
// all completed.  Polls, then sleeps a little between tests: the check is
// a debugging aid, the peers it waits for may be far behind.
bool waitUntil(std::vector<MPI_Request> &reqs, int64_t deadline, int *mpiError) {
  for (long round = 0;; ++round) {
    int done = 0;
    const int rc = MPI_Testall(int(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
      *mpiError = rc;
      return false;
    }
    if (done) return true;
    if (deadline > 0 && (round & 15) == 15 && nowNs() > deadline) return false;
    if (round < 1000) {
      sched_yield();
    } else {
      timespec ts = {0, 50000};
      nanosleep(&ts, nullptr);
    }
  }
}

// Requests that will not complete in time: cancel the receives, let the sends go.
void abandon(std::vector<MPI_Request> &reqs, bool receives) {
  for (MPI_Request &r : reqs) {
    if (r == MPI_REQUEST_NULL) continue;
    if (receives) MPI_Cancel(&r);
    MPI_Request_free(&r);
  }
}

// The comparing rank's verdict for rank r, given every rank's call.
void judge(const std::vector<int64_t> &all, int nranks, int r, int64_t *verdict) {
  const int64_t *mine = &all[size_t(r) * kFields];
  verdict[kKind] = kSame;
  verdict[kOther] = -1;
  for (int q = 0; q < nranks; ++q) {
    const int64_t *theirs = &all[size_t(q) * kFields];
    if (std::equal(mine, mine + kFields, theirs)) continue;
    verdict[kKind] = kDiffers;
    verdict[kOther] = q;
    std::copy(theirs, theirs + kFields, verdict + kTheirs);
    return;
  }
}

// Rank 0 of the check's communicator: gather every call, judge, answer
// every rank that joined.  A rank whose call has not come by `deadline`
// (0: none) makes the verdict kMissing, naming the first such.
void compareAsRoot(Context &ctx, const int64_t *mine, int64_t deadline, int64_t *verdict, int *mpiError) {
  const int n = ctx.nranks;
  std::vector<int64_t> all(size_t(kFields) * size_t(n));
  std::copy(mine, mine + kFields, all.begin());
  std::vector<MPI_Request> recvs(size_t(n - 1), MPI_REQUEST_NULL);
  for (int r = 1; r < n && !*mpiError; ++r)
    *mpiError = MPI_Irecv(&all[size_t(r) * kFields], kFields, MPI_INT64_T, r, kTagCall, ctx.checkComm, &recvs[size_t(r - 1)]);
  if (*mpiError) return;
  const bool everyone = waitUntil(recvs, deadline, mpiError);
  if (*mpiError) return;
  std::vector<char> arrived(size_t(n), 1);
  int missing = 0, first = -1;
  if (!everyone) {
    for (int r = 1; r < n; ++r) {
      int done = 0;
      MPI_Test(&recvs[size_t(r - 1)], &done, MPI_STATUS_IGNORE);
      if (done) continue;
      arrived[size_t(r)] = 0;
      if (first < 0) first = r;
      ++missing;
    }
    abandon(recvs, true);
  }
  // Everyone who joined hears the verdict, so that they all fail alike.
  std::vector<int64_t> answers(size_t(kVerdictFields) * size_t(n), 0);
  std::vector<MPI_Request> sends;
  for (int r = 0; r < n; ++r) {
    if (!arrived[size_t(r)]) continue;
    int64_t *v = &answers[size_t(r) * kVerdictFields];
    if (missing) {
      v[kKind] = kMissing;
      v[kOther] = first;
      v[kTheirs] = missing;
    } else {
      judge(all, n, r, v);
    }
    if (r == 0) continue;
    sends.push_back(MPI_REQUEST_NULL);
    *mpiError = MPI_Isend(v, kVerdictFields, MPI_INT64_T, r, kTagVerdict, ctx.checkComm, &sends.back());
    if (*mpiError) return;
  }
  std::copy(answers.begin(), answers.begin() + kVerdictFields, verdict);
  // Small messages to ranks waiting for them: they leave at once.
  if (!waitUntil(sends, nowNs() + 1000000000, mpiError) && !*mpiError) abandon(sends, false);
}

}  // namespace

Status checkSignatures(Context &ctx, const CollRequest &req, uint64_t seq, char *text, size_t size) {
  const int64_t mine[kFields] = {int64_t(seq),          int64_t(req.coll), int64_t(req.count), int64_t(req.type),
                                 int64_t(req.elemSize), int64_t(req.op),   int64_t(req.root)};
  char ours[128], theirs[128];
  describeCall(mine, ours, sizeof ours);
  // Broken by an earlier failure (a comparison that timed out leaves its
  // communicator holding messages no call will match): no more comparisons.
  if (ctx.channel.error != Status::Ok) {
    snprintf(text, size, "%s: an earlier collective on this communicator failed; free it and use another", ours);
    return Status::Aborted;
  }
  if (ctx.nranks == 1) return Status::Ok;
  // Bounded like every wait (CHORUS_TIMEOUT): a rank that skips the call
  // must not leave the others in the comparison for ever.  The ranks wait
  // a little longer for the verdict than rank 0 waits for their calls, so
  // that when a call is missing they hear which.
  const int64_t timeout = ctx.channel.timeoutNs;
  const int64_t grace = std::min<int64_t>(timeout, std::max<int64_t>(2000000000, timeout / 10));
  const int64_t start = nowNs();
  int64_t verdict[kVerdictFields] = {};
  int mpiError = MPI_SUCCESS;
  if (ctx.rank == 0) {
    compareAsRoot(ctx, mine, timeout > 0 ? start + timeout : 0, verdict, &mpiError);
  } else {
    std::vector<MPI_Request> send(1, MPI_REQUEST_NULL), recv(1, MPI_REQUEST_NULL);
    mpiError = MPI_Irecv(verdict, kVerdictFields, MPI_INT64_T, 0, kTagVerdict, ctx.checkComm, &recv[0]);
    if (!mpiError) mpiError = MPI_Isend(mine, kFields, MPI_INT64_T, 0, kTagCall, ctx.checkComm, &send[0]);
    if (!mpiError && !waitUntil(recv, timeout > 0 ? start + timeout + grace : 0, &mpiError) && !mpiError) {
      abandon(recv, true);
      abandon(send, false);
      ctx.channel.error = Status::Timeout;
      snprintf(text, size,
               "%s: rank 0, which compares the calls (CHORUS_CHECK), did not answer within %.0f s (CHORUS_TIMEOUT): "
               "it skipped this call or is still before it",
               ours, double(timeout + grace) / 1e9);
      return Status::Timeout;
    }
    if (!mpiError && !waitUntil(send, 0, &mpiError)) abandon(send, false);
  }
  if (mpiError) {
    snprintf(text, size, "%s: MPI failed while comparing the calls (CHORUS_CHECK), error %d", ours, mpiError);
    return Status::MpiError;
  }
  switch (verdict[kKind]) {
    case kSame: return Status::Ok;
    case kMissing:
      ctx.channel.error = Status::Timeout;
      snprintf(text, size,
               "%s: rank %lld never joined the comparison of the calls (CHORUS_CHECK) within %.0f s (CHORUS_TIMEOUT)%s: "
               "it skipped this call or is still before it",
               ours, (long long)verdict[kOther], double(timeout) / 1e9,
               verdict[kTheirs] > 1 ? " (nor did others)" : "");
      return Status::Timeout;
    default:
      describeCall(verdict + kTheirs, theirs, sizeof theirs);
      char differ[160];
      describeDifference(mine, ctx.rank, verdict + kTheirs, (long long)verdict[kOther], differ, sizeof differ);
      snprintf(text, size, "the ranks' calls differ in %s (CHORUS_CHECK): rank %d called %s, rank %lld called %s",
               differ, ctx.rank, ours, (long long)verdict[kOther], theirs);
      return Status::Mismatch;
  }
}

}  // namespace chorus
