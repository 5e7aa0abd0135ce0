// Double binary tree allreduce: the vector is split in two halves, each
// reduced up one of two complementary binary trees and broadcast back down
// it.  Depth log2(n) instead of the ring's n-1 steps, so it wins for
// latency-bound sizes at larger rank counts.  Across nodes the trees link
// nodes, with chains inside them (nodeTree in patterns.h).
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void allreduceTreeHalf(const T *src, T *dst, size_t count, size_t sliceElems,
                                          const BinaryTree &tree, Prims &prims, size_t off) {
  const size_t len = minSize(sliceElems, count - off);
  const int parent[1] = {tree.parent};
  // Up: fold the children's partial results into ours and pass to the parent.
  prims.connect(tree.children, tree.nchildren, parent, tree.parent < 0 ? 0 : 1);
  if (tree.parent < 0) prims.recvReduceCopy(src + off, dst + off, len);
  else prims.recvReduceSend(src + off, len);
  // Down: the root's result flows back to every leaf.
  prims.connect(parent, tree.parent < 0 ? 0 : 1, tree.children, tree.nchildren);
  if (tree.parent < 0) prims.send(dst + off, len);
  else if (tree.nchildren > 0) prims.recvCopySend(dst + off, len);
  else prims.recv(dst + off, len);
}

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void allreduceTree(const CollArgs &a, Prims &prims) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  const BlockPartition halves(a.count, 2);
  const BinaryTree trees[2] = {treeOf(a, 0), treeOf(a, 1)};
  // Slices of the two halves alternate so both trees' links work at once.
  for (size_t off = 0; off < halves.blockElems && prims.ok(); off += a.sliceElems) {
    for (int t = 0; t < 2; ++t) {
      if (off >= halves.size(t)) continue;  // same decision on every rank
      allreduceTreeHalf(src + halves.offset(t), dst + halves.offset(t), halves.size(t), a.sliceElems, trees[t],
                        prims, off);
    }
  }
}

}  // namespace chorus
