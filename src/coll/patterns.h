// Rank arithmetic of the algorithms: ring neighbours, block partitions and
// the two complementary binary trees.  Header-only and free of I/O so that
// unit tests cover it without hardware and nvcc compiles it for kernels.
#pragma once

#include "core/common.h"

namespace chorus {

CHORUS_HOST_DEVICE constexpr size_t divUp(size_t a, size_t b) { return (a + b - 1) / b; }
CHORUS_HOST_DEVICE constexpr size_t minSize(size_t a, size_t b) { return a < b ? a : b; }
CHORUS_HOST_DEVICE constexpr int mod(int a, int n) { return ((a % n) + n) % n; }
// Whether n ranks split into pairs, pairs of pairs... (recursive doubling,
// the pairwise barrier).
CHORUS_HOST_DEVICE constexpr bool isPowerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }

// The ring: data flows from each position to the next.  `order` lists the
// ranks by position (null: rank order), `where` is its inverse (rank ->
// position); the executor orders ranks by node so that the ring crosses each
// node boundary once.  Blocks are indexed by rank, whatever the order, so
// reduce-scatter and allgather leave every rank's block where MPI puts it.
struct Ring {
  int rank, nranks;
  const int *order = nullptr, *where = nullptr;
  CHORUS_HOST_DEVICE int positionOf(int r) const { return where ? where[r] : r; }
  CHORUS_HOST_DEVICE int rankAt(int position) const {
    const int p = mod(position, nranks);
    return order ? order[p] : p;
  }
  CHORUS_HOST_DEVICE int next() const { return rankAt(positionOf(rank) + 1); }
  CHORUS_HOST_DEVICE int prev() const { return rankAt(positionOf(rank) - 1); }
  // Ring reduce-scatter: at step k (0..n-1) the rank at position p handles
  // the block of the rank at p-1-k, so that after n-1 steps each rank holds
  // the fully reduced block of its own index -- the layout
  // MPI_Reduce_scatter_block asks for.
  CHORUS_HOST_DEVICE int reduceScatterBlock(int step) const { return rankAt(positionOf(rank) - 1 - step); }
  // Ring allgather: at step k the rank at position p forwards p-k's block.
  CHORUS_HOST_DEVICE int allgatherBlock(int step) const { return rankAt(positionOf(rank) - step); }
  // Distance from `root` along the ring (root = 0): a chain's position.
  CHORUS_HOST_DEVICE int distanceFrom(int root) const { return mod(positionOf(rank) - positionOf(root), nranks); }
};

// `count` elements cut into `nblocks` contiguous blocks of divUp(count,
// nblocks) elements; trailing blocks may be short or empty.
struct BlockPartition {
  size_t count, blockElems;
  CHORUS_HOST_DEVICE BlockPartition(size_t count_, int nblocks)
      : count(count_), blockElems(divUp(count_, nblocks > 0 ? size_t(nblocks) : 1)) {}
  CHORUS_HOST_DEVICE size_t offset(int block) const { return minSize(size_t(block) * blockElems, count); }
  CHORUS_HOST_DEVICE size_t size(int block) const { return minSize(blockElems, count - offset(block)); }
  // The slice of `block` that starts `off` elements into it and is at most
  // sliceElems long: its start in *at, its length returned (0 once off has
  // run past this block, which can be shorter than blockElems at the end).
  CHORUS_HOST_DEVICE size_t slice(int block, size_t off, size_t sliceElems, size_t *at) const {
    *at = offset(block) + off;
    const size_t blockSize = size(block);
    return off < blockSize ? minSize(sliceElems, blockSize - off) : 0;
  }
};

// One binary tree over the ranks in heap order of a permutation: position p
// has parent (p-1)/2 and children 2p+1, 2p+2.  Tree 0 uses position = rank,
// tree 1 the mirrored position nranks-1-rank, so the leaves of one tree
// (the upper half of positions) are mostly interior nodes of the other and
// the two trees share the link load, as in a double binary tree.
// Across nodes a rank has up to three children: two nodes below and the
// next rank of its node's chain (nodeTree); four at the top of a tree
// pointed at its root over the rootless tree's links (nodeTreeOnLinks:
// three neighbour nodes and the chain).
constexpr int kMaxTreeChildren = 4;
struct BinaryTree {
  int parent;                      // -1 at the root
  int children[kMaxTreeChildren];  // -1 when absent
  int nchildren;
};

