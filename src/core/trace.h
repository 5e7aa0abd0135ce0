// The flight recorder: each communicator context keeps its last
// CHORUS_TRACE_DEPTH collectives (what was called, with which arguments and
// algorithm, when, how it ended, and which peer it last waited for), so that
// a hang or an error can be read afterwards.  Every recorder of the process
// is written to one file (CHORUS_TRACE_FILE) when a collective fails, on
// SIGUSR1, and on MPIX_Comm_gpu_trace_dump; tools/chorus_trace reads the
// files of all ranks and says who is behind.
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

enum class TraceState : uint8_t { Queued, Running, Done, Failed };
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

// Once per process, after MPI_Init: reads the settings, expands the file
// name (%h host, %p pid, %r rank in MPI_COMM_WORLD) and installs the
// SIGUSR1 handler unless the program has its own.
void traceInit(int worldRank);
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
// header.  Async-signal-safe.  Returns false when the file cannot be
// written (or recording is off); `path` receives the file name.
bool traceDump(const char *why, char *path, size_t pathBytes);

}  // namespace chorus
