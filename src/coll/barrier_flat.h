// Flat barrier: every rank tells rank 0 it arrived, and rank 0, once all
// have, releases every rank: two hand-offs in a row, whatever the size.
// Where ranks share cores each hand-off waits for the receiver to be
// scheduled, and the pairwise rounds of barrierDissemination need log2(n)
// of them in a row, each between two given ranks; here rank 0 collects the
// arrivals in whatever order the scheduler runs the others.  4 ranks on 2
// cores, per call after a barrier: 3.2-3.3 us against pairwise 4.5-4.7
// (Open MPI 3.1-3.5); 8 ranks back to back: 6.5-7.5 against 10-12.
#pragma once

#include "coll/allreduce_direct.h"
#include "coll/patterns.h"

namespace chorus {

template <typename Prims>
CHORUS_HOST_DEVICE void barrierFlat(int rank, int nranks, Prims &prims) {
  const int root = 0;
  if (rank == root) {
    int peers[kMaxDirectRanks];
    const int npeers = directPeers(rank, nranks, peers);
    prims.connect(peers, npeers, nullptr, 0);
    prims.recv(nullptr, 0);
    prims.connect(nullptr, 0, peers, npeers);
    prims.send(nullptr, 0);
    return;
  }
  prims.connect1(-1, root);
  prims.send(nullptr, 0);
  prims.connect1(root, -1);
  prims.recv(nullptr, 0);
}

}  // namespace chorus
