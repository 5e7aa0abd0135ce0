// Rings and trees from the nodes' hardware: pure functions of the node
// topologies and of where each rank sits, so that unit tests cover them on
// recorded topologies without MPI, GPUs or NICs.
//
// Rings visit the nodes in index order, the ranks of a node contiguously,
// so each ring crosses every node boundary once; inside a node the ranks
// follow the hardware (GPUs of one PCIe switch next to each other, then
// those of one NUMA domain; host ranks by NUMA domain, then core), and each
// channel leaves the node from a different rank, the one nearest a
// different NIC where the node has several.  The trees are a double binary
// tree over the nodes with a chain through the ranks of each node.
#pragma once

#include <string>
#include <vector>

#include "core/common.h"
#include "topo/topology.h"

namespace chorus {

// Bandwidths (GB/s, one direction) the predicted ring bandwidth is made of,
// where the topology itself gives no figure.  Coarse on purpose: they rank
// rings and explain them; they are not measurements.
namespace linkbw {
constexpr double kPcie = 24.0;          // GPU to GPU over PCIe gen4 x16 (31.5 raw, ~24 seen by copies)
constexpr double kCrossNuma = 12.0;     // PCIe peer or memory traffic across the inter-socket link
constexpr double kHostMemory = 16.0;    // host ranks of one NUMA domain, copying through shared memory
constexpr double kSameDevice = 1000.0;  // two ranks on one GPU: its own memory
constexpr double kInfiniBand = 25.0;    // NIC whose speed hwloc does not say: HDR InfiniBand, 200 Gb/s
constexpr double kEthernet = 12.5;      // the same for Ethernet (RoCE or TCP): 100 Gb/s
constexpr double kUnknownNic = 1.25;    // link layer unknown: 10 Gb/s
constexpr double kNoNic = 1.25;         // a node without any NIC: whatever TCP finds, 10 Gb/s
}  // namespace linkbw

// Where one rank runs.
struct RankPlace {
  int node = 0;   // node index, 0..nnodes-1
  int gpu = -1;   // index into its node's NodeTopology::gpus; -1: a host-memory rank
  int numa = -1;  // host ranks: NUMA domain of the CPU binding (-1: unknown)
  int core = -1;  // host ranks: first core of the CPU binding (-1: unknown)
};

struct Layout {
  std::vector<RankPlace> ranks;  // by rank
  int nodeCount() const;
};

// `nnodes` nodes of `ranksPerNode` ranks, node-major (rank r on node
// r / ranksPerNode).  With GPUs, local rank l runs on GPU l % gpus; without,
// local ranks are dealt over the NUMA domains, each on its domain's next core.
Layout makeUniformLayout(const NodeTopology &topo, int nnodes, int ranksPerNode);

// One crossing of a ring from a node to the next.
struct NodeCrossing {
  int fromNode = -1, toNode = -1;
  int sendRank = -1, recvRank = -1;  // the last rank of fromNode, the first of toNode
  int sendNic = -1, recvNic = -1;    // NIC indexes in their nodes' topologies; -1: the node has none
  double bandwidthGBs = 0;
};

struct RingPlan {
  std::vector<int> order;               // every rank once, the ranks of a node contiguous
  std::vector<NodeCrossing> crossings;  // one per node, in ring order; none on one node
  double bandwidthGBs = 0;              // predicted: its slowest link (0 for a single rank)
  std::string slowestLink;              // which link that is, for people
};

// `nodes` holds one topology per node, or a single one that every node shares.
// InvalidArgument (with a warning) when the layout does not fit them.
Status buildRings(const std::vector<const NodeTopology *> &nodes, const Layout &layout, int nchannels,
                  std::vector<RingPlan> *rings);

// The bandwidth of the link from rank a to rank b of one node, and its kind.
double intraNodeLinkGBs(const NodeTopology &topo, const RankPlace &a, const RankPlace &b, std::string *kind);
// What a NIC carries at most: its link layer's default, capped by its PCIe link.
double nicGBs(const Nic &nic);

// The double binary tree over node indices: nodeTreeParent and
// nodeTreeChildren of patterns.h (tree 0 or 1), which the collectives run.
int treeParent(int tree, int node, int nnodes);  // -1 for the root
std::vector<int> treeChildren(int tree, int node, int nnodes);

struct TreeLinks {
  int parent = -1;            // rank; -1 for the root
  std::vector<int> children;  // ranks
};

struct TreePlan {
  // Per tree, per rank.  Inside a node the ranks form a chain in hardware
  // order (reversed in tree 1, so the two trees leave a node through
  // different ranks and NICs); the chain's head links to the heads of the
  // parent and child nodes.
  std::vector<TreeLinks> links[2];
  std::vector<int> nodeHead[2];  // per node: the rank that talks to other nodes
  std::vector<int> nodeNic[2];   // per node: the NIC that head uses (-1: none)
  int rootRank[2] = {-1, -1};
};

Status buildTrees(const std::vector<const NodeTopology *> &nodes, const Layout &layout, TreePlan *trees);

}  // namespace chorus
