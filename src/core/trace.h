// The flight recorder: each communicator context keeps its last
// CHORUS_TRACE_DEPTH collectives (what was called, with which arguments and
// algorithm, when, how it ended, and which peer it last waited for), so that
// a hang or an error can be read afterwards.  Every recorder of the process
// is written to one file (CHORUS_TRACE_FILE) when a collective fails, on
// SIGUSR1, and on MPIX_Comm_gpu_trace_dump; tools/chorus_trace reads the
// files of all ranks and says who is behind.  Each file names its job, so
// that the tool never mixes two jobs' files, and is created mode 0600
// without following a link or writing into a file another user owns: its
// default name in /tmp is predictable.
//
// Cost on the hot path: two clock reads and a dozen stores into memory the
// rank owns.  Nothing here takes a lock, and writing the file uses only
// write(2) on pre-allocated memory, so it may run in a signal handler.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/collective.h"
#include "core/datatype.h"

namespace chorus {

// Released is never an entry's state: a rank publishes it (RankStatus) when
// it frees the communicator, so that a peer left waiting can say so.
enum class TraceState : uint8_t { Queued, Running, Done, Failed, Released };
const char *traceStateName(TraceState s);

struct TraceEntry {
  uint64_t seq;           // 1, 2, ... per communicator: the same number on every rank for the same call
  int64_t startUs;        // wall clock to the kernel tick (traceNowUs), so ranks of one machine compare
  int64_t endUs;          // 0 until it ends
  uint64_t count;         // elements (per rank block for allgather, reduce-scatter, alltoall)
  uint64_t waitMessage;   // the FIFO message last waited for past the spin phase
  const void *stream;     // the _enqueue variants' stream; null otherwise
  int32_t root;
  int32_t waitPeer;       // -1: never waited past the spin phase
  Coll coll;
  DataType type;
  RedOp op;
  Algo algo;
  uint8_t onDevice;
  uint8_t waitForData;    // 1: waited for the peer's data, 0: for a free slot
  const char *proto;      // "simple", or the CHORUS_PROTO setting for device buffers
  volatile TraceState state;
};

struct FlightRecorder {
  TraceEntry *entries = nullptr;  // [depth], a ring; null when disabled
  uint32_t depth = 0;
  uint32_t next = 0;              // the slot the next collective takes
  int commId = 0;                 // agreed at set-up: equal on every rank of the communicator
  int rank = 0, nranks = 1;
  int slot = -1;                  // in the process's table of recorders (for the dump)
};

// Once per process, after MPI_Init: reads the settings and the launcher's
// job id, expands the file name (%h host, %p pid, %r rank in
// MPI_COMM_WORLD, %j job; one that needs an agreed job id waits for it) and
// installs the SIGUSR1 handler unless the program has its own.  Warns when
// the name is longer than kTracePathMax.
void traceInit(int worldRank);
constexpr size_t kTracePathMax = 511;

// The job identity of the files: the launcher's (PMIx namespace, Open MPI
// job id, Slurm job and step) where it gives one, else one the ranks agree
// on when they set up their first communicator.  Every context set-up, on
// every rank alike, does
//   uint64_t job = traceJobProposal();
//   MPI_Allreduce(MPI_IN_PLACE, &job, 1, MPI_UINT64_T, MPI_MAX, comm);
//   traceJobAgreed(job);
// unconditionally, so that ranks whose environments differ still make the
// same calls.  A rank that has agreed already proposes its id with the top
// bit set, so a later communicator keeps it.  Ranks whose first
// communicators are disjoint agree on different ids (chorus_trace then
// shows them as two jobs); launchers spare that.
uint64_t traceJobProposal();
void traceJobAgreed(uint64_t agreed);
// The id in file names and headers ("" until known).
const char *traceJobId();
// Allocate the recorder of a new context and list it for dumps (no-op
// when CHORUS_TRACE_DEPTH is 0).
void traceAttach(FlightRecorder &rec, int commId, int rank, int nranks);
void traceDetach(FlightRecorder &rec);

int64_t traceNowUs();

// Take the next slot for collective `seq`: null when recording is off.
inline TraceEntry *traceBegin(FlightRecorder &rec, uint64_t seq) {
  if (!rec.entries) return nullptr;
  TraceEntry *e = &rec.entries[rec.next];
  rec.next = rec.next + 1 == rec.depth ? 0 : rec.next + 1;
  e->state = TraceState::Running;
  e->seq = seq;
  e->startUs = traceNowUs();
  e->endUs = 0;
  e->waitPeer = -1;
  e->waitMessage = 0;
  return e;
}

inline void traceEnd(TraceEntry *e, TraceState s) {
  if (!e) return;
  e->endUs = traceNowUs();
  e->state = s;
}

// Write every recorder of the process to the trace file, `why` in its
// header.  Async-signal-safe.  Returns false, errno saying why, when the
// file cannot be written: recording is off or the job id not agreed yet
// (ENOENT), the name is too long (ENAMETOOLONG), a symbolic link is there
// (ELOOP), something other than a regular file of this user with one link
// is there (EPERM), or a write or the close failed (ENOSPC, EFBIG, EIO...:
// a full disk is not a success).  `path` receives the file name.
bool traceDump(const char *why, char *path, size_t pathBytes);

}  // namespace chorus
