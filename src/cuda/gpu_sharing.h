// Ranks that share one GPU.  Without MPS the GPU time-slices between their
// processes, so a FIFO hand-off from one rank's kernel to another's on the
// same GPU may wait for the other context's timeslice; with MPS their
// kernels run side by side.  Chorus supports both (the test suites run two
// ranks per device) and says which one a job got.
#pragma once

#include "transport/transport.h"

namespace chorus {

// Log at CHORUS_DEBUG=INFO which ranks of this node share this rank's GPU
// and whether MPS is active.  `all` is the refreshed PeerInfo table (bus ids
// valid).  Returns how many ranks of the communicator, this one included,
// run on this rank's GPU.
int reportGpuSharing(const PeerInfo *all, int nranks, int self);

// Whether an MPS control daemon serves this process: its pipe directory
// (CUDA_MPS_PIPE_DIRECTORY, default /tmp/nvidia-mps) holds the `control`
// FIFO.  Writes the path it looked at into `where`.
bool mpsActive(char *where, size_t len);

}  // namespace chorus