CHORUS_HOST_DEVICE inline BinaryTree makeTree(int which, int rank, int nranks) {
  auto rankAt = [=](int pos) { return which == 0 ? pos : nranks - 1 - pos; };
  const int pos = which == 0 ? rank : nranks - 1 - rank;
  BinaryTree t;
  t.parent = pos == 0 ? -1 : rankAt((pos - 1) / 2);
  t.nchildren = 0;
  for (int i = 0; i < kMaxTreeChildren; ++i) t.children[i] = -1;
  for (int c = 2 * pos + 1; c <= 2 * pos + 2; ++c)
    if (c < nranks) t.children[t.nchildren++] = rankAt(c);
  return t;
}

// The double binary tree over nodes.  In the in-order numbering of an
// infinite binary tree, position p with lowest set bit b has children
// p -/+ b/2 and parent p -/+ b (whichever is a multiple of 2b but not of 4b).
// Cut to positions 1..n, the root is the largest power of two up to n, a
// right child beyond n is replaced by the deepest one inside, and a node
// whose parent would lie beyond n hangs from p - b instead.  Odd positions
// are the leaves.  Tree 0 puts node k at position k + 1 and tree 1 at k
// (node 0 at n), so the leaves of one are the interior nodes of the other:
// every node is interior in one tree at most.  Tree -1 is tree 0 rotated so
// that `rootNode` is its root (bcast and reduce).
CHORUS_HOST_DEVICE inline int nodeTreePosition(int tree, int node, int rootNode, int n) {
  if (tree == 1) return node == 0 ? n : node;
  if (tree < 0) {
    int top = 1;
    while (top * 2 <= n) top *= 2;
    node = mod(node - rootNode + top - 1, n);  // rootNode lands on the root's position
  }
  return node + 1;
}
CHORUS_HOST_DEVICE inline int nodeTreeNodeAt(int tree, int position, int rootNode, int n) {
  if (tree == 1) return position == n ? 0 : position;
  if (tree < 0) {
    int top = 1;
    while (top * 2 <= n) top *= 2;
    return mod(position - 1 - (top - 1) + rootNode, n);
  }
  return position - 1;
}
// The parent node, -1 at the root.
CHORUS_HOST_DEVICE inline int nodeTreeParent(int tree, int node, int rootNode, int n) {
  const int p = nodeTreePosition(tree, node, rootNode, n), low = p & -p;
  int up = (p ^ low) | (low << 1);
  if (up > n) up = p ^ low;
  return up == 0 ? -1 : nodeTreeNodeAt(tree, up, rootNode, n);
}
// The child nodes (at most two) into `children`; returns how many.
CHORUS_HOST_DEVICE inline int nodeTreeChildren(int tree, int node, int rootNode, int n, int *children) {
  const int p = nodeTreePosition(tree, node, rootNode, n), low = p & -p;
  if (low == 1) return 0;
  int nchildren = 0;
  children[nchildren++] = nodeTreeNodeAt(tree, p - low / 2, rootNode, n);
  int offset = low / 2;
  while (offset >= 1 && p + offset > n) offset /= 2;
  if (offset >= 1) children[nchildren++] = nodeTreeNodeAt(tree, p + offset, rootNode, n);
  return nchildren;
}

// Ranks grouped by node: the ring order (order[position] = rank), where
// each node's ranks start (nodeStart[node], nnodes + 1 entries), and each
// rank's node and position.
struct NodeLayout {
  int nranks, nnodes;
  const int *order, *where, *nodeStart, *nodeOf;
};

// Several nodes, all of one size above 1: where the hierarchical allreduce
// runs (its rails pair local rank i of every node).  The one rule for the
// context's plan, the kernels' rails and the device links.
inline bool equalNodes(const NodeLayout &l) {
  const int m = l.nodeStart[1] - l.nodeStart[0];
  bool equal = l.nnodes > 1 && m > 1;
  for (int node = 1; equal && node < l.nnodes; ++node) equal = l.nodeStart[node + 1] - l.nodeStart[node] == m;
  return equal;
}

// The hierarchical allreduce's two groups of a rank (allreduce_hierarchical.h):
// the ranks of its node (local index i of m), and the ranks of local index i
// on every node (cross), in node order.
struct HierarchyGroups {
  const int *localRanks;
  int nlocal, localIndex;
  const int *crossRanks;
  int ncross, crossIndex;
};

