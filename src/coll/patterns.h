// Rank arithmetic of the algorithms: ring neighbours, block partitions and
// the two complementary binary trees.  Header-only and free of I/O so that
// unit tests cover it without hardware and nvcc compiles it for kernels.
#pragma once

#include "core/common.h"

namespace chorus {

CHORUS_HOST_DEVICE constexpr size_t divUp(size_t a, size_t b) { return (a + b - 1) / b; }
CHORUS_HOST_DEVICE constexpr size_t minSize(size_t a, size_t b) { return a < b ? a : b; }
CHORUS_HOST_DEVICE constexpr int mod(int a, int n) { return ((a % n) + n) % n; }

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
struct BinaryTree {
  int parent;       // -1 at the root
  int children[2];  // -1 when absent
  int nchildren;
};

CHORUS_HOST_DEVICE inline BinaryTree makeTree(int which, int rank, int nranks) {
  auto rankAt = [=](int pos) { return which == 0 ? pos : nranks - 1 - pos; };
  const int pos = which == 0 ? rank : nranks - 1 - rank;
  BinaryTree t;
  t.parent = pos == 0 ? -1 : rankAt((pos - 1) / 2);
  t.nchildren = 0;
  t.children[0] = t.children[1] = -1;
  for (int c = 2 * pos + 1; c <= 2 * pos + 2; ++c)
    if (c < nranks) t.children[t.nchildren++] = rankAt(c);
  return t;
}

// Dissemination barrier: in round j rank r signals r + 2^j and waits for
// r - 2^j; ceil(log2 n) rounds.
CHORUS_HOST_DEVICE inline int barrierRounds(int nranks) {
  int rounds = 0;
  for (int span = 1; span < nranks; span <<= 1) ++rounds;
  return rounds;
}

// Pairwise exchange for alltoall: at step k rank r trades blocks with
// partner (k - r) mod n, a symmetric pairing (partner's partner is r), so a
// block is always sent before the incoming one overwrites it -- which is
// what makes MPI_IN_PLACE work without a staging buffer.
CHORUS_HOST_DEVICE inline int pairwisePartner(int step, int rank, int nranks) { return mod(step - rank, nranks); }

}  // namespace chorus
