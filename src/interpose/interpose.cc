// libchorus_mpi.so: MPI's collectives, routed to Chorus where it supports
// the call and to the PMPI_ function otherwise (README, "Zero code change";
// man chorus_mpi).  This file: the blocking collectives, the routing
// decision (routing.h says how the ranks come to the same answer), and
// MPI_Init and MPI_Finalize; nonblocking.cc has the MPI_I* forms.
#include <mpi.h>

#include <cstdio>
#include <string>

#include "chorus.h"
#include "routing.h"
#include "type_shape.h"

namespace chorus_interpose {

Counts g_counts[kNumColls];

namespace {

const char *const kCollNames[kNumColls] = {
    "MPI_Allreduce",  "MPI_Reduce",  "MPI_Bcast",  "MPI_Allgather",  "MPI_Reduce_scatter_block",  "MPI_Alltoall",
    "MPI_Barrier",    "MPI_Iallreduce", "MPI_Ireduce", "MPI_Ibcast", "MPI_Iallgather", "MPI_Ireduce_scatter_block",
    "MPI_Ialltoall", "MPI_Ibarrier"};
const char *const kReasonNames[kNumReasons] = {"off",          "no-gpu",   "agreed-job", "thread-level",
                                               "host-memory",  "mixed-memory", "datatype", "arguments",
                                               "communicator", "no-context"};

// Bits of the flag word the ranks agree on (bitwise AND over the ranks).
enum : int { kSupported = 1, kHostOrNone = 2, kDeviceOrNone = 4 };

// Whether some rank of the job may hold device memory: -1 not known (MPI_Init
// was not seen here), 0 no, 1 yes.  Written once, in MPI_Init, before any
// collective.
int g_jobDevice = -1;

// After PMPI_Init: the ranks agree once whether any of them sees a GPU.
void learnJobMemory() {
  if (!chorus_interpose_device_build()) {
    g_jobDevice = 0;
    return;
  }
  if (mode() == kOff) return;
  const int mine = chorus_interpose_local_device();
  int any = 1;
  if (PMPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS) g_jobDevice = any;
}

// After learnJobMemory.  A job that routes nothing sets up no Chorus
// context, which is where the log learns its rank otherwise.  A library
// preloaded to route calls that routes none is a surprise (the default,
// "device", in a job without GPUs): said once per job, by world rank 0.
void sayRouting() {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  chorus_interpose_set_rank(rank);
  if (rank != 0 || decideBy() != Decide::Never || mode() == kOff) return;
  char msg[400];
  snprintf(msg, sizeof msg,
           "libchorus_mpi.so routes no MPI call to Chorus in this job: CHORUS_INTERPOSE=device (the default) "
           "routes calls on device memory only, and %s. CHORUS_INTERPOSE=all routes calls on host memory too, "
           "=off silences this; CHORUS_STATS=1 counts the calls and why they stayed MPI's",
           chorus_interpose_device_build() ? "no rank of this job sees a GPU" : "this build of Chorus has no CUDA");
  chorus_interpose_warn(__FILE__, __LINE__, __func__, msg);
}

// CHORUS_STATS: a line per MPI function called, and their total.
void printStats() {
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  unsigned long long routed = 0, mpi = 0, whyAll[kNumReasons] = {};
  auto whyText = [](const unsigned long long *why) {
    std::string text;
    for (int r = 0; r < kNumReasons; ++r)
      if (why[r]) text += (text.empty() ? "" : ",") + std::string(kReasonNames[r]) + ":" + std::to_string(why[r]);
    return text.empty() ? std::string("-") : text;
  };
  for (int c = 0; c < kNumColls; ++c) {
    const unsigned long long r = g_counts[c].chorus.load(), m = g_counts[c].mpi.load();
    if (r + m == 0) continue;
    unsigned long long why[kNumReasons];
    for (int w = 0; w < kNumReasons; ++w) whyAll[w] += why[w] = g_counts[c].why[w].load();
    chorus_interpose_stats(rank, size, kCollNames[c], r, m, whyText(why).c_str());
    routed += r;
    mpi += m;
  }
  chorus_interpose_stats(rank, size, "total", routed, mpi, whyText(whyAll).c_str());
}

}  // namespace

int mode() {
  // Read once: chorus_interpose_mode parses the settings on first use.
  static const int m = chorus_interpose_mode();
  return m;
}

Decide decideBy() {
  static const Decide d = [] {
    const int jobDevice = chorus_interpose_device_build() ? g_jobDevice : 0;
    if (mode() == kOff || (mode() == kDevice && jobDevice == 0)) return Decide::Never;
    return jobDevice == 0 ? Decide::Signature : Decide::Agreement;
  }();
  return d;
}

Reason jobReason(bool nonblocking, Reason otherwise) {
  switch (decideBy()) {
    case Decide::Never: return mode() == kOff ? kOffSetting : kNoGpu;
    case Decide::Agreement: return nonblocking ? kAgreedJob : otherwise;
    case Decide::Signature: break;
  }
  return nonblocking && !threadMultiple() ? kThreadLevel : otherwise;
}

bool threadMultiple() {
  static const bool multiple = [] {
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    return provided == MPI_THREAD_MULTIPLE;
  }();
  return multiple;
}

bool agreeToRoute(MPI_Comm comm, bool stageable, int (*probe)(void *), void *arg, Reason *why) {
  int where = -1, commOk = 0;
  chorus_interpose_probe_begin();
  const int rc = probe(arg);
  const int supported = chorus_interpose_probe_end(rc, &where, &commOk);
  // A communicator Chorus refuses (null, invalid, inter) is refused on
  // every rank: nothing to agree on, and nothing to agree with.
  *why = kCommunicator;
  if (!commOk) return false;
  int flags = supported && stageable ? kSupported : 0;
  if (where != 1) flags |= kHostOrNone;
  if (where != 0) flags |= kDeviceOrNone;
  int agreed = flags;
  if (PMPI_Allreduce(&flags, &agreed, 1, MPI_INT, MPI_BAND, comm) != MPI_SUCCESS) return false;
  const bool mixed = !(agreed & kHostOrNone) && !(agreed & kDeviceOrNone);
  const bool allNone = (agreed & kHostOrNone) && (agreed & kDeviceOrNone);
  // device: some rank has device buffers, none has host buffers
  const bool memoryOk = mode() == kAll ? !mixed : (agreed & kDeviceOrNone) && !allNone;
  *why = mixed ? kMixedMemory : !memoryOk ? kHostMemory : supported && !stageable ? kDatatype : kArguments;
  return memoryOk && (agreed & kSupported);
}

}  // namespace chorus_interpose

