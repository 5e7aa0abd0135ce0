// CHORUS_STATS=1: per communicator and collective, how many calls, bytes
// and seconds, and which algorithms ran; printed when the context is
// released (MPIX_Comm_gpu_free, MPI_Comm_free, MPI_Finalize).  Under
// libchorus_mpi.so, also which MPI calls it routed and why not.
#pragma once

#include <cstdint>

#include "core/collective.h"

namespace chorus {

struct CollStats {
  uint64_t calls = 0;
  uint64_t bytes = 0;  // what the planner saw: the whole vector, or one rank's block
  int64_t ns = 0;
  uint64_t failed = 0;
  uint64_t byAlgo[int(Algo::Count)] = {};
  // Device buffers: bytes copied through host memory and run by the CPU
  // (across nodes, cuda_staged.cc); 0 where the kernels ran.
  uint64_t staged = 0;
};

struct CommStats {
  CollStats coll[int(Coll::Count)];
};

int64_t statsNowNs();

inline void statsRecord(CommStats &s, Coll coll, Algo algo, uint64_t bytes, int64_t ns, bool failed) {
  CollStats &c = s.coll[int(coll)];
  ++c.calls;
  c.bytes += bytes;
  c.ns += ns;
  c.failed += failed;
  ++c.byAlgo[int(algo)];
}

// One line per collective called, on stderr:
//   CHORUS STATS comm 0 rank 1/4: allreduce calls=20 bytes=160 time=0.000412 s failed=0 algos=direct:20 staged=0
void statsPrint(const CommStats &s, int commId, int rank, int nranks);

// libchorus_mpi.so's line per MPI function, at MPI_Finalize: calls routed
// to Chorus, calls left to MPI, and why those were (reason:count, comma
// separated; doc/interposer.md lists the reasons):
//   CHORUS STATS interpose rank 0/2: MPI_Allreduce routed=0 mpi=5 why=no-gpu:5
void statsPrintRouting(int rank, int nranks, const char *call, unsigned long long routed, unsigned long long mpi,
                       const char *why);

}  // namespace chorus
