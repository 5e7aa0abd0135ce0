// Broadcast down a tree rooted at the root: across nodes an in-order binary
// tree of the nodes, inside each node a chain (nodeTree).  For small
// messages on many nodes: log2(nodes) network hops where the chain pays one
// per node.  Slices are pipelined, so it still streams.
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void bcastTree(const CollArgs &a, Prims &prims) {
  T *buf = static_cast<T *>(a.recvbuf);
  const BinaryTree tree = rootedTreeOf(a);
  const int parent[1] = {tree.parent};
  prims.connect(parent, tree.parent < 0 ? 0 : 1, tree.children, tree.nchildren);
  for (size_t off = 0; off < a.count && prims.ok(); off += a.sliceElems) {
    const size_t len = minSize(a.sliceElems, a.count - off);
    if (tree.parent < 0) prims.send(buf + off, len);
    else if (tree.nchildren > 0) prims.recvCopySend(buf + off, len);
    else prims.recv(buf + off, len);
  }
}

}  // namespace chorus
