// Dissemination barrier: ceil(log2 n) rounds of empty messages; after round
// j every rank has heard, directly or not, from 2^(j+1) ranks (pairwise
// exchanges when n is a power of two).
#pragma once

#include "coll/patterns.h"

namespace chorus {

template <typename Prims>
CHORUS_HOST_DEVICE void barrierDissemination(int rank, int nranks, Prims &prims) {
  // A power of two: the same rounds as pairwise exchanges (rank ^ span), so
  // each round's two partners can finish it together while they both run.
  // Dissemination's chain (hear from rank - span, tell rank + span) needs a
  // third rank scheduled to finish a round: 4 ranks on 2 cores, barrier per
  // call after a barrier, 5.2 us against 4.5 (Open MPI 3.0); back to back
  // both 2.8-3.2.
  if (isPowerOfTwo(nranks)) {
    for (int span = 1; span < nranks && prims.ok(); span <<= 1) {
      const int partner = rank ^ span;
      prims.connect1(partner, partner);
      prims.send(nullptr, 0);
      prims.recv(nullptr, 0);
    }
    return;
  }
  for (int span = 1; span < nranks && prims.ok(); span <<= 1) {
    prims.connect1(-1, mod(rank + span, nranks));
    prims.send(nullptr, 0);
    prims.connect1(mod(rank - span, nranks), -1);
    prims.recv(nullptr, 0);
  }
}

}  // namespace chorus
