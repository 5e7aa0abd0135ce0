// One Chorus context per MPI communicator: created on first use (or by
// MPIX_Comm_gpu_init), cached as an MPI attribute, torn down by the
// attribute's delete callback (MPI_Comm_free, MPIX_Comm_gpu_free, and
// MPI_Finalize through an attribute on MPI_COMM_SELF).
#pragma once

#include <atomic>

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "coll/algorithms.h"
#include "coll/bulk_links.h"
#include "coll/host_channel.h"
#include "coll/patterns.h"
#include "core/stats.h"
#include "core/trace.h"
#include "cuda/cuda_executor.h"
#include "cuda/device_links.h"
#include "transport/transport.h"

namespace chorus {

class ProgressQueue;  // core/progress.h; created by the first nonblocking collective

// The communicator as the collectives see it: its links (transport.h), how
// its ranks sit on nodes, and what each call needs (channel, plan cache,
// flight recorder, executors' state).
struct Context : PeerLinks {
  std::vector<int> ringOrder, ringWhere;  // ranks grouped by node, and the inverse (several nodes only)
  std::vector<int> nodeStart;             // where each node's ranks start in ringOrder (nnodes + 1)
  NodeLayout nodeLayout{};                // the four above, for the trees across nodes
  PlanShape planShape;                    // what the planner needs to know of the layout
  DeviceWiring deviceWiring{1, true};     // the kernels' channels and device links on this layout
  // Several nodes of equal size: this node's ranks, and the ranks with our
  // local index on every node (the hierarchical allreduce's groups).
  std::vector<int> localRanks, crossRanks;
  // The same groups' ring neighbours, by rank, for every rank (empty when
  // there are no groups): which FIFOs the hierarchical allreduce streams on.
  std::vector<int> localPrev, crossPrev;
  LinkLayout bulkLinks;                   // which FIFOs are full (bulk_links.h); points into the vectors above
  bool everyFifoFull = false;             // a small communicator: full FIFOs on every link (fifoShape)
  std::vector<char> scratch;              // fullFifo.slotBytes, for the direct algorithms
  HostChannel channel;
  uint64_t collectives = 0;               // count of collectives run: the sequence number of the last one
  // The last call's plan: a plan depends only on the collective, the size,
  // the engine and planShape (the settings are read once), and working it out is a
  // tenth of a small call (~100 of ~1000 instructions, callgrind).
  struct {
    bool valid = false;
    Coll coll = Coll::Allreduce;
    size_t bytes = 0;
    Engine engine = Engine::Host;
    Plan plan{};
  } lastPlan;
  FlightRecorder trace;                   // the last CHORUS_TRACE_DEPTH collectives (trace.h)
  MPI_Comm checkComm = MPI_COMM_NULL;     // CHORUS_CHECK: a private duplicate for comparing calls
  std::unique_ptr<CommStats> stats;       // CHORUS_STATS, or the INFO summary (STATS); null for neither
  bool logCalls = false;                  // CHORUS_DEBUG=TRACE for the coll subsystem: a line per call (read once)
  bool exactSums = false;                 // CHORUS_REPRODUCIBLE=exact (coll/exact_executor.h), an agreed setting
  CudaAttachment cuda;                    // the CUDA executor's state and staging memory (CUDA builds only)
  // The nonblocking collectives' queue and worker (core/progress.h); null
  // until the first one.  Created and read by the thread calling on the
  // communicator; the blocking collectives wait for it to drain.
  ProgressQueue *progress = nullptr;
};

// Whether the FIFO from `sender` into `receiver` (any two ranks of the
// communicator) is full: where the link streams bulk data, or everywhere on
// a small communicator.  Both ends compute it alike, from rank arithmetic.
bool fullFifoLink(const Context &ctx, int receiver, int sender);
// (PeerLinks::fullLink; fifoShape() in transport.h gives its slots.)

// The 64-bit fields each rank contributes to the set-up's first allgather
// (bootstrap, context.cc): host, machine, place, checksum, cores, settings,
// network, a GPU node's links.
constexpr size_t kBootstrapFields = 8;

// The wiring of a communicator whose ranks sit on `hosts` (a node identity
// by rank) at `places` (their order inside a node), as its rank ctx.rank of
// ctx.nranks sees it: nodes, rings, trees and groups, the FIFOs' shapes and
// which links are full, and the transports.  No MPI: the set-up calls it
// with what the ranks exchanged, chorus_sim and the tests with a layout
// of their own, so both size the same communicator.
void wireCommunicator(Context &ctx, const std::vector<uint64_t> &hosts, const std::vector<int64_t> &places);

// The context of `comm`, created (collectively) when missing.
Status contextGet(MPI_Comm comm, Context **out);
// The context cached on `comm`, or nullptr (never creates one).  Needs MPI
// initialized and not finalized.
Context *contextFind(MPI_Comm comm);
// Moves on whenever a context is destroyed: a thread's remembered lookup
// (or api/empty_call.h's memo) taken at another epoch is stale.
extern std::atomic<uint64_t> g_contextEpoch;
inline uint64_t contextEpoch() { return g_contextEpoch.load(std::memory_order_acquire); }
// This thread's last lookup (contextFind).
struct LookupCache {
  MPI_Comm comm;
  Context *ctx;
  uint64_t epoch;  // 0: empty
};
// initial-exec: a thread-pointer offset instead of a __tls_get_addr call.
extern thread_local LookupCache t_lookup __attribute__((tls_model("initial-exec")));
// The context of `comm` if this thread looked it up last and it is still
// alive, else nullptr.  Makes no MPI call, so it is safe in any MPI state:
// a hit proves MPI is initialized and not finalized.  Inline: every call
// starts here.
inline Context *contextCached(MPI_Comm comm) {
  const LookupCache &c = t_lookup;
  if (c.epoch == contextEpoch() && c.comm == comm) return c.ctx;
  return nullptr;
}
// Release the context of `comm`, if any (local, not collective).
Status contextFree(MPI_Comm comm);

// Global one-time set-up after MPI_Init: keyvals, the finalize hook, the
// thread level.
Status libraryInit();
// Whether MPI was initialized with MPI_THREAD_MULTIPLE (read once, by
// libraryInit): then other threads may call MPI while Chorus works, and
// nonblocking collectives progress on a thread of their own.
//
// What several threads share, each on its own communicator, and why no
// lock is taken on the call path at any thread level:
//  - a context is used by one thread at a time (MPI's rule for a
//    communicator; its progress thread and the blocking calls take turns
//    through ProgressQueue::drain), so its FIFOs, counters, statistics and
//    flight recorder need no lock;
//  - the lookup cache (t_lookup), the empty-call memo and the interposer's
//    probe are thread-local; the epoch that invalidates them is atomic;
//  - one-time set-up (libraryInit, settings, logging, topology, Chorus's
//    datatypes) is std::call_once, then read-only; the predefined-type cache
//    is lock-free to read and locks only to add a type, once per type;
//  - the live-context set (g_live) when a context is created or released;
//  - the one exception, on communicators that cross nodes: the UCX worker
//    lock (transport/ucx/ucx_worker.cc), taken around every call into UCX,
//    for the process has one worker shared by its communicators: two
//    threads' collectives on two communicators progress it in turn;
//  - flight-recorder slots are claimed by compare-exchange; shm segment
//    names by an atomic counter and random bits.
// Known gaps: communicators set up by several threads at once may agree on
// the same number (agreeCommId), which only names them in trace files and
// CHORUS_STATS lines.
bool threadMultiple();

}  // namespace chorus