// A tree that crosses node boundaries only between nodes: the node tree
// above links one head rank per node, and the ranks of
// each node hang below their head as a chain, so a small message pays
// log2(nodes) network hops plus the node's shared-memory hops.
// which 0 and 1: the two trees of the double binary tree (tree 1's chains
// run backwards, so the two trees leave a node through different ranks).
// which < 0: one tree rooted at `root` (bcast, reduce), root's node's chain
// starting at root.
CHORUS_HOST_DEVICE inline BinaryTree nodeTree(int which, int rank, int root, const NodeLayout &l) {
  const int node = l.nodeOf[rank];
  const int first = l.nodeStart[node], size = l.nodeStart[node + 1] - first;
  const bool rooted = which < 0;
  const bool backwards = which == 1;
  const int chainStart = rooted && l.nodeOf[root] == node ? l.where[root] - first : (backwards ? size - 1 : 0);
  const int step = backwards ? -1 : 1;
  // Chain index (0 = head) <-> rank.
  auto chainRank = [&](int index) { return l.order[first + mod(chainStart + step * index, size)]; };
  auto headOf = [&](int n) {
    const int start = l.nodeStart[n], len = l.nodeStart[n + 1] - start;
    if (rooted && l.nodeOf[root] == n) return root;
    return l.order[start + (backwards ? len - 1 : 0)];
  };
  const int rootNode = rooted ? l.nodeOf[root] : 0;

  const int index = mod(step * (l.where[rank] - first - chainStart), size);
  BinaryTree t;
  t.nchildren = 0;
  for (int i = 0; i < kMaxTreeChildren; ++i) t.children[i] = -1;
  if (index > 0) {
    t.parent = chainRank(index - 1);
  } else {
    const int up = nodeTreeParent(which, node, rootNode, l.nnodes);
    t.parent = up < 0 ? -1 : headOf(up);
    int below[2];
    const int nbelow = nodeTreeChildren(which, node, rootNode, l.nnodes, below);
    for (int c = 0; c < nbelow; ++c) t.children[t.nchildren++] = headOf(below[c]);
  }
  if (index + 1 < size) t.children[t.nchildren++] = chainRank(index + 1);
  return t;
}

// How many node hops `node` lies below the top of rootless tree `which`.
CHORUS_HOST_DEVICE inline int nodeTreeDepthOfNode(int which, int node, int nnodes) {
  int depth = 0;
  for (int up = nodeTreeParent(which, node, 0, nnodes); up >= 0; up = nodeTreeParent(which, up, 0, nnodes)) ++depth;
  return depth;
}

