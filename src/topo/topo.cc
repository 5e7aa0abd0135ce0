#include "topo/topo.h"

#include <hwloc.h>

#include <mutex>

namespace chorus {

int topoUsableCores() {
  static std::once_flag once;
  static int cores = 1;
  std::call_once(once, [] {
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) return;
    if (hwloc_topology_load(topo) == 0) {
      // The whole machine's cores: mpirun may bind each rank to one core,
      // yet ranks of a node still share all of them.
      int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
      if (n > 0) cores = n;
    }
    hwloc_topology_destroy(topo);
  });
  return cores;
}

}  // namespace chorus
