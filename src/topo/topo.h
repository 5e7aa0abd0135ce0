// Node topology through hwloc: what the host engine asks today.  The full
// picture (NUMA domains, GPUs, NICs, PCIe tree, NVLink) is in
// topo/topology.h, and the rings and trees built from it in topo/rings.h.
#pragma once

namespace chorus {

// Cores (not hardware threads) of the whole machine, at least 1: the
// host engine compares it with the ranks on the node to know whether the
// node is oversubscribed (then waiting ranks must yield at once).
int topoUsableCores();

}  // namespace chorus