using namespace chorus_interpose;

namespace {

// A staged buffer: freed when the call ends.
struct Staged {
  void *data = nullptr;
  Staged() = default;
  Staged(const Staged &) = delete;
  Staged &operator=(const Staged &) = delete;
  ~Staged() { stageFree(data); }
};

// Allgather and alltoall: a send and a receive type, each reduced to its
// predefined type and staged when not dense.  `chorus` is the MPIX_* call
// on (send buffer, count, type, receive buffer, count, type).
template <class Chorus, class Mpi>
int routeExchange(Coll coll, const ExchangeArgs &a, bool sendPerPeer, Chorus &&chorus, Mpi &&mpi) {
  const bool inPlace = a.sendbuf == MPI_IN_PLACE;
  TypeShape st, rt;
  if (decideBy() == Decide::Never || !typeShape(a.recvtype, &rt) || (!inPlace && !typeShape(a.sendtype, &st)))
    return viaMpi(coll, jobReason(false, kDatatype), mpi);
  if (inPlace) st = rt;
  const MPI_Count rn = a.recvcount * rt.per, sn = inPlace ? rn : a.sendcount * st.per;
  if ((st.dense && rt.dense) || decideBy() != Decide::Signature)
    return routeOrMpi(coll, a.comm, st.dense && rt.dense,
                      [&] { return chorus(a.sendbuf, sn, st.base, a.recvbuf, rn, rt.base); }, mpi);
  // Negative counts are MPI's to report (MPI_ERR_COUNT), not staging's.
  if (a.recvcount < 0 || (!inPlace && a.sendcount < 0)) return viaMpi(coll, kArguments, mpi);
  int size = 1;
  PMPI_Comm_size(a.comm, &size);
  const MPI_Count sendElems = MPI_Count(a.sendcount) * (sendPerPeer ? size : 1);
  const MPI_Count recvElems = MPI_Count(a.recvcount) * size;
  Staged in, out;
  bool fellBack = false;
  in.data = inPlace || st.dense ? nullptr : stageIn(a.sendbuf, sendElems, a.sendtype, st, true, a.comm);
  out.data = rt.dense ? nullptr : stageIn(a.recvbuf, recvElems, a.recvtype, rt, inPlace, a.comm);
  if ((!inPlace && !st.dense && !in.data) || (!rt.dense && !out.data)) return stagingFailed(a.comm);
  const void *s = inPlace ? MPI_IN_PLACE : in.data ? in.data : a.sendbuf;
  void *r = out.data ? out.data : a.recvbuf;
  const int rc = routeOrMpi(coll, a.comm, true, [&] { return chorus(s, sn, st.base, r, rn, rt.base); },
                            [&] { return fellBack = true, MPI_SUCCESS; });
  if (fellBack) return mpi();  // refused (counted): MPI on the user's own arguments
  return rc == MPI_SUCCESS && out.data ? stageOut(out.data, a.recvbuf, recvElems, a.recvtype, rt, a.comm) : rc;
}

}  // namespace

