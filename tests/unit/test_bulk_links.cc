// Which FIFOs are full (coll/bulk_links.h): every link a streaming
// algorithm sends on must be one, and a rank may receive on only a few, so
// that memory does not grow by a full FIFO per peer.
#include <boost/test/unit_test.hpp>

#include <vector>

#include "coll/bulk_links.h"

using namespace chorus;

namespace {

// The links (sender -> receiver) the streaming algorithms of one rank send
// on, derived from their schedules as the algorithm files run them.
std::vector<std::pair<int, int>> streamedLinks(const LinkLayout &l, int rank) {
  std::vector<std::pair<int, int>> links;
  const Ring ring{rank, l.nranks, l.ringOrder, l.ringWhere};
  links.push_back({rank, ring.next()});  // ring allreduce, allgather, reduce-scatter, chains
  for (int which = 0; which < 2; ++which) {
    const BinaryTree t = l.nodes ? nodeTree(which, rank, -1, *l.nodes) : makeTree(which, rank, l.nranks);
    if (t.parent >= 0) links.push_back({rank, t.parent});          // up
    for (int c = 0; c < t.nchildren; ++c) links.push_back({rank, t.children[c]});  // down
  }
  return links;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(bulk_links)

BOOST_AUTO_TEST_CASE(every_streamed_link_is_full_and_few_are) {
  for (int n = 2; n <= 130; ++n) {
    LinkLayout l;
    l.nranks = n;
    std::vector<int> inbound(size_t(n), 0);
    for (int r = 0; r < n; ++r) {
      for (const auto &link : streamedLinks(l, r))
        BOOST_TEST(carriesBulk(l, link.second, link.first), "n=" << n << ": " << link.first << " -> " << link.second);
      for (int s = 0; s < n; ++s) inbound[size_t(r)] += carriesBulk(l, r, s);
      BOOST_TEST(!carriesBulk(l, r, r));
    }
    for (int r = 0; r < n; ++r) BOOST_TEST(inbound[size_t(r)] <= 5, "n=" << n << " rank " << r);
    // Small communicators keep every FIFO full, so the one-shot algorithms
    // keep whole-message slices where the planner's crossovers were measured.
    if (n <= 3)
      for (int r = 0; r < n; ++r) BOOST_TEST(inbound[size_t(r)] == n - 1);
  }
}

// Rings in node order, the trees across nodes and the hierarchical groups:
// 3 nodes of 4 ranks placed round-robin (rank r on node r % 3).
BOOST_AUTO_TEST_CASE(node_ordered_ring_and_hierarchical_groups) {
  const int n = 12, nodes = 3, m = 4;
  std::vector<int> order, where(n, 0), localPrev(n, 0), crossPrev(n, 0), nodeOf(n, 0);
  const std::vector<int> nodeStart = {0, m, 2 * m, 3 * m};
  for (int r = 0; r < n; ++r) nodeOf[size_t(r)] = r % nodes;
  for (int node = 0; node < nodes; ++node)
    for (int r = node; r < n; r += nodes) order.push_back(r);
  for (int p = 0; p < n; ++p) where[size_t(order[size_t(p)])] = p;
  // Local index i of node k is rank k + 3 i; groups' rings run in index order.
  for (int r = 0; r < n; ++r) {
    const int node = r % nodes, i = r / nodes;
    localPrev[size_t(r)] = node + nodes * mod(i - 1, m);
    crossPrev[size_t(r)] = mod(node - 1, nodes) + nodes * i;
  }
  LinkLayout l;
  l.nranks = n;
  l.ringOrder = order.data();
  l.ringWhere = where.data();
  l.localPrev = localPrev.data();
  l.crossPrev = crossPrev.data();
  const NodeLayout nodeLayout{n, nodes, order.data(), where.data(), nodeStart.data(), nodeOf.data()};
  l.nodes = &nodeLayout;
  for (int r = 0; r < n; ++r) {
    for (const auto &link : streamedLinks(l, r)) BOOST_TEST(carriesBulk(l, link.second, link.first));
    BOOST_TEST(carriesBulk(l, r, localPrev[size_t(r)]));
    BOOST_TEST(carriesBulk(l, r, crossPrev[size_t(r)]));
    int inbound = 0;
    for (int s = 0; s < n; ++s) inbound += carriesBulk(l, r, s);
    // Ring, two trees (a head: parent, two nodes and its chain below in one
    // tree, chain links in the other), node ring and cross ring.
    BOOST_TEST(inbound <= 8, "rank " << r << ": " << inbound);
  }
}

BOOST_AUTO_TEST_SUITE_END()
