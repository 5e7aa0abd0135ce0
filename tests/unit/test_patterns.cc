// Rank arithmetic of the algorithms, checked by simulating the schedules
// with plain arrays: every block must end where MPI puts it.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>
#include <vector>

#include "coll/allreduce_hierarchical.h"
#include "coll/patterns.h"

using namespace chorus;

BOOST_AUTO_TEST_SUITE(patterns)

BOOST_AUTO_TEST_CASE(ring_neighbours_are_inverse) {
  for (int n = 1; n <= 9; ++n)
    for (int r = 0; r < n; ++r) {
      Ring ring{r, n};
      BOOST_TEST(Ring({ring.next(), n}).prev() == r);
      BOOST_TEST(ring.distanceFrom(r) == 0);
    }
}

// Simulate ring reduce-scatter: each rank holds a set of contributions per
// block; at step k rank r forwards block reduceScatterBlock(k) to next, which
// folds it into its own copy.  At the end rank r must own block r complete.
BOOST_AUTO_TEST_CASE(ring_reduce_scatter_ends_with_own_block) {
  for (int n = 2; n <= 9; ++n) {
    std::vector<std::vector<std::set<int>>> held(n, std::vector<std::set<int>>(n));
    for (int r = 0; r < n; ++r)
      for (int b = 0; b < n; ++b) held[r][b] = {r};
    std::vector<std::set<int>> inFlight(n);  // what rank r receives this step
    for (int k = 0; k < n - 1; ++k) {
      for (int r = 0; r < n; ++r) {
        Ring ring{r, n};
        int b = ring.reduceScatterBlock(k);
        inFlight[ring.next()] = held[r][b];
      }
      for (int r = 0; r < n; ++r) {
        Ring ring{r, n};
        int b = ring.reduceScatterBlock(k + 1);
        BOOST_TEST(Ring({ring.prev(), n}).reduceScatterBlock(k) == b);
        held[r][b].insert(inFlight[r].begin(), inFlight[r].end());
      }
    }
    for (int r = 0; r < n; ++r) BOOST_TEST(held[r][r].size() == size_t(n), "n=" << n << " rank " << r);
  }
}

BOOST_AUTO_TEST_CASE(ring_allgather_visits_every_block_once) {
  for (int n = 1; n <= 9; ++n)
    for (int r = 0; r < n; ++r) {
      std::set<int> seen;
      for (int k = 0; k < n; ++k) seen.insert(Ring{r, n}.allgatherBlock(k));
      BOOST_TEST(seen.size() == size_t(n));
      BOOST_TEST(Ring({r, n}).allgatherBlock(0) == r);
    }
}

