// Nonblocking barriers a rank stopped waiting for (the release's, the UCX
// set-up's: comm/context.cc, transport/ucx/ucx.cc), and the private
// communicators they run on (PeerLinks::barrierComm).
//
// Open MPI 4.1 refuses to free an unfinished MPI_Ibarrier (a fatal
// MPI_ERR_REQUEST), and a request left alone goes on being progressed by
// its libnbc after its communicator is freed (SIGSEGV in the pml's isend,
// seen in CI).  So such a barrier is kept here until MPI completes it,
// which it does when the late ranks come, and its communicator is freed
// only then.  Thread-safe.
#pragma once

#include <mpi.h>

namespace chorus {

// Keeps `request`, a barrier on `comm` that is given up on.  The caller
// still owns `comm` and lets it go with releaseBarrierComm.
void keepAbandonedBarrier(MPI_Request request, MPI_Comm comm);

// Frees `*comm` (sets it to MPI_COMM_NULL), or, while a kept barrier still
// runs on it, hands it over to be freed once the last such completes.
void releaseBarrierComm(MPI_Comm *comm);

// Frees what completed since; called on each release and at MPI_Finalize
// (any MPI call progresses the kept barriers meanwhile).
void reapAbandonedBarriers();

}  // namespace chorus
