// Reduce up a tree rooted at the root (the bcast tree, bcast_tree.h, run
// backwards): each rank folds its children's slices into its own and passes
// the result to its parent.  The fold order is fixed by the layout (our own
// data first, then the children in tree order), so results are
// reproducible run to run.
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void reduceTree(const CollArgs &a, Prims &prims) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  const BinaryTree tree = rootedTreeOf(a);
  const int parent[1] = {tree.parent};
  prims.connect(tree.children, tree.nchildren, parent, tree.parent < 0 ? 0 : 1);
  for (size_t off = 0; off < a.count && prims.ok(); off += a.sliceElems) {
    const size_t len = minSize(a.sliceElems, a.count - off);
    if (tree.parent < 0) prims.recvReduceCopy(src + off, dst + off, len);
    else prims.recvReduceSend(src + off, len);
  }
}

}  // namespace chorus
