// Dissemination barrier: ceil(log2 n) rounds of empty messages; after round
// j every rank has heard, directly or not, from 2^(j+1) ranks.
#pragma once

#include "coll/patterns.h"

namespace chorus {

template <typename Prims>
CHORUS_HOST_DEVICE void barrierDissemination(int rank, int nranks, Prims &prims) {
  for (int span = 1; span < nranks && prims.ok(); span <<= 1) {
    prims.connect1(-1, mod(rank + span, nranks));
    prims.send(nullptr, 0);
    prims.connect1(mod(rank - span, nranks), -1);
    prims.recv(nullptr, 0);
  }
}

}  // namespace chorus
