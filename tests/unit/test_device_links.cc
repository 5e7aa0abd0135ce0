// Which ranks on other nodes the device proxy links (cuda/device_links.h):
// the set must hold every remote peer the kernels' streaming algorithms
// exchange with, on both ends of each link, and stay small whatever the
// scale.  The rotated rings are rebuilt here the way cuda_executor.cc's
// copyNodeLayout builds them, independently of the set's arithmetic.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cuda/device_links.h"

using namespace chorus;

namespace {

// A node layout: `sizes` ranks per node; round robin places rank r on
// node r % nodes (all nodes then of one size), else node by node.
struct Tables {
  std::vector<int> order, where, nodeStart, nodeOf;
  NodeLayout layout{};
  Tables(const std::vector<int> &sizes, bool roundRobin) {
    int n = 0;
    for (int s : sizes) n += s;
    nodeOf.resize(size_t(n));
    for (int r = 0, node = 0, left = sizes[0]; r < n; ++r) {
      if (roundRobin) {
        nodeOf[size_t(r)] = r % int(sizes.size());
        continue;
      }
      while (left == 0) left = sizes[size_t(++node)];
      nodeOf[size_t(r)] = node;
      --left;
    }
    for (size_t node = 0; node < sizes.size(); ++node) {
      nodeStart.push_back(int(order.size()));
      for (int r = 0; r < n; ++r)
        if (nodeOf[size_t(r)] == int(node)) order.push_back(r);
    }
    nodeStart.push_back(n);
    where.resize(size_t(n));
    for (int p = 0; p < n; ++p) where[size_t(order[size_t(p)])] = p;
    layout = {n, int(sizes.size()), order.data(), where.data(), nodeStart.data(), nodeOf.data()};
  }
};

bool contains(const std::vector<int> &v, int x) { return std::binary_search(v.begin(), v.end(), x); }

// Every remote peer the kernels' streaming algorithms reach from `rank`.
std::vector<int> reached(const NodeLayout &l, int rank, int nchannels) {
  std::vector<int> out;
  const int n = l.nranks;
  for (int c = 0; c < nchannels; ++c) {  // channel c's ring, as copyNodeLayout rotates it
    std::vector<int> ring(static_cast<size_t>(n));
    for (int node = 0; node < l.nnodes; ++node) {
      const int first = l.nodeStart[node], size = l.nodeStart[node + 1] - first;
      for (int i = 0; i < size; ++i) ring[size_t(first + i)] = l.order[first + (i + c) % size];
    }
    const int at = int(std::find(ring.begin(), ring.end(), rank) - ring.begin());
    out.push_back(ring[size_t((at + 1) % n)]);
    out.push_back(ring[size_t((at + n - 1) % n)]);
  }
  out.push_back((rank + 1) % n);  // the hierarchy's tail, in rank order
  out.push_back((rank + n - 1) % n);
  for (int which = 0; which < 2; ++which) {
    const BinaryTree t = nodeTree(which, rank, -1, l);
    out.push_back(t.parent);
    for (int i = 0; i < t.nchildren; ++i) out.push_back(t.children[i]);
  }
  const int m = l.nodeStart[1] - l.nodeStart[0];
  bool equal = l.nnodes > 1 && m > 1;
  for (int node = 0; node < l.nnodes; ++node) equal = equal && l.nodeStart[node + 1] - l.nodeStart[node] == m;
  if (equal) {  // the rails: local rank i of the nodes before and after
    const int node = l.nodeOf[rank], i = l.where[rank] - l.nodeStart[node];
    out.push_back(l.order[l.nodeStart[(node + 1) % l.nnodes] + i]);
    out.push_back(l.order[l.nodeStart[(node + l.nnodes - 1) % l.nnodes] + i]);
  }
  std::vector<int> remote;
  for (int q : out)
    if (q >= 0 && l.nodeOf[q] != l.nodeOf[rank]) remote.push_back(q);
  return remote;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(device_links)

BOOST_AUTO_TEST_CASE(streaming_peers_cover_the_kernels_and_pair_up) {
  struct Case {
    std::vector<int> sizes;
    bool roundRobin;
    int nchannels;
  };
  const std::vector<Case> cases = {{{2, 2, 2, 2}, false, 4},  {{2, 1, 3}, false, 4}, {{4, 4}, true, 3},
                                   {std::vector<int>(16, 8), false, 2}, {std::vector<int>(16, 8), false, 16},
                                   {{3, 5, 1, 7, 2}, false, 16}, {std::vector<int>(64, 4), true, 1}};
  for (const Case &c : cases) {
    const Tables t(c.sizes, c.roundRobin);
    const NodeLayout &l = t.layout;
    size_t most = 0;
    std::vector<std::vector<int>> sets;
    for (int r = 0; r < l.nranks; ++r) sets.push_back(cudaStreamingPeers(l, r, c.nchannels));
    for (int r = 0; r < l.nranks; ++r) {
      const std::vector<int> &s = sets[size_t(r)];
      most = std::max(most, s.size());
      BOOST_TEST(std::is_sorted(s.begin(), s.end()));
      for (int q : s) {
        BOOST_TEST(l.nodeOf[q] != l.nodeOf[r], "rank " << r << " links " << q << " on its own node");
        BOOST_TEST(contains(sets[size_t(q)], r), l.nranks << " ranks: " << r << " links " << q << ", not back");
      }
      for (int q : reached(l, r, c.nchannels))
        BOOST_TEST(contains(s, q), l.nranks << " ranks, " << c.nchannels << " channels: rank " << r
                                             << " reaches " << q << " unlinked");
    }
    // A handful whatever the node count: on nodes of one size a ring
    // neighbour each way (every channel enters a node at the local rank
    // after the one it left from), rank order's 2, both trees' 6, the
    // rails' 2, overlapping; on uneven nodes the channels' rotations may
    // reach every rank of the two neighbouring nodes.
    const int largest = *std::max_element(c.sizes.begin(), c.sizes.end());
    const bool even = std::count(c.sizes.begin(), c.sizes.end(), largest) == std::ptrdiff_t(c.sizes.size());
    BOOST_TEST(most <= size_t(even ? 12 : 2 * largest + 10), l.nranks << " ranks: " << most);
  }
}

namespace {

// The most streaming peers any rank of `l` links on `nchannels` channels.
size_t mostStreamingPeers(const NodeLayout &l, int nchannels) {
  size_t most = 0;
  for (int r = 0; r < l.nranks; ++r) most = std::max(most, cudaStreamingPeers(l, r, nchannels).size());
  return most;
}

// The pinned memory the wiring's links take on the rank that has the most.
size_t linkBytesOf(const NodeLayout &l, DeviceWiring w) {
  const size_t peers = w.everyPeer ? size_t(cudaMostRemotePeers(l)) : mostStreamingPeers(l, w.channels);
  return peers * size_t(w.channels) * kCudaNetLinkBytes;
}

}  // namespace

// The kernels' channels and links on a layout (cudaDeviceWiring): as many
// channels as the device memory and the links' budget allow, counted on
// the busiest rank, and every remote peer linked where that leaves as many
// channels as the streaming peers would.  The channels once fell with the
// job's ranks, as if every rank had device FIFOs (1 from 512 ranks), where
// only the node's peers have them; the links, not the FIFOs, bound them
// across nodes.
BOOST_AUTO_TEST_CASE(the_wiring_fits_the_links_budgets) {
  const char *modes[] = {"auto", "every", "streaming"};
  const Tables one({8}, false);
  for (const char *mode : modes) {  // nothing remote: every peer, the device's channels
    const DeviceWiring w = cudaDeviceWiring(one.layout, mode);
    BOOST_TEST(w.everyPeer);
    BOOST_TEST(w.channels == kCudaMaxChannels);
    BOOST_TEST(w.channels == cudaChannelsFor(8, 8));
  }
  struct Case {
    std::vector<int> sizes;
    int channels;  // under auto
    bool everyPeer;
  };
  const std::vector<Case> cases = {
      {std::vector<int>(2, 8), 16, true},      // 8 remote peers on 16 channels: 136 MiB
      {std::vector<int>(3, 8), 8, true},       // 16 on 8 (9 fit, but two on one NIC), as the streaming peers would
      {std::vector<int>(4, 8), 8, false},      // 5 streaming peers on 8 (9 fit): 42.5 MiB
      {std::vector<int>(16, 8), 6, false},     // 7 on 6: 45 MiB
      {std::vector<int>(128, 8), 6, false},    // the tables grow by 1.1 MiB, the links stay
      {std::vector<int>(4, 4), 12, true},      // 12 remote peers on 12
      {std::vector<int>(64, 4), 4, false},     // 6 fit, but would put two on one of a node's 4 NICs
      {{1, 7, 8}, 10, true},                   // uneven: the lone rank's 15 remote peers on 10
  };
  for (const Case &c : cases) {
    const Tables t(c.sizes, false);
    const NodeLayout &l = t.layout;
    const int largest = *std::max_element(c.sizes.begin(), c.sizes.end());
    const int device = cudaChannelsFor(largest, l.nranks);
    for (const char *mode : modes) {
      const DeviceWiring w = cudaDeviceWiring(l, mode);
      const size_t budget = w.everyPeer ? kCudaNetLinkBudget : cudaStreamingLinkBudget(l.nranks);
      BOOST_TEST(w.everyPeer == (strcmp(mode, "every") == 0 || (strcmp(mode, "auto") == 0 && c.everyPeer)),
                 l.nranks << " ranks, " << mode);
      BOOST_TEST(w.channels >= 1);
      BOOST_TEST(w.channels <= device);
      // Within the budget, and the next count that spreads evenly over the
      // NICs would not be, on the peers counted at the device's channels
      // (or the device is the bound).
      BOOST_TEST((w.channels == 1 || linkBytesOf(l, w) <= budget), l.nranks << " ranks, " << mode);
      const int smallest = *std::min_element(c.sizes.begin(), c.sizes.end());
      const int step = smallest > 1 && w.channels >= smallest ? smallest : 1;
      BOOST_TEST((step == 1 || w.channels % smallest == 0), l.nranks << " ranks, " << mode);
      const size_t peers = w.everyPeer ? size_t(cudaMostRemotePeers(l)) : mostStreamingPeers(l, device);
      if (w.channels + step <= device)
        BOOST_TEST(peers * size_t(w.channels + step) * kCudaNetLinkBytes > budget, l.nranks << " ranks, " << mode);
      if (strcmp(mode, "auto") == 0) BOOST_TEST(w.channels == c.channels, l.nranks << " ranks");
    }
  }
  // Decided by the rank with the most remote peers (the lone one's 15), the same on every rank.
  const Tables uneven({1, 7, 8}, false);
  BOOST_TEST(cudaMostRemotePeers(uneven.layout) == 15);
  // At 16,384 ranks the tables take 18 MiB and leave the links 30: 4 x 7
  // x 1.06 MiB, where the old count, 1 channel, streamed a slot of 128 KiB
  // a step.
  const Tables huge(std::vector<int>(2048, 8), false);
  const DeviceWiring w = cudaDeviceWiring(huge.layout, "auto");
  BOOST_TEST(!w.everyPeer);
  BOOST_TEST(w.channels == 4);
  BOOST_TEST(linkBytesOf(huge.layout, w) <= cudaStreamingLinkBudget(16384));
  BOOST_TEST(cudaStreamingLinkBudget(16384) < cudaStreamingLinkBudget(128));
}

// Where only those peers are linked the kernels' bcast and reduce trees
// keep to them (nodeTreeOnLinks): for every root, a tree over all ranks
// whose every edge between nodes is a link both ends make, no head with
// more children than the primitives take, and a node's way from the root
// at most the way up one rootless tree and down again.  The tree hung from
// the root (nodeTree) fails the links: it was not planned there, and the
// chain took its place (16 x 8 H100, 8 B broadcast: 217 us against 31).
BOOST_AUTO_TEST_CASE(rooted_trees_keep_to_the_streaming_links) {
  struct Case {
    std::vector<int> sizes;
    bool roundRobin;
  };
  const std::vector<Case> cases = {{{2, 2, 2, 2}, false}, {{2, 1, 3}, false},       {{4, 4}, true},
                                   {std::vector<int>(16, 8), false}, {{3, 5, 1, 7, 2}, false},
                                   {std::vector<int>(13, 3), true}, {std::vector<int>(64, 2), false}};
  int hungFromRootOffLinks = 0;
  for (const Case &c : cases) {
    const Tables t(c.sizes, c.roundRobin);
    const NodeLayout &l = t.layout;
    const int n = l.nranks;
    std::vector<std::vector<int>> links;
    for (int r = 0; r < n; ++r) links.push_back(cudaStreamingPeers(l, r, 1));
    int deepest = 0;  // either rootless tree's network hops, top to bottom
    for (int which = 0; which < 2; ++which)
      for (int node = 0; node < l.nnodes; ++node) deepest = std::max(deepest, nodeTreeDepthOfNode(which, node, l.nnodes));
    for (int root = 0; root < n; ++root) {
      std::vector<BinaryTree> trees;
      for (int r = 0; r < n; ++r) trees.push_back(nodeTreeOnLinks(r, root, l));
      BOOST_TEST(trees[size_t(root)].parent == -1, n << " ranks, root " << root);
      std::vector<int> seen(size_t(n), 0), hops(size_t(n), 0), todo{root};
      seen[size_t(root)] = 1;
      while (!todo.empty()) {
        const int r = todo.back();
        todo.pop_back();
        const BinaryTree &tr = trees[size_t(r)];
        BOOST_TEST_REQUIRE(tr.nchildren <= kMaxTreeChildren);
        for (int i = 0; i < tr.nchildren; ++i) {
          const int q = tr.children[i];
          BOOST_TEST_REQUIRE((q >= 0 && q < n && !seen[size_t(q)]), n << " ranks, root " << root << ": rank " << r
                                                                       << "'s child " << q << " reached twice");
          BOOST_TEST(trees[size_t(q)].parent == r, n << " ranks, root " << root << ": " << q << "'s parent");
          const bool remote = l.nodeOf[q] != l.nodeOf[r];
          if (remote)
            BOOST_TEST((contains(links[size_t(r)], q) && contains(links[size_t(q)], r)),
                       n << " ranks, root " << root << ": " << r << " -> " << q << " unlinked");
          hops[size_t(q)] = hops[size_t(r)] + (remote ? 1 : 0);
          seen[size_t(q)] = 1;
          todo.push_back(q);
        }
      }
      BOOST_TEST(std::count(seen.begin(), seen.end(), 1) == n, n << " ranks, root " << root << ": not all reached");
      BOOST_TEST(*std::max_element(hops.begin(), hops.end()) <= 2 * deepest, n << " ranks, root " << root);
      for (int r = 0; r < n; ++r) {
        const BinaryTree hung = nodeTree(-1, r, root, l);
        for (int i = 0; i < hung.nchildren; ++i)
          hungFromRootOffLinks += l.nodeOf[hung.children[i]] != l.nodeOf[r] && !contains(links[size_t(r)], hung.children[i]);
      }
    }
  }
  BOOST_TEST(hungFromRootOffLinks > 0);
}

BOOST_AUTO_TEST_SUITE_END()