// Bcast and reduce where the kernels link only the streaming algorithms'
// peers on other nodes (cuda/device_links.h): the rooted tree of nodeTree
// hangs from the root's node, so its links change with the root and are
// not made.  This tree keeps to the links of one of the allreduce's two
// rootless trees (the one where the root's node sits higher) and points
// them at the root's node: a node on the path from there up to the top
// takes the neighbour toward it as its parent, and its old parent becomes
// a child.  Each node's head (the rootless tree's) and chain stay; on the
// root's node the root, if not the head, passes to the head and to a
// chain of the node's other ranks.  A small message pays at most twice
// the node tree's depth in network hops, not a hop per rank as the chain.
CHORUS_HOST_DEVICE inline BinaryTree nodeTreeOnLinks(int rank, int root, const NodeLayout &l) {
  const int nn = l.nnodes, rootNode = l.nodeOf[root];
  const int which = nodeTreeDepthOfNode(0, rootNode, nn) <= nodeTreeDepthOfNode(1, rootNode, nn) ? 0 : 1;
  const int node = l.nodeOf[rank];
  // Node level: where this node lies on the path from the root's node up.
  int toward = -1;  // the neighbour on the way to the root's node
  bool onPath = false;
  for (int at = rootNode, from = -1; at >= 0 && !onPath; from = at, at = nodeTreeParent(which, at, 0, nn))
    if (at == node) {
      onPath = true;
      toward = from;
    }
  const int oldParent = nodeTreeParent(which, node, 0, nn);
  int below[2];
  const int nbelow = nodeTreeChildren(which, node, 0, nn, below);
  int parentNode = oldParent, childNodes[3], nchildNodes = 0;
  if (onPath) {
    parentNode = toward;
    if (oldParent >= 0) childNodes[nchildNodes++] = oldParent;
  }
  for (int c = 0; c < nbelow; ++c)
    if (below[c] != parentNode) childNodes[nchildNodes++] = below[c];

  // Rank level: each node's head and chain as in the rootless tree.
  const int step = which == 1 ? -1 : 1;
  auto headOf = [&](int k) { return l.order[which == 1 ? l.nodeStart[k + 1] - 1 : l.nodeStart[k]]; };
  const int first = l.nodeStart[node], size = l.nodeStart[node + 1] - first;
  const int headIndex = which == 1 ? size - 1 : 0, local = l.where[rank] - first;
  BinaryTree t;
  t.nchildren = 0;
  for (int i = 0; i < kMaxTreeChildren; ++i) t.children[i] = -1;
  const int head = l.order[first + headIndex];
  auto addNodes = [&] {
    for (int c = 0; c < nchildNodes; ++c) t.children[t.nchildren++] = headOf(childNodes[c]);
  };
  if (node != rootNode || root == head) {
    const int index = mod(step * (local - headIndex), size);  // 0 at the head
    t.parent = index > 0 ? l.order[first + mod(headIndex + step * (index - 1), size)]
                         : (parentNode < 0 ? -1 : headOf(parentNode));
    if (index == 0) addNodes();
    if (index + 1 < size) t.children[t.nchildren++] = l.order[first + mod(headIndex + step * (index + 1), size)];
    return t;
  }
  // The root's node, the root not its head: the root heads a chain of the
  // node's ranks but the head, stepping from the root, and feeds the head.
  const int rootLocal = l.where[root] - first, headAt = mod(step * (headIndex - rootLocal), size);
  auto chainRank = [&](int index) {  // index 0 is the root; the head skipped
    return l.order[first + mod(rootLocal + step * (index >= headAt ? index + 1 : index), size)];
  };
  if (rank == head) {
    t.parent = root;
    addNodes();
    return t;
  }
  int index = mod(step * (local - rootLocal), size);
  if (index > headAt) --index;
  t.parent = index > 0 ? chainRank(index - 1) : -1;
  if (index == 0) t.children[t.nchildren++] = head;
  if (index + 1 < size - 1) t.children[t.nchildren++] = chainRank(index + 1);
  return t;
}

// Dissemination barrier: in round j rank r signals r + 2^j and waits for
// r - 2^j; ceil(log2 n) rounds.
CHORUS_HOST_DEVICE inline int barrierRounds(int nranks) {
  int rounds = 0;
  for (int span = 1; span < nranks; span <<= 1) ++rounds;
  return rounds;
}

// Slices an exchange between two ranks keeps in flight each way (Bruck's
// rounds, the pairwise alltoall past a slice): every FIFO has two slots or
// more (fifo.h: kSmallFifoSlots), so the sends ahead never wait on a
// receiver that is itself sending ahead.
constexpr size_t kSlicesAhead = 2;

// Trades `total` elements with one partner, slice by slice, kSlicesAhead of
// ours in flight while the partner's arrive: one at a time, each slice
// waited a whole hop both ways.  Both ends cut the exchange into the same
// slices; sendSlice(offset, len) and recvSlice(offset, len) move one each,
// and a slice is received only after the one at its offset went out, so an
// exchange in place needs no staging.
template <typename Prims, typename SendSlice, typename RecvSlice>
CHORUS_HOST_DEVICE void exchangeSlicesAhead(Prims &prims, size_t total, size_t slice, SendSlice sendSlice,
                                            RecvSlice recvSlice) {
  size_t sent = 0, received = 0;
  while (received < total && prims.ok()) {
    while (sent < total && sent < received + kSlicesAhead * slice && prims.ok()) {
      const size_t len = minSize(slice, total - sent);
      sendSlice(sent, len);
      sent += len;
    }
    const size_t len = minSize(slice, total - received);
    recvSlice(received, len);
    received += len;
  }
}

// Pairwise exchange for alltoall: at step k rank r trades blocks with
// partner (k - r) mod n, a symmetric pairing (partner's partner is r), so a
// block is always sent before the incoming one overwrites it -- which is
// what makes MPI_IN_PLACE work without a staging buffer.
CHORUS_HOST_DEVICE inline int pairwisePartner(int step, int rank, int nranks) { return mod(step - rank, nranks); }

}  // namespace chorus