extern "C" {

int MPI_Init(int *argc, char ***argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) {
    learnJobMemory();
    sayRouting();
  }
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) {
    learnJobMemory();
    sayRouting();
  }
  return rc;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  auto mpi = [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm); };
  TypeShape t;
  if (decideBy() == Decide::Never || !typeShape(datatype, &t))
    return viaMpi(kAllreduce, jobReason(false, kDatatype), mpi);
  const MPI_Count n = count * t.per;
  if (t.dense || decideBy() != Decide::Signature)
    return routeOrMpi(kAllreduce, comm, t.dense,
                      [&] { return MPIX_Allreduce_gpu(sendbuf, recvbuf, n, t.base, op, comm); }, mpi);
  if (count < 0) return viaMpi(kAllreduce, kArguments, mpi);  // MPI_ERR_COUNT, MPI's to raise
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  Staged in, out;
  bool fellBack = false;
  in.data = inPlace ? nullptr : stageIn(sendbuf, count, datatype, t, true, comm);
  out.data = stageIn(recvbuf, count, datatype, t, inPlace, comm);
  if ((!inPlace && !in.data) || !out.data) return stagingFailed(comm);
  const int rc = routeOrMpi(kAllreduce, comm, true,
                            [&] { return MPIX_Allreduce_gpu(inPlace ? MPI_IN_PLACE : in.data, out.data, n, t.base,
                                                            op, comm); },
                            [&] { return fellBack = true, MPI_SUCCESS; });
  if (fellBack) return mpi();  // refused (counted): MPI on the user's own arguments
  return rc == MPI_SUCCESS ? stageOut(out.data, recvbuf, count, datatype, t, comm) : rc;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm) {
  auto mpi = [&] { return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm); };
  TypeShape t;
  if (decideBy() == Decide::Never || !typeShape(datatype, &t))
    return viaMpi(kReduce, jobReason(false, kDatatype), mpi);
  const MPI_Count n = count * t.per;
  if (t.dense || decideBy() != Decide::Signature)
    return routeOrMpi(kReduce, comm, t.dense,
                      [&] { return MPIX_Reduce_gpu(sendbuf, recvbuf, n, t.base, op, root, comm); }, mpi);
  if (count < 0) return viaMpi(kReduce, kArguments, mpi);
  // Only the root has a receive buffer (and may pass MPI_IN_PLACE).
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  const bool isRoot = rank == root, inPlace = sendbuf == MPI_IN_PLACE;
  Staged in, out;
  bool fellBack = false;
  in.data = inPlace ? nullptr : stageIn(sendbuf, count, datatype, t, true, comm);
  out.data = isRoot ? stageIn(recvbuf, count, datatype, t, inPlace, comm) : nullptr;
  if ((!inPlace && !in.data) || (isRoot && !out.data)) return stagingFailed(comm);
  const int rc = routeOrMpi(kReduce, comm, true,
                            [&] { return MPIX_Reduce_gpu(inPlace ? MPI_IN_PLACE : in.data, isRoot ? out.data : recvbuf,
                                                         n, t.base, op, root, comm); },
                            [&] { return fellBack = true, MPI_SUCCESS; });
  if (fellBack) return mpi();  // refused (counted): MPI on the user's own arguments
  return rc == MPI_SUCCESS && isRoot ? stageOut(out.data, recvbuf, count, datatype, t, comm) : rc;
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  auto mpi = [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); };
  TypeShape t;
  if (decideBy() == Decide::Never || !typeShape(datatype, &t))
    return viaMpi(kBcast, jobReason(false, kDatatype), mpi);
  const MPI_Count n = count * t.per;
  if (t.dense || decideBy() != Decide::Signature)
    return routeOrMpi(kBcast, comm, t.dense, [&] { return MPIX_Bcast_gpu(buffer, n, t.base, root, comm); }, mpi);
  if (count < 0) return viaMpi(kBcast, kArguments, mpi);
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  Staged staged;
  bool fellBack = false;
  staged.data = stageIn(buffer, count, datatype, t, rank == root, comm);
  if (!staged.data) return stagingFailed(comm);
  const int rc = routeOrMpi(kBcast, comm, true, [&] { return MPIX_Bcast_gpu(staged.data, n, t.base, root, comm); },
                            [&] { return fellBack = true, MPI_SUCCESS; });
  if (fellBack) return mpi();  // refused (counted): MPI on the user's own arguments
  return rc == MPI_SUCCESS && rank != root ? stageOut(staged.data, buffer, count, datatype, t, comm) : rc;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  return routeExchange(
      kAllgather, {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm}, false,
      [&](const void *s, MPI_Count sn, MPI_Datatype st, void *r, MPI_Count rn, MPI_Datatype rt) {
        return MPIX_Allgather_gpu(s, sn, st, r, rn, rt, comm);
      },
      [&] { return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm) {
  auto mpi = [&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm); };
  TypeShape t;
  if (decideBy() == Decide::Never || !typeShape(datatype, &t))
    return viaMpi(kReduceScatterBlock, jobReason(false, kDatatype), mpi);
  const MPI_Count n = recvcount * t.per;
  if (t.dense || decideBy() != Decide::Signature)
    return routeOrMpi(kReduceScatterBlock, comm, t.dense,
                      [&] { return MPIX_Reduce_scatter_block_gpu(sendbuf, recvbuf, n, t.base, op, comm); }, mpi);
  if (recvcount < 0) return viaMpi(kReduceScatterBlock, kArguments, mpi);
  int size = 1;
  PMPI_Comm_size(comm, &size);
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  const MPI_Count all = MPI_Count(recvcount) * size;
  // In place, the input is the whole receive buffer.
  Staged in, out;
  bool fellBack = false;
  in.data = stageIn(inPlace ? recvbuf : sendbuf, all, datatype, t, true, comm);
  out.data = inPlace ? nullptr : stageIn(recvbuf, recvcount, datatype, t, false, comm);
  if (!in.data || (!inPlace && !out.data)) return stagingFailed(comm);
  const int rc = routeOrMpi(kReduceScatterBlock, comm, true,
                            [&] { return MPIX_Reduce_scatter_block_gpu(inPlace ? MPI_IN_PLACE : in.data,
                                                                       inPlace ? in.data : out.data, n, t.base, op,
                                                                       comm); },
                            [&] { return fellBack = true, MPI_SUCCESS; });
  if (fellBack) return mpi();  // refused (counted): MPI on the user's own arguments
  return rc == MPI_SUCCESS ? stageOut(inPlace ? in.data : out.data, recvbuf, recvcount, datatype, t, comm) : rc;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  return routeExchange(
      kAlltoall, {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm}, true,
      [&](const void *s, MPI_Count sn, MPI_Datatype st, void *r, MPI_Count rn, MPI_Datatype rt) {
        return MPIX_Alltoall_gpu(s, sn, st, r, rn, rt, comm);
      },
      [&] { return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}

// No buffers, no types: Chorus's answer depends on the communicator and
// the setting only, the same on every rank, so it is tried in every mode.
int MPI_Barrier(MPI_Comm comm) {
  if (chorus_interpose_inside()) return PMPI_Barrier(comm);
  // Under "device" a barrier has no device buffers.
  Reason why = jobReason(false, kHostMemory);
  if (mode() == kAll) {
    chorus_interpose_try_begin(0);
    const int rc = MPIX_Barrier_gpu(comm);
    if (chorus_interpose_try_end(rc)) {
      countChorus(kBarrier);
      return rc;
    }
    why = refusal();
  }
  countMpi(kBarrier, why);
  return PMPI_Barrier(comm);
}

// The routing report, before MPI (and Chorus's contexts) go away.
int MPI_Finalize(void) {
  if (chorus_interpose_info_enabled()) {
    static const char *const kModes[] = {"off", "device", "all"};
    static const char *const kDecide[] = {"nothing is routed", "by type signature, no agreement",
                                          "agreed per call"};
    char line[200];
    snprintf(line, sizeof line, "interpose (CHORUS_INTERPOSE=%s): routing %s%s", kModes[mode()],
             kDecide[int(decideBy())], threadMultiple() ? "" : "; MPI_I* stay MPI's below MPI_THREAD_MULTIPLE");
    chorus_interpose_info(line);
    for (int c = 0; c < kNumColls; ++c) {
      snprintf(line, sizeof line, "interpose (CHORUS_INTERPOSE=%s): %s chorus=%llu mpi=%llu", kModes[mode()],
               kCollNames[c], g_counts[c].chorus.load(), g_counts[c].mpi.load());
      chorus_interpose_info(line);
    }
  }
  if (chorus_interpose_stats_enabled()) printStats();
  return PMPI_Finalize();
}

}  // extern "C"
