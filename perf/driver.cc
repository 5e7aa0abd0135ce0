// The shared driver: setup, the size sweep, timing and checking.  Output
// formats live in report.cc, flags in options.cc.
#include "driver.h"

#include <chorus.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "memory.h"
#include "options.h"
#include "report.h"

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>  // MPIX_Query_cuda_support
#endif

namespace perf {

bool fitsInt(size_t count) { return count <= size_t(INT_MAX); }

namespace {

// Timed iterations are split into this many batches; with --mpi a batch of
// MPI calls follows each batch of Chorus calls, so that both see the same
// machine state (clock boost, neighbours' load) over the run.
constexpr int kBatches = 4;

struct Buffers {
  void *send = nullptr;
  void *recv = nullptr;
  std::vector<unsigned char> hostSend;  // staging for init and check
  std::vector<unsigned char> hostRecv;
};

// Whether every rank says `ok`.
bool allRanks(bool ok, MPI_Comm comm) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, comm);
  return all == 1;
}

// Collective: false if any rank failed; the lowest failing rank prints `why`.
bool agreeOrReport(bool ok, const std::string &why, int rank, MPI_Comm comm) {
  int failing = ok ? INT_MAX : rank, first = INT_MAX;
  MPI_Allreduce(&failing, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == INT_MAX) return true;
  if (rank == first) std::fprintf(stderr, "error (rank %d): %s\n", rank, why.c_str());
  return false;
}

// A failing collective ends the run: other ranks may be stuck inside it.
void checkCall(int rc, const char *who, const char *coll, int rank) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) std::snprintf(msg, sizeof msg, "error code %d", rc);
  std::fprintf(stderr, "error (rank %d): %s %s failed: %s\n", rank, who, coll, msg);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

bool mpiTakesDevicePointers() {
  if (const char *env = std::getenv("CHORUS_PERF_MPI_CUDA_AWARE")) return std::atoi(env) != 0;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

std::string firstLine(const char *s) {
  const char *nl = std::strchr(s, '\n');
  return nl ? std::string(s, nl) : std::string(s);
}

int localRank(MPI_Comm comm) {
  MPI_Comm node;
  int r = 0;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  return r;
}

// Fills run.rankHosts/rankPids/rankWhere on every rank.
void gatherRanks(RunInfo *run, const std::string &where, MPI_Comm comm) {
  constexpr int kLen = 256;
  struct Entry {
    char host[kLen];
    char where[kLen];
    long pid;
  } mine = {}, *all = new Entry[run->nranks];
  int len = 0;
  char host[MPI_MAX_PROCESSOR_NAME];
  MPI_Get_processor_name(host, &len);
  std::snprintf(mine.host, kLen, "%s", host);
  std::snprintf(mine.where, kLen, "%s", where.c_str());
  mine.pid = long(getpid());
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, comm);
  for (int r = 0; r < run->nranks; ++r) {
    run->rankHosts.push_back(all[r].host);
    run->rankWhere.push_back(all[r].where);
    run->rankPids.push_back(all[r].pid);
  }
  delete[] all;
}

// Writes this rank's inputs for `ctx` into the buffers: the receive buffer is
// first poisoned with 0xff bytes (NaN for floats, -1 or max for integers).
bool fillInputs(const Collective &coll, const DataCtx &ctx, Type t, MemKind mem, Buffers *b) {
  const size_t ts = typeInfo(t).size;
  const CollCounts &c = ctx.counts;
  std::memset(b->hostRecv.data(), 0xff, c.recvElems * ts);
  if (c.sendElems) {
    for (size_t i = 0; i < c.sendElems; ++i) storeElement(t, b->hostSend.data(), i, coll.input(ctx, i));
    if (!memCopyIn(mem, b->send, b->hostSend.data(), c.sendElems * ts)) return false;
  } else {
    for (size_t i = 0; i < c.recvElems; ++i) {
      const double v = coll.input(ctx, i);
      if (!std::isnan(v)) storeElement(t, b->hostRecv.data(), i, v);
    }
  }
  return memCopyIn(mem, b->recv, b->hostRecv.data(), c.recvElems * ts);
}

