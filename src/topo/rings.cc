#include "topo/rings.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <tuple>

#include "coll/patterns.h"
#include "core/log.h"

namespace chorus {

int Layout::nodeCount() const {
  int count = 0;
  for (const RankPlace &p : ranks) count = std::max(count, p.node + 1);
  return count;
}

Layout makeUniformLayout(const NodeTopology &topo, int nnodes, int ranksPerNode) {
  Layout layout;
  for (int node = 0; node < nnodes; ++node) {
    std::vector<size_t> nextCore(topo.numa.size(), 0);
    for (int local = 0; local < ranksPerNode; ++local) {
      RankPlace place;
      place.node = node;
      if (!topo.gpus.empty()) {
        place.gpu = local % int(topo.gpus.size());
      } else if (!topo.numa.empty()) {
        place.numa = local % int(topo.numa.size());
        const auto &cores = topo.numa[size_t(place.numa)].cores;
        if (!cores.empty()) place.core = cores[nextCore[size_t(place.numa)]++ % cores.size()];
      }
      layout.ranks.push_back(place);
    }
  }
  return layout;
}

double nicGBs(const Nic &nic) {
  double speed = nic.linkLayer == LinkLayer::InfiniBand ? linkbw::kInfiniBand
                 : nic.linkLayer == LinkLayer::Ethernet ? linkbw::kEthernet
                                                        : linkbw::kUnknownNic;
  return nic.pciLinkGBs > 0 ? std::min(speed, nic.pciLinkGBs) : speed;
}

namespace {

int numaOfPlace(const NodeTopology &topo, const RankPlace &p) {
  if (p.gpu >= 0) return topo.gpus[size_t(p.gpu)].numa;
  return p.numa >= 0 ? p.numa : topo.numaOfCore(p.core);
}

std::string describeRank(int rank, const RankPlace &p) {
  char text[64];
  if (p.gpu >= 0) snprintf(text, sizeof text, "rank %d (node %d GPU %d)", rank, p.node, p.gpu);
  else snprintf(text, sizeof text, "rank %d (node %d NUMA %d)", rank, p.node, p.numa);
  return text;
}

// The NIC a rank sends through, and how far it is from it.
int nicOfPlace(const NodeTopology &topo, const RankPlace &p, PathClass *path) {
  int nic = p.gpu >= 0 ? topo.nicForGpu(p.gpu) : topo.nicForNuma(numaOfPlace(topo, p), 0);
  if (nic < 0) {
    *path = PathClass::CrossNuma;
  } else if (p.gpu >= 0) {
    *path = topo.gpuNicPath(p.gpu, nic);
  } else {
    *path = numaOfPlace(topo, p) == topo.nics[size_t(nic)].numa ? PathClass::HostBridge : PathClass::CrossNuma;
  }
  return nic;
}

// The NIC a rank receives through: `preferred` (the sender's NIC index)
// when it is one of the rank's nearest, so that a channel stays on one rail
// of a rail-optimized fabric; else the rank's own.
int recvNicOfPlace(const NodeTopology &topo, const RankPlace &p, int preferred, PathClass *path) {
  const int own = nicOfPlace(topo, p, path);
  if (own < 0 || preferred < 0 || preferred >= int(topo.nics.size()) || p.gpu < 0) return own;
  const std::vector<int> nearest = topo.nearestNics(p.gpu);
  if (std::find(nearest.begin(), nearest.end(), preferred) == nearest.end()) return own;
  *path = topo.gpuNicPath(p.gpu, preferred);
  return preferred;
}

// What a rank can push into (or take from) the network.
double nicSideGBs(const NodeTopology &topo, int nic, PathClass path) {
  if (nic < 0) return linkbw::kNoNic;
  const double speed = nicGBs(topo.nics[size_t(nic)]);
  return path == PathClass::CrossNuma ? std::min(speed, linkbw::kCrossNuma) : speed;
}

struct Node {
  const NodeTopology *topo = nullptr;
  std::vector<int> ranks;  // in hardware order
};

Status checkLayout(const std::vector<const NodeTopology *> &topos, const Layout &layout, std::vector<Node> *nodes) {
  const int nnodes = layout.nodeCount();
  if (layout.ranks.empty() || topos.empty() || (topos.size() != 1 && int(topos.size()) != nnodes)) {
    CHORUS_WARN("%zu ranks on %d nodes cannot use %zu node topologies", layout.ranks.size(), nnodes, topos.size());
    return Status::InvalidArgument;
  }
  nodes->assign(size_t(nnodes), Node());
  for (int n = 0; n < nnodes; ++n) (*nodes)[size_t(n)].topo = topos[topos.size() == 1 ? 0 : size_t(n)];
  for (int r = 0; r < int(layout.ranks.size()); ++r) {
    const RankPlace &p = layout.ranks[size_t(r)];
    if (p.node < 0 || !(*nodes)[size_t(p.node)].topo ||
        (p.gpu >= 0 && p.gpu >= int((*nodes)[size_t(p.node)].topo->gpus.size()))) {
      CHORUS_WARN("rank %d: node %d GPU %d is not in the topology", r, p.node, p.gpu);
      return Status::InvalidArgument;
    }
    (*nodes)[size_t(p.node)].ranks.push_back(r);
  }
  for (int n = 0; n < nnodes; ++n) {
    Node &node = (*nodes)[size_t(n)];
    if (node.ranks.empty()) {
      CHORUS_WARN("node %d has no rank: node indexes must be 0..%d", n, nnodes - 1);
      return Status::InvalidArgument;
    }
    // GPU ranks by GPU (the topology lists GPUs in hardware order), then
    // host ranks by NUMA domain and core; ties by rank.
    auto key = [&](int r) {
      const RankPlace &p = layout.ranks[size_t(r)];
      return std::make_tuple(p.gpu < 0, p.gpu, numaOfPlace(*node.topo, p), p.core, r);
    };
    std::sort(node.ranks.begin(), node.ranks.end(), [&](int a, int b) { return key(a) < key(b); });
  }
  return Status::Ok;
}

// Where channel c leaves a node: an index into its hardware order.  The
// ring inside the node is the hardware order's cycle cut at the exit, so
// cutting a slow link (between switches or sockets) keeps the fast ones;
// among equal cuts, exits nearest their NIC come first, and one per
// distinct NIC before any NIC is used twice.  The scan starts from the
// last rank, so that where all else is equal channel 0 keeps the hardware
// order as it is.
std::vector<int> exitOrder(const Node &node, const Layout &layout) {
  const int m = int(node.ranks.size());
  struct Exit {
    int position, round;
    PathClass path;
    double cutGBs;
  };
  std::vector<Exit> exits;
  std::vector<int> timesUsed(node.topo->nics.size() + 1, 0);
  for (int scan = 0; scan < m; ++scan) {
    const int position = m - 1 - scan;
    const RankPlace &here = layout.ranks[size_t(node.ranks[size_t(position)])];
    const RankPlace &next = layout.ranks[size_t(node.ranks[size_t((position + 1) % m)])];
    PathClass path;
    const int nic = nicOfPlace(*node.topo, here, &path);
    std::string kind;
    const double cut = m > 1 ? intraNodeLinkGBs(*node.topo, here, next, &kind) : 0;
    exits.push_back({position, timesUsed[size_t(nic + 1)]++, path, cut});
  }
  std::stable_sort(exits.begin(), exits.end(), [](const Exit &a, const Exit &b) {
    if (a.cutGBs != b.cutGBs) return a.cutGBs < b.cutGBs;
    return a.path != b.path ? a.path < b.path : a.round < b.round;
  });
  std::vector<int> positions;
  for (const Exit &e : exits) positions.push_back(e.position);
  return positions;
}

// On an NVSwitch node the order of the GPUs does not matter, so a ring can
// also enter the node at a GPU that shares the exit's NIC: traffic then
// arrives and leaves through the same NIC, one rail per channel.  -1 keeps
// the hardware order (no NVSwitch, host ranks, or no such GPU).
int entryPosition(const Node &node, const Layout &layout, int exit) {
  const int m = int(node.ranks.size());
  const RankPlace &out = layout.ranks[size_t(node.ranks[size_t(exit)])];
  if (!node.topo->nvswitch || m < 3 || out.gpu < 0) return -1;
  const int nic = node.topo->nicForGpu(out.gpu);
  if (nic < 0) return -1;
  for (int i = 1; i < m; ++i) {
    const int position = (exit + i) % m;
    const RankPlace &p = layout.ranks[size_t(node.ranks[size_t(position)])];
    if (p.gpu < 0) return -1;
    const std::vector<int> nearest = node.topo->nearestNics(p.gpu);
    if (p.gpu != out.gpu && std::find(nearest.begin(), nearest.end(), nic) != nearest.end()) return position;
  }
  return -1;
}

struct Slowest {
  double gbs = 0;
  std::string what;
  void offer(double g, const std::string &w) {
    if (what.empty() || g < gbs) {
      gbs = g;
      what = w;
    }
  }
};

}  // namespace

double intraNodeLinkGBs(const NodeTopology &topo, const RankPlace &a, const RankPlace &b, std::string *kind) {
  const int numaA = numaOfPlace(topo, a), numaB = numaOfPlace(topo, b);
  if (a.gpu >= 0 && b.gpu >= 0) {
    if (a.gpu == b.gpu) return *kind = "same GPU", linkbw::kSameDevice;
    const double nvlink = topo.gpus[size_t(a.gpu)].nvlinkGBs[size_t(b.gpu)];
    if (nvlink > 0) return *kind = "NVLink", nvlink;
    const PathClass path = topo.gpuGpuPath(a.gpu, b.gpu);
    *kind = std::string("PCIe ") + pathClassName(path);
    return path == PathClass::CrossNuma ? linkbw::kCrossNuma : linkbw::kPcie;
  }
  const bool sameNuma = numaA == numaB;
  if (a.gpu < 0 && b.gpu < 0) {
    if (sameNuma) return *kind = "shared memory", linkbw::kHostMemory;
    return *kind = "shared memory across NUMA", linkbw::kCrossNuma;
  }
  if (sameNuma) return *kind = "PCIe to host", linkbw::kPcie;
  return *kind = "PCIe to host across NUMA", linkbw::kCrossNuma;
}

Status buildRings(const std::vector<const NodeTopology *> &topos, const Layout &layout, int nchannels,
                  std::vector<RingPlan> *rings) {
  std::vector<Node> nodes;
  CHORUS_CHECK(checkLayout(topos, layout, &nodes));
  std::vector<std::vector<int>> exits;
  for (const Node &node : nodes) exits.push_back(exitOrder(node, layout));
  const int nnodes = int(nodes.size());
  rings->assign(size_t(std::max(nchannels, 1)), RingPlan());
  for (int c = 0; c < int(rings->size()); ++c) {
    RingPlan &ring = (*rings)[size_t(c)];
    Slowest slowest;
    std::vector<std::vector<int>> nodeOrder(static_cast<size_t>(nnodes));
    for (int n = 0; n < nnodes; ++n) {
      const Node &node = nodes[size_t(n)];
      const int m = int(node.ranks.size());
      const int exit = exits[size_t(n)][size_t(c % m)];
      const int entry = nnodes > 1 ? entryPosition(node, layout, exit) : -1;
      if (entry >= 0) nodeOrder[size_t(n)].push_back(node.ranks[size_t(entry)]);
      for (int i = 0; i < m; ++i) {
        const int position = (exit + 1 + i) % m;
        if (position != entry) nodeOrder[size_t(n)].push_back(node.ranks[size_t(position)]);
      }
      // The links inside the node; on one node the ring also closes there.
      const int links = nnodes == 1 ? (m > 1 ? m : 0) : m - 1;
      for (int i = 0; i < links; ++i) {
        const int from = nodeOrder[size_t(n)][size_t(i)], to = nodeOrder[size_t(n)][size_t((i + 1) % m)];
        std::string kind;
        const double gbs =
            intraNodeLinkGBs(*node.topo, layout.ranks[size_t(from)], layout.ranks[size_t(to)], &kind);
        slowest.offer(gbs, kind + " from " + describeRank(from, layout.ranks[size_t(from)]) + " to " +
                               describeRank(to, layout.ranks[size_t(to)]));
      }
      ring.order.insert(ring.order.end(), nodeOrder[size_t(n)].begin(), nodeOrder[size_t(n)].end());
    }
    for (int n = 0; nnodes > 1 && n < nnodes; ++n) {
      const int next = (n + 1) % nnodes;
      NodeCrossing x;
      x.fromNode = n;
      x.toNode = next;
      x.sendRank = nodeOrder[size_t(n)].back();
      x.recvRank = nodeOrder[size_t(next)].front();
      const NodeTopology &from = *nodes[size_t(n)].topo, &to = *nodes[size_t(next)].topo;
      PathClass sendPath, recvPath;
      x.sendNic = nicOfPlace(from, layout.ranks[size_t(x.sendRank)], &sendPath);
      x.recvNic = recvNicOfPlace(to, layout.ranks[size_t(x.recvRank)], x.sendNic, &recvPath);
      x.bandwidthGBs = std::min(nicSideGBs(from, x.sendNic, sendPath),
                                nicSideGBs(to, x.recvNic, recvPath));
      const std::string nicName = x.sendNic >= 0 ? from.nics[size_t(x.sendNic)].name : "no NIC";
      slowest.offer(x.bandwidthGBs, "network from node " + std::to_string(n) + " through " + nicName);
      ring.crossings.push_back(x);
    }
    ring.bandwidthGBs = slowest.what.empty() ? 0 : slowest.gbs;
    ring.slowestLink = slowest.what;
  }
  CHORUS_INFO(kSubsysTopo, "%zu rings over %zu ranks on %d nodes; ring 0 predicts %.1f GB/s (slowest: %s)",
              rings->size(), layout.ranks.size(), nnodes, rings->front().bandwidthGBs,
              rings->front().slowestLink.c_str());
  return Status::Ok;
}

// Double binary tree: the node tree of the algorithms (patterns.h), so that
// what chorus_info shows is what the collectives run.
int treeParent(int tree, int node, int nnodes) { return nodeTreeParent(tree, node, 0, nnodes); }

std::vector<int> treeChildren(int tree, int node, int nnodes) {
  int children[2];
  const int n = nodeTreeChildren(tree, node, 0, nnodes, children);
  return std::vector<int>(children, children + n);
}

Status buildTrees(const std::vector<const NodeTopology *> &topos, const Layout &layout, TreePlan *trees) {
  std::vector<Node> nodes;
  CHORUS_CHECK(checkLayout(topos, layout, &nodes));
  const int nnodes = int(nodes.size());
  for (int t = 0; t < 2; ++t) {
    std::vector<TreeLinks> &links = trees->links[t];
    links.assign(layout.ranks.size(), TreeLinks());
    trees->nodeHead[t].assign(size_t(nnodes), -1);
    trees->nodeNic[t].assign(size_t(nnodes), -1);
    for (int n = 0; n < nnodes; ++n) {
      std::vector<int> chain = nodes[size_t(n)].ranks;
      if (t == 1) std::reverse(chain.begin(), chain.end());
      for (size_t i = 0; i < chain.size(); ++i) {
        if (i > 0) links[size_t(chain[i])].parent = chain[i - 1];
        if (i + 1 < chain.size()) links[size_t(chain[i])].children.push_back(chain[i + 1]);
      }
      trees->nodeHead[t][size_t(n)] = chain.front();
      PathClass path;
      trees->nodeNic[t][size_t(n)] = nicOfPlace(*nodes[size_t(n)].topo, layout.ranks[size_t(chain.front())], &path);
    }
    for (int n = 0; n < nnodes; ++n) {
      const int head = trees->nodeHead[t][size_t(n)];
      const int parent = treeParent(t, n, nnodes);
      if (parent < 0) trees->rootRank[t] = head;
      else links[size_t(head)].parent = trees->nodeHead[t][size_t(parent)];
      for (int child : treeChildren(t, n, nnodes)) links[size_t(head)].children.push_back(trees->nodeHead[t][size_t(child)]);
    }
  }
  return Status::Ok;
}

}  // namespace chorus