// A ring in node order (ranks interleaved over 3 nodes, as a round-robin
// placement gives): the same simulation as above, with the ranks visited in
// `order`.  Blocks stay indexed by rank, every hop goes to the next position,
// and the ring crosses each node boundary exactly once.
BOOST_AUTO_TEST_CASE(ordered_ring_reduce_scatter_allgather_and_chains) {
  for (int n = 2; n <= 9; ++n) {
    std::vector<int> order, where(n);
    for (int node = 0; node < 3; ++node)
      for (int r = node; r < n; r += 3) order.push_back(r);
    for (int p = 0; p < n; ++p) where[order[p]] = p;
    auto ringOfRank = [&](int r) { return Ring{r, n, order.data(), where.data()}; };
    int crossings = 0;
    for (int p = 0; p < n; ++p) {
      const Ring ring = ringOfRank(order[p]);
      BOOST_TEST(ring.next() == order[(p + 1) % n]);
      BOOST_TEST(ringOfRank(ring.next()).prev() == order[p]);
      crossings += order[p] % 3 != ring.next() % 3;
    }
    // Once into each node present (n >= 2 means at least 2 nodes).
    BOOST_TEST(crossings == std::min(n, 3), "n=" << n << ": the ring crosses node boundaries " << crossings << " times");
    std::vector<std::vector<std::set<int>>> held(n, std::vector<std::set<int>>(n));
    for (int r = 0; r < n; ++r)
      for (int b = 0; b < n; ++b) held[r][b] = {r};
    std::vector<std::set<int>> inFlight(n);
    for (int k = 0; k < n - 1; ++k) {
      for (int r = 0; r < n; ++r) inFlight[ringOfRank(r).next()] = held[r][ringOfRank(r).reduceScatterBlock(k)];
      for (int r = 0; r < n; ++r) {
        const int b = ringOfRank(r).reduceScatterBlock(k + 1);
        BOOST_TEST(ringOfRank(ringOfRank(r).prev()).reduceScatterBlock(k) == b);
        held[r][b].insert(inFlight[r].begin(), inFlight[r].end());
      }
    }
    for (int r = 0; r < n; ++r) {
      BOOST_TEST(held[r][r].size() == size_t(n), "n=" << n << " rank " << r);
      std::set<int> seen;
      for (int k = 0; k < n; ++k) seen.insert(ringOfRank(r).allgatherBlock(k));
      BOOST_TEST(seen.size() == size_t(n));
      BOOST_TEST(ringOfRank(r).allgatherBlock(0) == r);
      // A chain from any root visits every position once.
      std::set<int> dist;
      for (int q = 0; q < n; ++q) dist.insert(ringOfRank(q).distanceFrom(r));
      BOOST_TEST(dist.size() == size_t(n));
      BOOST_TEST(ringOfRank(r).distanceFrom(r) == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(block_partition_covers_exactly) {
  for (size_t count : {0, 1, 2, 7, 8, 9, 1000, 1021})
    for (int n = 1; n <= 9; ++n) {
      BlockPartition p(count, n);
      size_t total = 0;
      for (int b = 0; b < n; ++b) {
        BOOST_TEST(p.offset(b) == std::min(size_t(b) * p.blockElems, count));
        total += p.size(b);
      }
      BOOST_TEST(total == count, "count " << count << " n " << n);
    }
}

// Every rank appears once in each tree, parent/child links agree, and the
// two trees do not share interior nodes more than necessary.
BOOST_AUTO_TEST_CASE(double_binary_tree_is_consistent) {
  for (int n = 1; n <= 33; ++n) {
    for (int which = 0; which < 2; ++which) {
      int roots = 0;
      for (int r = 0; r < n; ++r) {
        BinaryTree t = makeTree(which, r, n);
        if (t.parent < 0) ++roots;
        for (int c = 0; c < t.nchildren; ++c) BOOST_TEST(makeTree(which, t.children[c], n).parent == r);
        // Depth is logarithmic: walk up.
        int depth = 0;
        for (int p = r; makeTree(which, p, n).parent >= 0; p = makeTree(which, p, n).parent) ++depth;
        BOOST_TEST(depth <= barrierRounds(n) + 1);
      }
      BOOST_TEST(roots == 1);
    }
    int interiorInBoth = 0;
    for (int r = 0; r < n; ++r)
      if (makeTree(0, r, n).nchildren > 0 && makeTree(1, r, n).nchildren > 0) ++interiorInBoth;
    BOOST_TEST(interiorInBoth <= 2, "n=" << n);
  }
}

// The node tree: parent and children agree, every node reaches the root,
// the depth is about log2(n), and in the double tree (0 and 1) no node is
// interior twice; the rooted tree (-1) has its root node at the top.
BOOST_AUTO_TEST_CASE(node_tree_over_nodes_is_consistent) {
  for (int n = 1; n <= 70; ++n) {
    for (int tree = -1; tree <= 1; ++tree)
      for (int rootNode = 0; rootNode < (tree < 0 ? n : 1); ++rootNode) {
        int roots = 0;
        for (int node = 0; node < n; ++node) {
          int children[2];
          const int nc = nodeTreeChildren(tree, node, rootNode, n, children);
          for (int c = 0; c < nc; ++c)
            BOOST_TEST(nodeTreeParent(tree, children[c], rootNode, n) == node,
                       "n=" << n << " tree " << tree << " node " << node << " child " << children[c]);
          if (nodeTreeParent(tree, node, rootNode, n) < 0) {
            ++roots;
            if (tree < 0) BOOST_TEST(node == rootNode);
          }
          int depth = 0;
          for (int q = node; q >= 0 && depth <= n; q = nodeTreeParent(tree, q, rootNode, n)) ++depth;
          BOOST_TEST(depth <= barrierRounds(n) + 1, "n=" << n << " node " << node);
        }
        BOOST_TEST(roots == 1);
      }
    int interiorInBoth = 0;
    for (int node = 0; node < n; ++node) {
      int children[2];
      if (nodeTreeChildren(0, node, 0, n, children) > 0 && nodeTreeChildren(1, node, 0, n, children) > 0)
        ++interiorInBoth;
    }
    BOOST_TEST(interiorInBoth == 0, "n=" << n);
  }
}

namespace {

// Ranks 0..n-1 dealt to nodes of the given sizes round-robin, so a node's
// ranks are not contiguous in rank order (as with mpirun --map-by node).
struct Layout {
  std::vector<int> order, where, nodeStart, nodeOf;
  NodeLayout view;
  explicit Layout(const std::vector<int> &sizes) {
    const int nnodes = int(sizes.size());
    std::vector<std::vector<int>> members(sizes.size());
    int rank = 0;
    for (bool more = true; more;) {
      more = false;
      for (int node = 0; node < nnodes; ++node)
        if (int(members[size_t(node)].size()) < sizes[size_t(node)]) {
          members[size_t(node)].push_back(rank++);
          more = true;
        }
    }
    nodeOf.assign(size_t(rank), 0);
    for (int node = 0; node < nnodes; ++node) {
      nodeStart.push_back(int(order.size()));
      for (int r : members[size_t(node)]) {
        nodeOf[size_t(r)] = node;
        order.push_back(r);
      }
    }
    nodeStart.push_back(rank);
    where.assign(size_t(rank), 0);
    for (int p = 0; p < rank; ++p) where[size_t(order[size_t(p)])] = p;
    view = {rank, nnodes, order.data(), where.data(), nodeStart.data(), nodeOf.data()};
  }
};

// One tree over every rank: a single root (`root` when rooted), links that
// agree both ways, every rank reachable, and exactly one link into each
// node other than the root's (the tree crosses node boundaries only between
// nodes).
void checkNodeTree(const Layout &l, int which, int root) {
  const NodeLayout &v = l.view;
  int roots = 0;
  std::vector<int> linksIntoNode(size_t(v.nnodes), 0);
  for (int r = 0; r < v.nranks; ++r) {
    const BinaryTree t = nodeTree(which, r, root, v);
    if (t.parent < 0) {
      ++roots;
      if (root >= 0) BOOST_TEST(r == root);
    } else if (v.nodeOf[t.parent] != v.nodeOf[r]) {
      ++linksIntoNode[size_t(v.nodeOf[r])];
    }
    BOOST_TEST(t.nchildren <= kMaxTreeChildren);
    for (int c = 0; c < t.nchildren; ++c) BOOST_TEST(nodeTree(which, t.children[c], root, v).parent == r);
    int steps = 0;
    for (int p = r; p >= 0 && steps <= v.nranks; p = nodeTree(which, p, root, v).parent) ++steps;
    BOOST_TEST(steps <= v.nranks, "rank " << r << " does not reach the root");
  }
  BOOST_TEST(roots == 1);
  const int rootNode = root >= 0 ? v.nodeOf[root] : -1;
  for (int node = 0; node < v.nnodes; ++node)
    if (node != rootNode && roots == 1)
      BOOST_TEST(linksIntoNode[size_t(node)] <= 1, "node " << node << " entered " << linksIntoNode[size_t(node)]);
}

}  // namespace

BOOST_AUTO_TEST_CASE(node_trees_link_nodes_once) {
  const std::vector<std::vector<int>> layouts = {{1}, {4}, {1, 1}, {2, 2}, {2, 1, 3}, {1, 1, 1, 1, 1},
                                                 {3, 3, 3, 3}, {2, 2, 2, 2, 2, 2, 2, 2}, {1, 4, 2}};
  for (const auto &sizes : layouts) {
    const Layout l(sizes);
    BOOST_TEST_CONTEXT("layout of " << sizes.size() << " nodes, " << l.view.nranks << " ranks") {
      checkNodeTree(l, 0, -1);
      checkNodeTree(l, 1, -1);
      for (int root = 0; root < l.view.nranks; ++root) checkNodeTree(l, -1, root);
    }
  }
}

BOOST_AUTO_TEST_CASE(pairwise_partners_are_symmetric_and_complete) {
  for (int n = 1; n <= 9; ++n)
    for (int r = 0; r < n; ++r) {
      std::set<int> partners;
      for (int k = 0; k < n; ++k) {
        int p = pairwisePartner(k, r, n);
        BOOST_TEST(pairwisePartner(k, p, n) == r);
        partners.insert(p);
      }
      BOOST_TEST(partners.size() == size_t(n));
    }
}

BOOST_AUTO_TEST_CASE(barrier_rounds) {
  BOOST_TEST(barrierRounds(1) == 0);
  BOOST_TEST(barrierRounds(2) == 1);
  BOOST_TEST(barrierRounds(5) == 3);
  BOOST_TEST(barrierRounds(8) == 3);
}


// The hierarchical allreduce's phases (shared by the host executor, the
// simulator and the kernels' launch per phase): for every local index the
// node phases' blocks and the tail cover the vector exactly once, each
// phase on its group, and only the first one's sum is partial (AVG).
BOOST_AUTO_TEST_CASE(hierarchy_phases_cover_the_vector_once) {
  for (int m = 2; m <= 4; ++m)
    for (int nnodes = 2; nnodes <= 3; ++nnodes)
      for (size_t count : {size_t(0), size_t(1), size_t(m - 1), size_t(m), size_t(7 * m + 3)}) {
        std::vector<double> src(count + 1), dst(count + 1);
        const int local[4] = {10, 11, 12, 13}, cross[3] = {20, 21, 22};
        const int order[1] = {0};
        std::vector<int> covered(count, 0);
        for (int li = 0; li < m; ++li) {
          const HierarchyGroups h{local, m, li, cross, nnodes, nnodes - 1};
          CollArgs a{src.data(), dst.data(), count, 0, 0, m * nnodes, 1024};
          a.ringOrder = a.ringWhere = order;
          HierarchyPhase p[kHierarchyPhases];
          bool runs[kHierarchyPhases];
          for (int ph = 0; ph < kHierarchyPhases; ++ph) runs[ph] = hierarchyPhase<double>(a, h, ph, &p[ph]);
          const size_t q = count / size_t(m), rest = count - q * size_t(m);
          for (int ph = 0; ph < 3; ++ph) BOOST_TEST(runs[ph] == (q > 0));
          BOOST_TEST(runs[3] == (rest > 0));
          if (q > 0) {
            const double *block = dst.data() + size_t(li) * q;
            BOOST_TEST((p[0].ranks == local && p[0].args.rank == li && p[0].args.nranks == m && p[0].partialSum));
            BOOST_TEST((p[0].args.sendbuf == src.data() && p[0].args.recvbuf == block && p[0].args.count == q));
            BOOST_TEST((p[1].ranks == cross && p[1].args.rank == nnodes - 1 && p[1].args.nranks == nnodes));
            BOOST_TEST((p[1].args.sendbuf == block && p[1].args.recvbuf == block && !p[1].partialSum));
            BOOST_TEST((p[2].ranks == local && p[2].args.sendbuf == block && p[2].args.recvbuf == dst.data()));
            for (int ph = 0; ph < 3; ++ph) BOOST_TEST(!p[ph].args.ringOrder);  // groups run in their own order
            for (size_t i = 0; i < q; ++i) ++covered[size_t(li) * q + i];
          }
          if (rest > 0) {
            BOOST_TEST((p[3].ranks == nullptr && p[3].args.nranks == m * nnodes && !p[3].partialSum));
            BOOST_TEST((p[3].args.ringOrder == order && p[3].args.count == rest));
            BOOST_TEST(static_cast<const double *>(p[3].args.sendbuf) == src.data() + q * size_t(m));
            BOOST_TEST(static_cast<double *>(p[3].args.recvbuf) == dst.data() + q * size_t(m));
            if (li == 0)
              for (size_t i = q * size_t(m); i < count; ++i) ++covered[i];
          }
        }
        for (size_t i = 0; i < count; ++i) BOOST_TEST(covered[i] == 1, "element " << i << " of " << count);
      }
}

BOOST_AUTO_TEST_SUITE_END()