// Wrong elements of this rank's receive buffer; -1 if it could not be read.
long long countWrong(const Collective &coll, const DataCtx &ctx, Type t, MemKind mem, Buffers *b) {
  if (coll.checksRank && !coll.checksRank(ctx)) return 0;
  const CollCounts &c = ctx.counts;
  if (!memCopyOut(mem, b->hostRecv.data(), b->recv, c.recvElems * typeInfo(t).size)) return -1;
  long long wrong = 0;
  for (size_t i = 0; i < c.recvElems; ++i) {
    if (!ctx.gen->matches(loadElement(t, b->hostRecv.data(), i), coll.expected(ctx, i))) ++wrong;
  }
  return wrong;
}

// Without -n, short calls are timed over more iterations: 20 calls of a
// sub-microsecond collective last less than the skew with which ranks leave
// the barrier before each batch, which then dominates the figure.  Enough
// calls for about kTargetSeconds per library, between o.iters and
// kMaxAutoIters; every rank must run the same count, hence the MAX.
constexpr double kTargetSeconds = 0.01;
constexpr double kWarmupSeconds = 0.005;
// The first size of a sweep warms up longer, as nccl-tests warms up before
// its sweep: the ranks leave set-up (and rank 0 its header, forwarded by
// mpirun) out of step.  4 ranks on 2 cores, allgather -b 32 -e 512: with
// 5 ms the first size read 13-15 us whatever size it was, the next 9.5-10;
// with this, 8.8-9.2 like the rest.
constexpr double kFirstWarmupSeconds = 0.05;
constexpr int kMaxWarmupRounds = 100;

int timedIterations(double warmupSecPerCall, const Options &o, MPI_Comm comm) {
  int mine = o.iters;
  if (!o.itersGiven && warmupSecPerCall > 0)
    mine = int(std::min<double>(kMaxAutoIters, std::max<double>(o.iters, kTargetSeconds / warmupSecPerCall)));
  int all = mine;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, comm);
  return all;
}

// The library slots timed at each size, in the order their batches run.
enum Slot { kChorus, kInPlace, kMpi, kSlots };

