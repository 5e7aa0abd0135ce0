// Double binary tree allreduce: the vector is split in two halves, each
// reduced up one of two complementary binary trees and broadcast back down
// it.  Depth log2(n) instead of the ring's n-1 steps, so it wins for
// latency-bound sizes at larger rank counts.  Across nodes the trees link
// nodes, with chains inside them (nodeTree in patterns.h).
#pragma once

#include "coll/coll_args.h"
#include "coll/patterns.h"

namespace chorus {

// Up: fold the children's partial results of one slice into ours and pass
// them to the parent (the root keeps the result in dst).
template <typename T, typename Prims>
CHORUS_HOST_DEVICE void allreduceTreeUp(const T *src, T *dst, size_t len, const BinaryTree &tree, Prims &prims) {
  const int parent[1] = {tree.parent};
  prims.connect(tree.children, tree.nchildren, parent, tree.parent < 0 ? 0 : 1);
  if (tree.parent < 0) prims.recvReduceCopy(src, dst, len);
  else prims.recvReduceSend(src, len);
}

// Down: the root's result of one slice flows back to every leaf.
template <typename T, typename Prims>
CHORUS_HOST_DEVICE void allreduceTreeDown(T *dst, size_t len, const BinaryTree &tree, Prims &prims) {
  const int parent[1] = {tree.parent};
  prims.connect(parent, tree.parent < 0 ? 0 : 1, tree.children, tree.nchildren);
  if (tree.parent < 0) prims.send(dst, len);
  else if (tree.nchildren > 0) prims.recvCopySend(dst, len);
  else prims.recv(dst, len);
}

template <typename T, typename Prims>
CHORUS_HOST_DEVICE void allreduceTree(const CollArgs &a, Prims &prims) {
  const T *src = static_cast<const T *>(a.sendbuf);
  T *dst = static_cast<T *>(a.recvbuf);
  const BlockPartition halves(a.count, 2);
  const BinaryTree trees[2] = {treeOf(a, 0), treeOf(a, 1)};
  // Each slice goes up both trees before it comes down either, so that both
  // trees' links work at once: a rank that waited for one half's way down
  // before it sent the other half up made the two trees' round trips one
  // after the other (chorus_sim -p 2socket, 16 nodes x 1 rank, 16 B: 73 us,
  // now 58; 16 x 8, 16 KiB: 174, now 151).  Every rank takes the phases in
  // the same order, so each link's messages are received in the order they
  // were sent, and ups wait only on ups.  Sending further slices up before
  // the first come down (as NCCL's tree does) only lost in the model: 1 to
  // 8 slices ahead, 4 MiB on 2 x 8 took 9.0 ms going to 14.5, the CPU ranks'
  // copies, not the round trips, bounding the stream.
  for (size_t off = 0; off < halves.blockElems && prims.ok(); off += a.sliceElems) {
    size_t sliceLen[2];  // 0 where a half has ended (same on every rank)
    for (int t = 0; t < 2; ++t) sliceLen[t] = off < halves.size(t) ? minSize(a.sliceElems, halves.size(t) - off) : 0;
    for (int t = 0; t < 2; ++t)
      if (sliceLen[t] > 0)
        allreduceTreeUp(src + halves.offset(t) + off, dst + halves.offset(t) + off, sliceLen[t], trees[t], prims);
    for (int t = 0; t < 2; ++t)
      if (sliceLen[t] > 0) allreduceTreeDown(dst + halves.offset(t) + off, sliceLen[t], trees[t], prims);
  }
}

}  // namespace chorus
