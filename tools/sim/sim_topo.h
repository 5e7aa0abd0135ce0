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

// What the simulator takes from a node description, whatever its format.
struct NodeShape {
  int gpus = 0, cores = 0, nics = 0;
  double intraGBs = 0;  // slowest link between ring neighbours (GPUs); 0: unknown
  double nicGBs = 0;    // slowest NIC; 0: unknown
};

// The node of `path` (.xml: hwloc; anything else: chorus_info's JSON).
// False, with why in `why`, when the file cannot be read or says nothing
// usable.
bool readNodeShape(const std::string &path, NodeShape *shape, std::string *why);

// `base` with that node (named `name`): its ranks, links and NICs.
Machine machineWithNode(const Machine &base, const NodeShape &shape, const std::string &name);

}  // namespace sim
}  // namespace chorus