// Warm-up, then the timed calls in alternating batches.  Fills each slot's
// Timing (Chorus, Chorus in place when `inPlace`, MPI when `mpi`) and
// returns the number of timed calls per slot.
int timeSize(const Collective &coll, const CollArgs &ch, const CollArgs *mpi, bool inPlace, const Options &o, int rank,
             MPI_Comm comm, double warmupSeconds, Timing out[kSlots]) {
  // Warm up in rounds of -w calls until every rank has spent warmupSeconds
  // in them (or kMaxWarmupRounds rounds have run): a one-off stall (mpirun forwarding rank 0's last output line
  // takes a core for milliseconds on a 2-core node) then lands here, not in
  // the timed calls.  Returns the fastest round's time per call: a round
  // that caught a stall must not shrink the timed iterations, or the skew
  // of the barriers between batches weighs on every call (4 ranks on 2
  // cores, 8-byte allreduce: the last round's pace gave 8.5-47 us per call
  // for the first size, the fastest round's a steady 8.5).
  auto warmUp = [&](double seconds, long long *calls, auto &&call) {
    double perCall = 0, spentTotal = 0;
    for (int round = 0; o.warmup > 0 && round < kMaxWarmupRounds; ++round) {
      const double w0 = MPI_Wtime();
      for (int i = 0; i < o.warmup; ++i) call();
      *calls += o.warmup;
      const double spent = MPI_Wtime() - w0;
      perCall = round == 0 ? spent / o.warmup : std::min(perCall, spent / o.warmup);
      spentTotal += spent;
      int more = spentTotal < seconds ? 1 : 0, anyMore = 0;
      MPI_Allreduce(&more, &anyMore, 1, MPI_INT, MPI_MAX, comm);
      if (!anyMore) break;
    }
    return perCall;
  };
  auto chorusCall = [&] { checkCall(coll.runChorus(ch), "Chorus", coll.name, rank); };
  auto inPlaceCall = [&] { checkCall(coll.runChorusInPlace(ch), "Chorus", coll.name, rank); };
  auto mpiCall = [&] { checkCall(coll.runMpi(*mpi), "MPI", coll.name, rank); };
  const double warmupPerCall = warmUp(warmupSeconds, &out[kChorus].warmupCalls, chorusCall);
  // The in-place call shares the buffers and the pace just warmed: one round.
  if (inPlace) warmUp(0, &out[kInPlace].warmupCalls, inPlaceCall);
  if (mpi) warmUp(warmupSeconds, &out[kMpi].warmupCalls, mpiCall);
  const int iters = timedIterations(warmupPerCall, o, comm);
  const int batches = std::min(iters, kBatches);
  // Back to back: one barrier per batch, the batch timed whole, so calls
  // may overlap their neighbours as in a loop of an application.  --sync:
  // a barrier before every call and only the call timed, so each call
  // starts with every rank ready and pays its own synchronisation.  The
  // barrier is MPI's for both, unless --own-barrier puts Chorus's before
  // Chorus's calls, as an OSU benchmark run through libchorus_mpi.so with
  // CHORUS_INTERPOSE=all does (MPI_Barrier goes to Chorus): a barrier leaves
  // its library's shared lines in the state the next call finds
  // (perf/RESULTS.md, the small 2-rank rows).
  auto timeBatch = [&](int n, auto &&barrier, auto &&call) {
    double spent = 0;
    if (!o.sync) {
      MPI_Barrier(comm);
      const double t0 = MPI_Wtime();
      for (int i = 0; i < n; ++i) call();
      return MPI_Wtime() - t0;
    }
    for (int i = 0; i < n; ++i) {
      barrier();
      const double t0 = MPI_Wtime();
      call();
      spent += MPI_Wtime() - t0;
    }
    return spent;
  };
  auto chorusBarrier = [&] {
    if (o.ownBarrier)
      checkCall(MPIX_Barrier_gpu(comm), "Chorus", "barrier", rank);
    else
      MPI_Barrier(comm);
  };
  auto mpiBarrier = [&] { MPI_Barrier(comm); };
  // Per slot: this rank's total, then each batch's time per call.
  double local[kSlots][1 + kBatches] = {};
  for (int b = 0; b < batches; ++b) {
    const int n = iters / batches + (b < iters % batches ? 1 : 0);
    double t[kSlots] = {0, 0, 0};
    if (o.nullRun && mpi)  // the "Chorus" column is MPI too (--null)
      t[kChorus] = timeBatch(n, chorusBarrier, mpiCall);
    else
      t[kChorus] = timeBatch(n, chorusBarrier, chorusCall);
    if (inPlace) t[kInPlace] = timeBatch(n, chorusBarrier, inPlaceCall);
    if (mpi) t[kMpi] = timeBatch(n, mpiBarrier, mpiCall);
    for (int k = 0; k < kSlots; ++k) {
      local[k][0] += t[k];
      local[k][1 + b] = t[k] / n;
    }
  }
  // A call is as slow as its slowest rank: that rank's total gives the
  // time, and its batches the spread, which then brackets the time.
  struct {
    double total;
    int rank;
  } mine[kSlots], slowest[kSlots];
  for (int k = 0; k < kSlots; ++k) mine[k] = {local[k][0], rank};
  MPI_Allreduce(mine, slowest, kSlots, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
  double batch[kSlots][kBatches] = {}, slowestBatch[kSlots][kBatches];
  for (int k = 0; k < kSlots; ++k)
    if (slowest[k].rank == rank) std::copy(local[k] + 1, local[k] + 1 + kBatches, batch[k]);
  MPI_Allreduce(batch, slowestBatch, kSlots * kBatches, MPI_DOUBLE, MPI_MAX, comm);
  for (int k = 0; k < kSlots; ++k) {
    Timing &t = out[k];
    t.iters = iters;
    t.meanUs = slowest[k].total / iters * 1e6;
    t.minUs = *std::min_element(slowestBatch[k], slowestBatch[k] + batches) * 1e6;
    t.maxUs = *std::max_element(slowestBatch[k], slowestBatch[k] + batches) * 1e6;
  }
  return iters;
}

// GB/s for `bytes` in `sec` seconds (0 for an empty or untimed call).
double gbPerSec(size_t bytes, double sec) { return sec > 0 ? double(bytes) / sec / 1e9 : 0; }

// Everything fixed for the run once flags are parsed.
struct Setup {
  const Collective *coll;
  Options opt;
  int rank, nranks;
  MPI_Comm comm;
  Buffers buf;
  const DataGen *gen;
  MPI_Op mpiOp;   // reference op (MPI_OP_NULL for copy collectives)
  bool mpiOn;     // --mpi and nothing excludes MPI for the whole run
};

// One size of the sweep: time, then check; returns the row.
SizeResult runSize(Setup &s, const CollCounts &c, double warmupSeconds) {
  const Collective &coll = *s.coll;
  const Options &o = s.opt;
  const size_t ts = typeInfo(o.type).size;
  CollArgs ch = {c.sendElems ? s.buf.send : nullptr, s.buf.recv, c.count, mpiType(o.type),
                 coll.usesOp ? chorusOp(o.op) : MPI_OP_NULL, o.root, s.rank, s.comm};
  CollArgs mpi = ch;
  mpi.op = s.mpiOp;
  SizeResult r = {};
  r.bytes = c.sizeElems * ts;
  r.count = c.sizeElems;
  r.mpiRan = s.mpiOn && fitsInt(c.count) && fitsInt(c.count * size_t(s.nranks));
  if (s.mpiOn && !r.mpiRan) r.mpiNote = "count exceeds INT_MAX";
  r.inPlaceRan = o.inPlace && coll.runChorusInPlace;

  Timing t[kSlots];
  r.iters = timeSize(coll, ch, r.mpiRan ? &mpi : nullptr, r.inPlaceRan, o, s.rank, s.comm, warmupSeconds, t);
  r.chorus = t[kChorus];
  r.inPlace = t[kInPlace];
  r.mpi = t[kMpi];
  r.timeUs = r.chorus.meanUs;
  r.algBw = gbPerSec(r.bytes, r.timeUs * 1e-6);
  r.busBw = r.algBw * coll.busBwFactor(s.nranks);
  if (r.inPlaceRan) {
    r.inPlaceAlgBw = gbPerSec(r.bytes, r.inPlace.meanUs * 1e-6);
    r.inPlaceBusBw = r.inPlaceAlgBw * coll.busBwFactor(s.nranks);
  }
  if (r.mpiRan) {
    r.mpiTimeUs = r.mpi.meanUs;
    r.mpiAlgBw = gbPerSec(r.bytes, r.mpiTimeUs * 1e-6);
    r.mpiBusBw = r.mpiAlgBw * coll.busBwFactor(s.nranks);
  }

  r.wrong = -1;
  if (o.check) {
    const DataCtx ctx = {s.gen, c, s.rank, s.nranks, o.root};
    bool ok = fillInputs(coll, ctx, o.type, o.mem, &s.buf);
    if (!allRanks(ok, s.comm)) {
      if (s.rank == 0) std::fprintf(stderr, "error: copying inputs to the buffers failed\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    checkCall(coll.runChorus(ch), "Chorus", coll.name, s.rank);
    long long wrong = countWrong(coll, ctx, o.type, o.mem, &s.buf);
    if (wrong < 0) wrong = (long long)c.recvElems;  // unreadable: all wrong
    MPI_Allreduce(&wrong, &r.wrong, 1, MPI_LONG_LONG, MPI_SUM, s.comm);
  }
  return r;
}

// The run's MPI reference: sets s->mpiOp, and a reason in *note when MPI
// cannot run at all.
void planMpi(Setup *s, std::string *note) {
  s->mpiOp = MPI_OP_NULL;
  s->mpiOn = false;
  if (!s->opt.mpi) return;
  const bool device = s->opt.mem == MemKind::Device;
  if (device && !mpiTakesDevicePointers()) {
    *note = "this MPI is not CUDA-aware (set CHORUS_PERF_MPI_CUDA_AWARE=1 to override)";
    return;
  }
  if (s->coll->usesOp) {
    const char *why = nullptr;
    s->mpiOp = mpiReferenceOp(s->opt.type, s->opt.op, device, &why);
    if (s->mpiOp == MPI_OP_NULL) {
      *note = why;
      return;
    }
  }
  s->mpiOn = true;
}

bool allocate(Setup *s, const CollCounts &maxc, std::string *why) {
  const size_t ts = typeInfo(s->opt.type).size;
  // The in-place calls take their input from recvbuf: it holds the send
  // side too (reduce_scatter's n blocks).
  const size_t recvElems = s->opt.inPlace ? std::max(maxc.sendElems, maxc.recvElems) : maxc.recvElems;
  const size_t sendBytes = maxc.sendElems * ts, recvBytes = recvElems * ts;
  s->buf.send = maxc.sendElems ? memAlloc(s->opt.mem, sendBytes) : nullptr;
  s->buf.recv = memAlloc(s->opt.mem, recvBytes);
  if ((maxc.sendElems && !s->buf.send) || !s->buf.recv) {
    *why = "cannot allocate " + std::to_string(sendBytes + recvBytes) + " bytes of buffers";
    return false;
  }
  try {
    s->buf.hostSend.resize(std::max<size_t>(sendBytes, 1));
    s->buf.hostRecv.resize(std::max<size_t>(recvBytes, 1));
  } catch (const std::bad_alloc &) {
    *why = "cannot allocate " + std::to_string(sendBytes + recvBytes) + " bytes of host staging";
    return false;
  }
  return true;
}

void release(Setup *s) {
  if (s->buf.send) memFree(s->opt.mem, s->buf.send);
  if (s->buf.recv) memFree(s->opt.mem, s->buf.recv);
}

const char *baseName(const char *path) {
  const char *slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

int finish(int code, MPI_Comm *comm) {
  if (*comm != MPI_COMM_NULL) MPI_Comm_free(comm);
  MPI_Finalize();
  return code;
}

}  // namespace

int perfMain(int argc, char **argv, const Collective &coll) {
  MPI_Init(&argc, &argv);
  Setup s = {};
  s.coll = &coll;
  MPI_Comm_dup(MPI_COMM_WORLD, &s.comm);
  MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN);  // report, then abort
  MPI_Comm_rank(s.comm, &s.rank);
  MPI_Comm_size(s.comm, &s.nranks);

  RunInfo run;
  run.tool = baseName(argv[0]);
  run.collective = coll.name;
  run.argv.assign(argv, argv + argc);
  run.usesOp = coll.usesOp;
  run.usesRoot = coll.usesRoot;
  run.hasInPlace = coll.runChorusInPlace != nullptr;
  run.nranks = s.nranks;

  std::string err;
  if (!parseOptions(argc, argv, s.nranks, &s.opt, &err)) {
    if (s.rank == 0) std::fprintf(stderr, "%s: %s\n%s", run.tool.c_str(), err.c_str(), usage(run.tool.c_str()).c_str());
    return finish(2, &s.comm);
  }
  if (s.opt.help) {
    if (s.rank == 0) std::fputs(usage(run.tool.c_str()).c_str(), stdout);
    return finish(0, &s.comm);
  }
  run.opt = s.opt;

  std::string where, why;
  bool ok = memSetup(s.opt.mem, localRank(s.comm), &where, &why);
  if (!agreeOrReport(ok, why, s.rank, s.comm)) return finish(2, &s.comm);

  FILE *json = nullptr;
  if (s.rank == 0 && !s.opt.jsonPath.empty()) {
    json = std::fopen(s.opt.jsonPath.c_str(), "w");
    if (!json) why = "cannot write " + s.opt.jsonPath + ": " + std::strerror(errno);
  }
  if (!agreeOrReport(s.rank != 0 || s.opt.jsonPath.empty() || json, why, s.rank, s.comm)) return finish(2, &s.comm);

  run.chorusVersion = MPIX_Gpu_version_string();
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(lib, &len);
  run.mpiVersion = firstLine(lib);
  planMpi(&s, &run.mpiNote);
  gatherRanks(&run, where, s.comm);

  const size_t ts = typeInfo(s.opt.type).size;
  const CollCounts maxc = coll.counts(s.opt.maxBytes, ts, s.nranks);
  ok = allocate(&s, maxc, &why);
  if (!agreeOrReport(ok, why, s.rank, s.comm)) {
    release(&s);
    return finish(2, &s.comm);
  }
  const DataGen gen(s.opt.type, s.opt.op, coll.usesOp, s.nranks);
  s.gen = &gen;
  // Finite, typical values in the buffers before any timing; the in-place
  // calls start from the send side's values, not from the poison.
  const DataCtx maxCtx = {&gen, maxc, s.rank, s.nranks, s.opt.root};
  ok = fillInputs(coll, maxCtx, s.opt.type, s.opt.mem, &s.buf);
  if (ok && s.opt.inPlace && maxc.sendElems)
    ok = memCopyIn(s.opt.mem, s.buf.recv, s.buf.hostSend.data(), maxc.sendElems * ts);
  if (!agreeOrReport(ok, "copying inputs to the buffers failed", s.rank, s.comm)) {
    release(&s);
    return finish(2, &s.comm);
  }
  // Set the communicator up now, not inside the first size's warm-up, whose
  // pace then decides how many calls are timed.
  checkCall(MPIX_Comm_gpu_init(s.comm, MPI_INFO_NULL), "Chorus", "MPIX_Comm_gpu_init", s.rank);

  if (s.rank == 0) printHeader(stdout, run);
  std::vector<SizeResult> results;
  size_t bytes = s.opt.minBytes;
  do {
    const CollCounts c = coll.counts(bytes, ts, s.nranks);
    // Sizes that round to the size just run add nothing.
    if (!results.empty() && results.back().count == c.sizeElems) continue;
    results.push_back(runSize(s, c, results.empty() ? kFirstWarmupSeconds : kWarmupSeconds));
    if (s.rank == 0) printRow(stdout, run, results.back());
  } while (nextSize(s.opt, &bytes));

  // Memory while the communicator's Chorus context (and its FIFOs) is alive.
  const Footprint mine = processFootprint();
  // Host staging always, plus the buffers themselves when they are host memory.
  const long long toolBytes = (long long)(s.buf.hostSend.size() + s.buf.hostRecv.size()) *
                              (s.opt.mem == MemKind::Host ? 2 : 1);
  long long local[3] = {mine.peakRss, mine.shmRss, toolBytes}, most[3] = {0, 0, 0};
  MPI_Allreduce(local, most, 3, MPI_LONG_LONG, MPI_MAX, s.comm);
  run.peakRss = most[0];
  run.shmRss = most[1];
  run.toolBytes = most[2];

  long long wrong = 0;
  for (const SizeResult &r : results) wrong += std::max(0LL, r.wrong);
  int code = wrong ? 1 : 0;
  if (s.rank == 0) {
    printFooter(stdout, run, results);
    if (json) {
      if (!writeJson(json, run, results)) {
        std::fprintf(stderr, "error: writing %s failed\n", s.opt.jsonPath.c_str());
        code = 2;
      }
      std::fclose(json);
    }
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, s.comm);
  release(&s);
  return finish(code, &s.comm);
}

}  // namespace perf
