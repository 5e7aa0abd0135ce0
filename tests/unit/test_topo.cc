// Topology from recorded hwloc XML files (tests/topo, written by
// make_fixtures.py), and the rings and trees built from it: machines we do
// not have, read through the real loader.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "topo/rings.h"
#include "topo/topology.h"

using namespace chorus;

namespace chorus {
std::ostream &operator<<(std::ostream &os, LinkLayer l) { return os << linkLayerName(l); }
std::ostream &operator<<(std::ostream &os, PathClass c) { return os << pathClassName(c); }
std::ostream &operator<<(std::ostream &os, Status s) { return os << statusName(s); }
}  // namespace chorus

#ifndef CHORUS_TOPO_FIXTURES
#error "CHORUS_TOPO_FIXTURES must name the tests/topo folder (tests/unit/Makefile.am passes it)"
#endif

namespace {

NodeTopology loadFixture(const char *name) {
  NodeTopology topo;
  const std::string path = std::string(CHORUS_TOPO_FIXTURES) + "/" + name;
  BOOST_REQUIRE_MESSAGE(topoLoadXml(path.c_str(), &topo) == Status::Ok, "cannot load " << path);
  return topo;
}

const NodeTopology &nvswitchNode() {
  static const NodeTopology topo = loadFixture("nvswitch-8gpu-8nic.xml");
  return topo;
}
const NodeTopology &pcieNode() {
  static const NodeTopology topo = loadFixture("pcie-4gpu-1nic.xml");
  return topo;
}
const NodeTopology &cpuNode() {
  static const NodeTopology topo = loadFixture("cpu-2numa-1nic.xml");
  return topo;
}

std::vector<RingPlan> rings(const NodeTopology &topo, const Layout &layout, int nchannels) {
  std::vector<RingPlan> result;
  BOOST_REQUIRE(buildRings({&topo}, layout, nchannels, &result) == Status::Ok);
  BOOST_REQUIRE_EQUAL(int(result.size()), nchannels);
  return result;
}

// Every rank once; the ranks of a node contiguous, so that going round the
// ring the node changes exactly once per node (never on one node); one
// crossing per node, between the ranks the order says.
void checkRing(const RingPlan &ring, const Layout &layout) {
  const int n = int(layout.ranks.size()), nnodes = layout.nodeCount();
  BOOST_REQUIRE_EQUAL(int(ring.order.size()), n);
  std::vector<int> sorted = ring.order;
  std::sort(sorted.begin(), sorted.end());
  for (int r = 0; r < n; ++r) BOOST_TEST(sorted[size_t(r)] == r);
  int changes = 0;
  for (int p = 0; p < n; ++p) {
    const int from = ring.order[size_t(p)], to = ring.order[size_t((p + 1) % n)];
    if (layout.ranks[size_t(from)].node != layout.ranks[size_t(to)].node) {
      ++changes;
      bool listed = false;
      for (const NodeCrossing &x : ring.crossings)
        listed |= x.sendRank == from && x.recvRank == to && x.fromNode == layout.ranks[size_t(from)].node &&
                  x.toNode == layout.ranks[size_t(to)].node;
      BOOST_TEST(listed, "crossing " << from << " -> " << to << " is not listed");
    }
  }
  BOOST_TEST(changes == (nnodes > 1 ? nnodes : 0));
  BOOST_TEST(int(ring.crossings.size()) == (nnodes > 1 ? nnodes : 0));
  BOOST_TEST(ring.bandwidthGBs > 0);
}

Layout gpuLayout(int nnodes, int perNode) {
  Layout layout;
  for (int r = 0; r < nnodes * perNode; ++r) layout.ranks.push_back({r / perNode, r % perNode, -1, -1});
  return layout;
}

RankPlace hostRank(const NodeTopology &topo, int node, int core) {
  return {node, -1, topo.numaOfCore(core), core};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(topo)

BOOST_AUTO_TEST_CASE(nvswitch_node_is_read) {
  const NodeTopology &t = nvswitchNode();
  BOOST_TEST(t.cores == 8);
  BOOST_REQUIRE_EQUAL(t.numa.size(), 2u);
  BOOST_TEST(t.numa[1].cores == std::vector<int>({4, 5, 6, 7}), boost::test_tools::per_element());
  BOOST_REQUIRE_EQUAL(t.gpus.size(), 8u);
  BOOST_REQUIRE_EQUAL(t.nics.size(), 8u);
  BOOST_TEST(t.nvswitch);
  const char *gpuBus[] = {"0000:12:00.0", "0000:13:00.0", "0000:42:00.0", "0000:43:00.0",
                          "0000:92:00.0", "0000:93:00.0", "0000:c2:00.0", "0000:c3:00.0"};
  const char *nicBus[] = {"0000:14:00.0", "0000:15:00.0", "0000:44:00.0", "0000:45:00.0",
                          "0000:94:00.0", "0000:95:00.0", "0000:c4:00.0", "0000:c5:00.0"};
  for (int i = 0; i < 8; ++i) {
    const Gpu &g = t.gpus[size_t(i)];
    const Nic &n = t.nics[size_t(i)];
    BOOST_TEST(g.busId == gpuBus[i]);
    BOOST_TEST(g.numa == i / 4);
    BOOST_TEST(g.names == "cuda" + std::to_string(i) + " nvml" + std::to_string(i));
    for (int j = 0; j < 8; ++j) BOOST_TEST(g.nvlinkGBs[size_t(j)] == (i == j ? 0.0 : 450.0));
    BOOST_TEST(n.name == "mlx5_" + std::to_string(i));
    BOOST_TEST(n.netdev == "ib" + std::to_string(i));
    BOOST_TEST(n.busId == nicBus[i]);
    BOOST_TEST(n.numa == i / 4);
    BOOST_TEST(n.linkLayer == LinkLayer::InfiniBand);
    // Two GPUs and two NICs per switch: each NIC's nearest GPUs are its switch's.
    BOOST_TEST(n.nearestGpus == std::vector<int>({i / 2 * 2, i / 2 * 2 + 1}), boost::test_tools::per_element());
    BOOST_TEST(t.nicForGpu(i) == i);
  }
  BOOST_TEST(t.gpuNicPath(0, 1) == PathClass::SameSwitch);
  BOOST_TEST(t.gpuNicPath(0, 2) == PathClass::HostBridge);
  BOOST_TEST(t.gpuNicPath(0, 4) == PathClass::CrossNuma);
  BOOST_TEST(t.nearestNics(5) == std::vector<int>({4, 5}), boost::test_tools::per_element());
  BOOST_TEST(t.slowestGpuPeerGBs() == 450.0);  // the kernels' model's GPU link (coll/tuner_kernels.cc)
}

BOOST_AUTO_TEST_CASE(pcie_node_is_read) {
  const NodeTopology &t = pcieNode();
  BOOST_TEST(t.cores == 4);
  BOOST_REQUIRE_EQUAL(t.gpus.size(), 4u);
  BOOST_REQUIRE_EQUAL(t.nics.size(), 1u);
  BOOST_TEST(!t.nvswitch);
  const char *gpuBus[] = {"0000:23:00.0", "0000:24:00.0", "0000:a3:00.0", "0000:a4:00.0"};
  for (int i = 0; i < 4; ++i) {
    BOOST_TEST(t.gpus[size_t(i)].busId == gpuBus[i]);
    BOOST_TEST(t.gpus[size_t(i)].numa == i / 2);
    BOOST_TEST(t.gpus[size_t(i)].names == "cuda" + std::to_string(i));
    for (double gbs : t.gpus[size_t(i)].nvlinkGBs) BOOST_TEST(gbs == 0.0);
    BOOST_TEST(t.nicForGpu(i) == 0);  // the only NIC, however far
  }
  BOOST_TEST(t.slowestGpuPeerGBs() == 0.0);  // over PCIe: the kernels' model assumes its speed
  const Nic &nic = t.nics[0];
  BOOST_TEST(nic.name == "mlx5_0");
  BOOST_TEST(nic.netdev == "ens1f0np0");
  BOOST_TEST(nic.busId == "0000:30:00.0");
  BOOST_TEST(nic.numa == 0);
  // No Port1LinkLayer in this file: the Ethernet PCI class says it (RoCE).
  BOOST_TEST(nic.linkLayer == LinkLayer::Ethernet);
  BOOST_TEST(nic.nearestGpus == std::vector<int>({0, 1}), boost::test_tools::per_element());
  BOOST_TEST(t.gpuGpuPath(0, 1) == PathClass::SameSwitch);
  BOOST_TEST(t.gpuGpuPath(1, 2) == PathClass::CrossNuma);
  BOOST_TEST(t.gpuNicPath(1, 0) == PathClass::HostBridge);
  BOOST_TEST(t.gpuNicPath(2, 0) == PathClass::CrossNuma);
}

BOOST_AUTO_TEST_CASE(cpu_node_is_read) {
  const NodeTopology &t = cpuNode();
  BOOST_TEST(t.cores == 4);
  BOOST_REQUIRE_EQUAL(t.numa.size(), 2u);
  BOOST_TEST(t.numa[0].cores == std::vector<int>({0, 1}), boost::test_tools::per_element());
  BOOST_TEST(t.gpus.empty());
  BOOST_REQUIRE_EQUAL(t.nics.size(), 1u);
  BOOST_TEST(t.nics[0].name == "eth0");
  BOOST_TEST(t.nics[0].netdev.empty());
  BOOST_TEST(t.nics[0].busId == "0000:02:00.0");
  BOOST_TEST(t.nics[0].numa == 0);
  BOOST_TEST(t.nics[0].linkLayer == LinkLayer::Ethernet);
  BOOST_TEST(t.nics[0].pciLinkGBs == 2.0);
  BOOST_TEST(t.nics[0].nearestGpus.empty());
  BOOST_TEST(t.nicForNuma(1, 0) == 0);
}

BOOST_AUTO_TEST_CASE(bad_files_are_errors) {
  NodeTopology topo;
  BOOST_TEST((topoLoadXml("/nonexistent/topology.xml", &topo) == Status::InvalidArgument));
  char path[] = "/tmp/chorus-topo-XXXXXX";
  const int fd = mkstemp(path);
  BOOST_REQUIRE(fd >= 0);
  const char garbage[] = "<topology><object type=\"Nonsense\">";
  BOOST_REQUIRE(write(fd, garbage, sizeof garbage - 1) == ssize_t(sizeof garbage - 1));
  close(fd);
  BOOST_TEST((topoLoadXml(path, &topo) == Status::InvalidArgument));
  unlink(path);
}

BOOST_AUTO_TEST_CASE(nic_bandwidth_comes_from_the_table) {
  Nic nic;
  nic.linkLayer = LinkLayer::InfiniBand;
  BOOST_TEST(nicGBs(nic) == linkbw::kInfiniBand);
  nic.pciLinkGBs = linkbw::kInfiniBand / 2;  // a narrow PCIe link caps it
  BOOST_TEST(nicGBs(nic) == linkbw::kInfiniBand / 2);
  nic.linkLayer = LinkLayer::Ethernet;
  nic.pciLinkGBs = 0;
  BOOST_TEST(nicGBs(nic) == linkbw::kEthernet);
  nic.linkLayer = LinkLayer::Unknown;
  BOOST_TEST(nicGBs(nic) == linkbw::kUnknownNic);
}

BOOST_AUTO_TEST_CASE(one_nvswitch_node_of_8_gpus) {
  const NodeTopology &t = nvswitchNode();
  const Layout layout = gpuLayout(1, 8);
  const auto plan = rings(t, layout, 4);
  std::set<std::vector<int>> orders;
  for (const RingPlan &ring : plan) {
    checkRing(ring, layout);
    BOOST_TEST(ring.bandwidthGBs == t.gpus[0].nvlinkGBs[1]);
    orders.insert(ring.order);
  }
  BOOST_TEST(orders.size() == plan.size(), "channels must differ");
  BOOST_TEST(plan[0].order == std::vector<int>({0, 1, 2, 3, 4, 5, 6, 7}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(two_nvswitch_nodes_use_distinct_nics) {
  const NodeTopology &t = nvswitchNode();
  const Layout layout = gpuLayout(2, 8);
  const auto plan = rings(t, layout, 8);
  std::set<int> sendNics[2];
  for (const RingPlan &ring : plan) {
    checkRing(ring, layout);
    for (const NodeCrossing &x : ring.crossings) {
      // The sending GPU's own NIC, under its switch; the ring enters the
      // next node at a GPU under the switch of the same NIC (one rail).
      const int sendGpu = layout.ranks[size_t(x.sendRank)].gpu, recvGpu = layout.ranks[size_t(x.recvRank)].gpu;
      BOOST_TEST(x.sendNic == t.nicForGpu(sendGpu));
      BOOST_TEST(t.gpuNicPath(sendGpu, x.sendNic) == PathClass::SameSwitch);
      BOOST_TEST(x.recvNic == x.sendNic);
      BOOST_TEST(t.gpuNicPath(recvGpu, x.recvNic) == PathClass::SameSwitch);
      sendNics[x.fromNode].insert(x.sendNic);
    }
    const double expected = std::min({t.gpus[0].nvlinkGBs[1], linkbw::kInfiniBand, t.nics[0].pciLinkGBs});
    BOOST_TEST(ring.bandwidthGBs == expected);
  }
  BOOST_TEST(sendNics[0].size() == 8u);
  BOOST_TEST(sendNics[1].size() == 8u);
}

BOOST_AUTO_TEST_CASE(pcie_nodes_cross_numa_once) {
  const NodeTopology &t = pcieNode();
  const Layout one = gpuLayout(1, 4);
  for (const RingPlan &ring : rings(t, one, 2)) {
    checkRing(ring, one);
    // GPUs of one switch stay adjacent: the ring crosses the sockets twice.
    BOOST_TEST(ring.bandwidthGBs == linkbw::kCrossNuma);
    BOOST_TEST(ring.slowestLink.find("SYS") != std::string::npos);
  }
  const Layout three = gpuLayout(3, 4);
  const auto plan = rings(t, three, 2);
  for (const RingPlan &ring : plan) {
    checkRing(ring, three);
    for (const NodeCrossing &x : ring.crossings) BOOST_TEST(x.sendNic == 0);
    // Inside each node the path crosses the sockets once: the cycle's
    // other socket crossing is the link cut to leave the node.
    std::vector<int> socketCrossings(3, 0);
    for (size_t i = 0; i + 1 < ring.order.size(); ++i) {
      const RankPlace &a = three.ranks[size_t(ring.order[i])], &b = three.ranks[size_t(ring.order[i + 1])];
      if (a.node == b.node && t.gpus[size_t(a.gpu)].numa != t.gpus[size_t(b.gpu)].numa) ++socketCrossings[size_t(a.node)];
    }
    for (int crossings : socketCrossings) BOOST_TEST(crossings == 1);
    BOOST_TEST(ring.bandwidthGBs == std::min({linkbw::kCrossNuma, linkbw::kEthernet, t.nics[0].pciLinkGBs}));
  }
  // Channel 0 leaves through a GPU on the NIC's socket; channel 1 elsewhere.
  for (const NodeCrossing &x : plan[0].crossings)
    BOOST_TEST(t.gpus[size_t(three.ranks[size_t(x.sendRank)].gpu)].numa == t.nics[0].numa);
  BOOST_TEST(plan[0].crossings[0].sendRank != plan[1].crossings[0].sendRank);
}

BOOST_AUTO_TEST_CASE(uneven_host_nodes) {
  const NodeTopology &t = cpuNode();
  // 2 + 1 + 3 ranks, placed round-robin-ish over the nodes.
  Layout layout;
  layout.ranks = {hostRank(t, 0, 0), hostRank(t, 2, 3), hostRank(t, 2, 0),
                  hostRank(t, 1, 1), hostRank(t, 0, 2), hostRank(t, 2, 1)};
  const auto plan = rings(t, layout, 3);
  for (const RingPlan &ring : plan) {
    checkRing(ring, layout);
    // Inside node 2 the ranks of each NUMA domain stay together: going
    // round the node's ranks, the domain changes at most twice.
    std::vector<int> domains;
    for (int r : ring.order)
      if (layout.ranks[size_t(r)].node == 2) domains.push_back(layout.ranks[size_t(r)].numa);
    int changes = 0;
    for (size_t i = 0; i < domains.size(); ++i) changes += domains[i] != domains[(i + 1) % domains.size()];
    BOOST_TEST(changes <= 2);
    // The slowest link is the 1 GbE-class NIC capped by its PCIe link.
    BOOST_TEST(ring.bandwidthGBs == std::min({linkbw::kEthernet, t.nics[0].pciLinkGBs, linkbw::kCrossNuma}));
  }
}

BOOST_AUTO_TEST_CASE(layouts_that_do_not_fit_are_refused) {
  const NodeTopology &t = pcieNode();
  std::vector<RingPlan> plan;
  TreePlan trees;
  Layout badGpu = gpuLayout(1, 4);
  badGpu.ranks[3].gpu = 4;  // the node has GPUs 0..3
  BOOST_TEST((buildRings({&t}, badGpu, 1, &plan) == Status::InvalidArgument));
  Layout missingNode = gpuLayout(1, 2);
  missingNode.ranks[1].node = 2;  // node 1 has no rank
  BOOST_TEST((buildTrees({&t}, missingNode, &trees) == Status::InvalidArgument));
  BOOST_TEST((buildRings({&t, &t}, gpuLayout(3, 1), 1, &plan) == Status::InvalidArgument));
}

BOOST_AUTO_TEST_CASE(double_binary_tree_over_nodes) {
  for (int n = 1; n <= 70; ++n) {
    std::vector<int> interiorIn(size_t(n), 0);
    int roots[2] = {-1, -1};
    for (int tree = 0; tree < 2; ++tree) {
      std::vector<int> seen(size_t(n), 0);
      for (int node = 0; node < n; ++node) {
        const int parent = treeParent(tree, node, n);
        if (parent < 0) {
          BOOST_TEST(roots[tree] == -1, "two roots, n=" << n);
          roots[tree] = node;
        } else {
          const auto siblings = treeChildren(tree, parent, n);
          BOOST_TEST(std::count(siblings.begin(), siblings.end(), node) == 1, "n=" << n << " node=" << node);
        }
        const auto children = treeChildren(tree, node, n);
        BOOST_TEST(children.size() <= 2u);
        for (int c : children) BOOST_TEST(treeParent(tree, c, n) == node);
        if (!children.empty()) ++interiorIn[size_t(node)];
      }
      // Every node reached once from the root.
      std::vector<int> todo = {roots[tree]};
      while (!todo.empty()) {
        const int node = todo.back();
        todo.pop_back();
        ++seen[size_t(node)];
        for (int c : treeChildren(tree, node, n)) todo.push_back(c);
      }
      for (int node = 0; node < n; ++node) BOOST_TEST(seen[size_t(node)] == 1, "n=" << n << " node=" << node);
    }
    for (int node = 0; node < n; ++node) BOOST_TEST(interiorIn[size_t(node)] <= 1, "n=" << n << " node=" << node);
    if (n > 1) BOOST_TEST(roots[0] != roots[1]);
  }
}

BOOST_AUTO_TEST_CASE(trees_over_ranks) {
  struct Case {
    const NodeTopology *topo;
    Layout layout;
  };
  const NodeTopology &cpu = cpuNode();
  Layout uneven;
  uneven.ranks = {hostRank(cpu, 0, 0), hostRank(cpu, 2, 3), hostRank(cpu, 2, 0),
                  hostRank(cpu, 1, 1), hostRank(cpu, 0, 2), hostRank(cpu, 2, 1)};
  const Case cases[] = {{&pcieNode(), gpuLayout(3, 4)}, {&nvswitchNode(), gpuLayout(2, 8)}, {&cpu, uneven},
                        {&nvswitchNode(), gpuLayout(5, 1)}};
  for (const Case &c : cases) {
    TreePlan trees;
    BOOST_REQUIRE(buildTrees({c.topo}, c.layout, &trees) == Status::Ok);
    const int n = int(c.layout.ranks.size()), nnodes = c.layout.nodeCount();
    for (int t = 0; t < 2; ++t) {
      std::vector<int> seen(size_t(n), 0);
      std::vector<int> todo = {trees.rootRank[t]};
      BOOST_TEST(trees.links[t][size_t(trees.rootRank[t])].parent == -1);
      while (!todo.empty()) {
        const int r = todo.back();
        todo.pop_back();
        ++seen[size_t(r)];
        for (int child : trees.links[t][size_t(r)].children) {
          BOOST_TEST(trees.links[t][size_t(child)].parent == r);
          todo.push_back(child);
        }
      }
      for (int r = 0; r < n; ++r) BOOST_TEST(seen[size_t(r)] == 1, "tree " << t << " rank " << r);
      // Only heads link nodes: every other rank's neighbours share its node.
      for (int r = 0; r < n; ++r) {
        const int node = c.layout.ranks[size_t(r)].node;
        if (trees.nodeHead[t][size_t(node)] == r) continue;
        BOOST_TEST(c.layout.ranks[size_t(trees.links[t][size_t(r)].parent)].node == node);
      }
    }
    for (int node = 0; node < nnodes; ++node) {
      int size = 0;
      for (const RankPlace &p : c.layout.ranks) size += p.node == node;
      if (size > 1) BOOST_TEST(trees.nodeHead[0][size_t(node)] != trees.nodeHead[1][size_t(node)]);
    }
  }
  // On the 8-NIC node, the two trees leave through different NICs.
  TreePlan trees;
  BOOST_REQUIRE(buildTrees({&nvswitchNode()}, gpuLayout(2, 8), &trees) == Status::Ok);
  BOOST_TEST(trees.nodeNic[0][0] != trees.nodeNic[1][0]);
}

BOOST_AUTO_TEST_CASE(uniform_layouts) {
  const Layout host = makeUniformLayout(cpuNode(), 1, 4);
  BOOST_REQUIRE_EQUAL(host.ranks.size(), 4u);
  const int numa[] = {0, 1, 0, 1}, core[] = {0, 2, 1, 3};
  for (int r = 0; r < 4; ++r) {
    BOOST_TEST(host.ranks[size_t(r)].gpu == -1);
    BOOST_TEST(host.ranks[size_t(r)].numa == numa[r]);
    BOOST_TEST(host.ranks[size_t(r)].core == core[r]);
  }
  const Layout gpus = makeUniformLayout(nvswitchNode(), 2, 8);
  BOOST_REQUIRE_EQUAL(gpus.ranks.size(), 16u);
  BOOST_TEST(gpus.ranks[11].node == 1);
  BOOST_TEST(gpus.ranks[11].gpu == 3);
}

BOOST_AUTO_TEST_CASE(rank_keys_sort_in_hardware_order) {
  BOOST_TEST(topoMakeHostKey(0, 7) < topoMakeHostKey(1, 0));
  BOOST_TEST(topoMakeHostKey(1, 3) < topoMakeHostKey(1, 4));
  BOOST_TEST(topoMakeHostKey(63, 1000) < topoMakeGpuKey(0));
  BOOST_TEST(topoKeyNuma(topoMakeHostKey(1, 5)) == 1);
  BOOST_TEST(topoKeyCore(topoMakeHostKey(1, 5)) == 5);
  BOOST_TEST(topoKeyGpu(topoMakeHostKey(1, 5)) == -1);
  BOOST_TEST(topoKeyNuma(topoMakeHostKey(-1, -1)) == -1);
  BOOST_TEST(topoKeyGpu(topoMakeGpuKey(6)) == 6);
  BOOST_TEST(topoKeyCore(topoMakeGpuKey(6)) == -1);
  // This process, bound or not, runs on some core of this machine.
  const int64_t key = topoRankKey(-1);
  BOOST_TEST(topoKeyGpu(key) == -1);
  BOOST_TEST(topoKeyCore(key) >= 0);
}

// UCX's device follows the rank: its GPU's nearest RDMA NIC, or one on its
// NUMA domain, spread over the node's rails; nothing to choose with fewer
// than two RDMA NICs.
BOOST_AUTO_TEST_CASE(ucx_device_is_the_nearest_rdma_nic) {
  const NodeTopology &t = nvswitchNode();
  std::set<std::string> used;
  for (int local = 0; local < 8; ++local) {
    const std::string dev = topoUcxNetDevice(t, topoMakeGpuKey(local), local);
    BOOST_REQUIRE(dev.size() > 2);
    const std::string name = dev.substr(0, dev.size() - 2);
    BOOST_TEST(dev.substr(dev.size() - 2) == ":1");
    bool nearest = false;
    for (int n : t.nearestNics(local)) nearest = nearest || t.nics[size_t(n)].name == name;
    BOOST_TEST(nearest, "GPU " << local << " got " << dev);
    used.insert(dev);
  }
  BOOST_TEST(used.size() == 8u);  // one rail per GPU
  for (int numa = 0; numa < 2; ++numa)
    for (int spread = 0; spread < 4; ++spread) {
      const std::string dev = topoUcxNetDevice(t, topoMakeHostKey(numa, -1), spread);
      const std::string name = dev.substr(0, dev.find(':'));
      int nic = -1;
      for (int n = 0; n < int(t.nics.size()); ++n)
        if (t.nics[size_t(n)].name == name) nic = n;
      BOOST_REQUIRE(nic >= 0);
      BOOST_TEST(t.nics[size_t(nic)].numa == numa);
    }
  BOOST_TEST(topoUcxNetDevice(pcieNode(), topoMakeGpuKey(0), 0).empty());
  BOOST_TEST(topoUcxNetDevice(cpuNode(), topoMakeHostKey(0, 0), 0).empty());
}

BOOST_AUTO_TEST_SUITE_END()
