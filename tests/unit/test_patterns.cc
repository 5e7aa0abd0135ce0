// Rank arithmetic of the algorithms, checked by simulating the schedules
// with plain arrays: every block must end where MPI puts it.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>
#include <vector>

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

BOOST_AUTO_TEST_SUITE_END()
