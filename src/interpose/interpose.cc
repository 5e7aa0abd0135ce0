// libchorus_mpi.so: MPI's blocking collectives, routed to Chorus where it
// supports the call and to the PMPI_ function otherwise (README, "Zero code
// change"; man chorus_mpi).
//
// Routing must come out the same on every rank of a call, or half the ranks
// wait in Chorus and half in MPI.  What Chorus checks is partly guaranteed
// equal by MPI (communicator, root, op, the policy) and partly not (a
// predefined type on one rank and a derived type of the same signature on
// another; host memory on one rank, device memory on another).  So each rank
// asks Chorus about its own arguments (a probe: the MPIX_* checks run, a
// refusal raises nothing) and the ranks agree with one PMPI_Allreduce(BAND)
// of a flag word.  The barrier has no buffers or types: its answer depends on
// the communicator and the policy only, and needs no agreement.
#include <mpi.h>

#include <atomic>
#include <cstdio>

#include "chorus.h"

extern "C" {
int chorus_interpose_mode(void);
int chorus_interpose_device_build(void);
void chorus_interpose_probe_begin(void);
int chorus_interpose_probe_end(int rc, int *where, int *commOk);
int chorus_interpose_inside(void);
int chorus_interpose_info_enabled(void);
void chorus_interpose_info(const char *line);
}

namespace {

enum Coll { kAllreduce, kReduce, kBcast, kAllgather, kReduceScatterBlock, kAlltoall, kBarrier, kNumColls };
const char *const kCollNames[kNumColls] = {"MPI_Allreduce", "MPI_Reduce", "MPI_Bcast", "MPI_Allgather",
                                           "MPI_Reduce_scatter_block", "MPI_Alltoall", "MPI_Barrier"};
enum Mode { kOff = 0, kDevice = 1, kAll = 2 };

// Bits of the flag word the ranks agree on (bitwise AND over the ranks).
enum : int { kSupported = 1, kHostOrNone = 2, kDeviceOrNone = 4 };

struct Counts {
  std::atomic<unsigned long long> chorus{0}, mpi{0};
};
Counts g_counts[kNumColls];

int mode() {
  // Read once: chorus_interpose_mode parses the settings on first use.
  static const int m = chorus_interpose_mode();
  return m;
}

// Whether any call with buffers may go to Chorus.  "device" in a build
// without CUDA cannot: then no call pays for the probe and the agreement.
bool canRoute() {
  static const bool can = mode() == kAll || (mode() == kDevice && chorus_interpose_device_build());
  return can;
}

// The flag word of this rank: whether Chorus would run its arguments (the
// probe, a call of the MPIX_* function with the probe on), and where its
// buffers are.
template <class Call>
int localFlags(Call call, int *commOk) {
  int where = -1;
  chorus_interpose_probe_begin();
  const int rc = call();
  const int supported = chorus_interpose_probe_end(rc, &where, commOk);
  int flags = supported ? kSupported : 0;
  if (where != 1) flags |= kHostOrNone;
  if (where != 0) flags |= kDeviceOrNone;
  return flags;
}

// True when this call goes to Chorus, the same answer on every rank.
// `call` is the MPIX_* call itself, probed first and run when it returns true.
template <class Call>
bool toChorus(Coll coll, MPI_Comm comm, Call call) {
  if (chorus_interpose_inside()) return false;  // Chorus's own MPI calls: not counted
  const int m = mode();
  bool go = false;
  if (canRoute()) {
    int commOk = 0;
    const int flags = localFlags(call, &commOk);
    // A communicator Chorus refuses (null, invalid, inter) is refused on
    // every rank: nothing to agree on, and nothing to agree with.
    if (commOk) {
      int agreed = flags;
      if (PMPI_Allreduce(&flags, &agreed, 1, MPI_INT, MPI_BAND, comm) != MPI_SUCCESS) agreed = 0;
      const bool mixed = !(agreed & kHostOrNone) && !(agreed & kDeviceOrNone);
      const bool allNone = (agreed & kHostOrNone) && (agreed & kDeviceOrNone);
      if (m == kAll)
        go = (agreed & kSupported) && !mixed;
      else  // device: some rank has device buffers, none has host buffers
        go = (agreed & kSupported) && (agreed & kDeviceOrNone) && !allNone;
    }
  }
  (go ? g_counts[coll].chorus : g_counts[coll].mpi).fetch_add(1, std::memory_order_relaxed);
  return go;
}

bool barrierToChorus(MPI_Comm comm) {
  if (chorus_interpose_inside()) return false;
  bool go = false;
  if (mode() == kAll) {
    int commOk = 0;
    go = localFlags([comm] { return MPIX_Barrier_gpu(comm); }, &commOk) & kSupported;
  }
  (go ? g_counts[kBarrier].chorus : g_counts[kBarrier].mpi).fetch_add(1, std::memory_order_relaxed);
  return go;
}

}  // namespace

extern "C" {

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  auto call = [&] { return MPIX_Allreduce_gpu(sendbuf, recvbuf, count, datatype, op, comm); };
  return toChorus(kAllreduce, comm, call) ? call() : PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm) {
  auto call = [&] { return MPIX_Reduce_gpu(sendbuf, recvbuf, count, datatype, op, root, comm); };
  return toChorus(kReduce, comm, call) ? call() : PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  auto call = [&] { return MPIX_Bcast_gpu(buffer, count, datatype, root, comm); };
  return toChorus(kBcast, comm, call) ? call() : PMPI_Bcast(buffer, count, datatype, root, comm);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  auto call = [&] { return MPIX_Allgather_gpu(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); };
  return toChorus(kAllgather, comm, call)
             ? call()
             : PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm) {
  auto call = [&] { return MPIX_Reduce_scatter_block_gpu(sendbuf, recvbuf, recvcount, datatype, op, comm); };
  return toChorus(kReduceScatterBlock, comm, call)
             ? call()
             : PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  auto call = [&] { return MPIX_Alltoall_gpu(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); };
  return toChorus(kAlltoall, comm, call)
             ? call()
             : PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Barrier(MPI_Comm comm) { return barrierToChorus(comm) ? MPIX_Barrier_gpu(comm) : PMPI_Barrier(comm); }

// The routing report, before MPI (and Chorus's contexts) go away.
int MPI_Finalize(void) {
  if (chorus_interpose_info_enabled()) {
    static const char *const kModes[] = {"off", "device", "all"};
    for (int c = 0; c < kNumColls; ++c) {
      char line[160];
      snprintf(line, sizeof line, "interpose (CHORUS_INTERPOSE=%s): %s chorus=%llu mpi=%llu", kModes[mode()],
               kCollNames[c], g_counts[c].chorus.load(), g_counts[c].mpi.load());
      chorus_interpose_info(line);
    }
  }
  return PMPI_Finalize();
}

}  // extern "C"
