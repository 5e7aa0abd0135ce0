// chorus_sim's node description from a file (issue 31): an hwloc XML, read
// by the library's own topology code (topo/topology.h, as CHORUS_TOPO_FILE
// is), or the JSON `chorus_info --topo --json` writes.  The file gives the
// node's shape and bandwidths as Chorus sees them: ranks (one per GPU, or
// per core without GPUs), the slowest link between ring neighbours (the
// library's intraNodeLinkGBs), the NICs and their speed (nicGBs); the
// preset named with it gives what a topology does not hold (latencies,
// per-message costs, fold and copy rates, FIFO depth).
#pragma once

#include <string>

#include "sim/sim_model.h"

namespace chorus {
namespace sim {

// `base` with the node of `path` (.xml: hwloc; anything else: chorus_info's
// JSON).  False, with why in `why`, when the file cannot be read or says
// nothing usable.
bool machineFromTopology(const std::string &path, const Machine &base, Machine *out, std::string *why);

}  // namespace sim
}  // namespace chorus
