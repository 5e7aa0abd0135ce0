// chorus_info --topo: what Chorus sees of the node's hardware and the rings
// and trees it would build from it, as text or JSON.
#pragma once

#include <string>

namespace chorus_info {

struct TopoRequest {
  bool json = false;
  int nodes = 1;          // nodes in the layout
  int ranksPerNode = 0;   // 0: one per GPU, or one per NUMA domain without GPUs
  int channels = 0;       // 0: one per NIC, at least 2
};

// Parse "N" or "NxM" (--layout); false when malformed.
bool parseLayout(const std::string &text, TopoRequest *request);

// Read the topology (CHORUS_TOPO_FILE, or this machine) and print it;
// returns the exit status (1 when the topology cannot be read).
int printTopo(const TopoRequest &request);

}  // namespace chorus_info
