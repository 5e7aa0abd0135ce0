// Node topology through hwloc.  For now the host engine needs one fact: how
// many cores this process may run on, to know whether the node is
// oversubscribed (then waiting ranks must yield at once).
#pragma once

namespace chorus {

// Cores (not hardware threads) in this process's CPU binding; at least 1.
int topoUsableCores();

}  // namespace chorus
