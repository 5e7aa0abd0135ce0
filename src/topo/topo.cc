#include "topo/topo.h"

#include "topo/topology.h"

namespace chorus {

// The whole machine's cores: mpirun may bind each rank to one core, yet
// ranks of a node still share all of them.
int topoUsableCores() { return topoMachineCores(); }

}  // namespace chorus
