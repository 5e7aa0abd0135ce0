// The routing decision of libchorus_mpi.so, shared by the blocking
// (interpose.cc) and nonblocking (nonblocking.cc) MPI_* definitions.
//
// Every rank of a call must take the same route, or half the ranks wait in
// Chorus and half in MPI.  How a job decides (decideBy) is fixed once:
//  - Never: CHORUS_INTERPOSE=off, or "device" in a job where no rank can
//    hold device memory.
//  - Signature: "all" in a job where no rank can hold device memory (a build
//    without CUDA; or no rank saw a GPU, which the ranks agree on once, in
//    MPI_Init).  Then Chorus's answer depends only on what MPI guarantees to
//    be the same on every rank: the communicator, root and op, and the type
//    signature (count times the predefined type each datatype is made of;
//    typeShape).  Each rank tries the call in Chorus (its checks run, a
//    refusal raises nothing, a supported call runs in the same pass): no
//    agreement, no message.
//  - Agreement: a job where some rank may hold device memory, or where
//    MPI_Init was not seen (an MPI_Init call that bypassed the library).
//    Host on one rank and device on another is legal MPI, so the ranks
//    agree on one flag word per call (a PMPI_Allreduce, BAND) after each
//    probed its own arguments.  Nonblocking calls never route here (a
//    blocking agreement would make MPI_Iallreduce wait for its peers).
#pragma once

#include <mpi.h>

#include <atomic>

extern "C" {
int chorus_interpose_mode(void);
int chorus_interpose_device_build(void);
int chorus_interpose_local_device(void);
void chorus_interpose_probe_begin(void);
int chorus_interpose_probe_end(int rc, int *where, int *commOk);
void chorus_interpose_try_begin(int needContext);
int chorus_interpose_try_end(int rc);
void chorus_interpose_set_hook(void (*fn)(void *, int), void *arg);
int chorus_interpose_take_back_hook(void);
int chorus_interpose_inside(void);
int chorus_interpose_refusal(void);
int chorus_interpose_info_enabled(void);
void chorus_interpose_info(const char *line);
void chorus_interpose_warn(const char *file, int line, const char *func, const char *msg);
void chorus_interpose_set_rank(int worldRank);
int chorus_interpose_stats_enabled(void);
void chorus_interpose_stats(int rank, int nranks, const char *call, unsigned long long routed,
                            unsigned long long mpi, const char *why);
}

namespace chorus_interpose {

enum Coll {
  kAllreduce, kReduce, kBcast, kAllgather, kReduceScatterBlock, kAlltoall, kBarrier,
  kIallreduce, kIreduce, kIbcast, kIallgather, kIreduceScatterBlock, kIalltoall, kIbarrier,
  kNumColls
};
enum Mode { kOff = 0, kDevice = 1, kAll = 2 };
enum class Decide { Never, Signature, Agreement };

// Why a call went to MPI (CHORUS_STATS, doc/interposer.md): the first
// that applies, job-wide reasons before the call's own.
enum Reason {
  kOffSetting,    // "off": CHORUS_INTERPOSE=off
  kNoGpu,         // "no-gpu": CHORUS_INTERPOSE=device, and no rank of the job can hold device memory
  kAgreedJob,     // "agreed-job": an MPI_I* call in a job that agrees per call (some rank sees a GPU)
  kThreadLevel,   // "thread-level": an MPI_I* call below MPI_THREAD_MULTIPLE
  kHostMemory,    // "host-memory": CHORUS_INTERPOSE=device, and no rank's buffers are device memory
  kMixedMemory,   // "mixed-memory": host buffers on some ranks, device ones on others
  kDatatype,      // "datatype": not reducible to one predefined type, or not dense where nothing is staged
  kArguments,     // "arguments": refused by Chorus's checks (type, op, count, root, buffer) on some rank
  kCommunicator,  // "communicator": null, not valid, or an intercommunicator
  kNoContext,     // "no-context": no Chorus context (none yet for an MPI_I* call, or its set-up failed)
  kNumReasons
};

struct Counts {
  std::atomic<unsigned long long> chorus{0}, mpi{0};
  std::atomic<unsigned long long> why[kNumReasons];  // zero: g_counts is static
};
extern Counts g_counts[kNumColls];

// The arguments of an allgather or alltoall.
struct ExchangeArgs {
  const void *sendbuf;
  int sendcount;
  MPI_Datatype sendtype;
  void *recvbuf;
  int recvcount;
  MPI_Datatype recvtype;
  MPI_Comm comm;
};

int mode();
Decide decideBy();
// Whether MPI runs at MPI_THREAD_MULTIPLE (asked once).
bool threadMultiple();
// Why this job sends a call to MPI without asking Chorus (a blocking call
// when `nonblocking` is false), or `otherwise` when it does ask.
Reason jobReason(bool nonblocking, Reason otherwise);
// Why Chorus refused the try or probe that just ended.
inline Reason refusal() {
  static const Reason kRefusal[] = {kCommunicator, kArguments, kNoContext};
  return kRefusal[chorus_interpose_refusal()];
}

inline void countChorus(Coll c) { g_counts[c].chorus.fetch_add(1, std::memory_order_relaxed); }
inline void countMpi(Coll c, Reason why) {
  g_counts[c].mpi.fetch_add(1, std::memory_order_relaxed);
  g_counts[c].why[why].fetch_add(1, std::memory_order_relaxed);
}

// The agreed answer of the Agreement mode: whether this call goes to
// Chorus, and *why not when not.  `call` is the MPIX_* call, probed here;
// `stageable` false when this rank's arguments would need staging, which
// that mode does not do (its buffers may be device memory).
bool agreeToRoute(MPI_Comm comm, bool stageable, int (*probe)(void *), void *arg, Reason *why);

// A call that stays MPI's on every rank whatever its buffers, for `why`.
template <class Mpi>
int viaMpi(Coll coll, Reason why, Mpi &&mpi) {
  if (!chorus_interpose_inside()) countMpi(coll, why);
  return mpi();
}

// Run `call` (an MPIX_* call) in Chorus if Chorus supports it, else `mpi`
// (the PMPI_ call).  Blocking calls only.
template <class Call, class Mpi>
int routeOrMpi(Coll coll, MPI_Comm comm, bool stageable, Call &&call, Mpi &&mpi) {
  if (chorus_interpose_inside()) return mpi();  // Chorus's own MPI calls: not counted
  Reason why = jobReason(false, kArguments);
  switch (decideBy()) {
    case Decide::Never: break;
    case Decide::Signature: {
      chorus_interpose_try_begin(0);
      const int rc = call();
      if (chorus_interpose_try_end(rc)) {
        countChorus(coll);
        return rc;
      }
      why = refusal();
      break;
    }
    case Decide::Agreement:
      if (agreeToRoute(comm, stageable, [](void *c) { return (*static_cast<Call *>(c))(); }, &call, &why)) {
        // Tried too: its checks passed on every rank, and a Chorus set-up
        // that fails (agreed on every rank: a full /dev/shm) hands the call
        // back to MPI on every rank.
        chorus_interpose_try_begin(0);
        const int rc = call();
        if (chorus_interpose_try_end(rc)) {
          countChorus(coll);
          return rc;
        }
        why = refusal();
      }
      break;
  }
  countMpi(coll, why);
  return mpi();
}

}  // namespace chorus_interpose
