// The kernel template and the per-group launcher.  Included by each
// kernels_<group>.cu after it defines CHORUS_CUDA_GROUP.
#pragma once

#ifndef CHORUS_CUDA_GROUP
#error "define CHORUS_CUDA_GROUP before including kernels_impl.cuh"
#endif

#include "coll/allgather_ring.h"
#include "coll/allreduce_direct.h"
#include "coll/allreduce_hierarchical.h"
#include "coll/allreduce_ring.h"
#include "coll/allreduce_tree.h"
#include "coll/alltoall_pairwise.h"
#include "coll/bcast_chain.h"
#include "coll/bcast_tree.h"
#include "coll/direct_collectives.h"
#include "coll/reduce_chain.h"
#include "coll/reduce_tree.h"
#include "coll/reduce_scatter_ring.h"
#include "cuda/cuda_check.h"
#include "cuda/device_lang.h"
#include "cuda/kernel_table.h"
#include "cuda/kernels.h"
#include "cuda/prims_device.cuh"

namespace chorus {

namespace kernel_detail {

// This block's share of the call.  Allreduce, reduce and bcast cut their
// vector into contiguous per-channel pieces; allgather, reduce-scatter and
// alltoall cut every rank's block the same way, so that channel c moves
// columns [c*per, (c+1)*per) of every block and its buffers start at its
// piece of block 0 with the blocks the call's count apart (blockStride).
// Pieces are whole 16-byte vectors, so each channel's vector loads keep the
// alignment of the call's buffers.  Every rank cuts alike: the piece sizes
// agree, an empty piece (a short call on many channels) on every rank.
template <Coll C, typename T>
__device__ CollArgs channelArgs(const DevCollArgs &d) {
  CollArgs a;
  a.sendbuf = d.sendbuf;
  a.recvbuf = d.recvbuf;
  a.count = d.count;
  a.root = d.root;
  a.rank = d.rank;
  a.nranks = d.nranks;
  a.sliceElems = d.sliceElems;
  // Each channel its own ring order (DevCollArgs::ringOrder).
  a.ringOrder = d.ringOrder ? d.ringOrder + size_t(blockIdx.x) * size_t(d.nranks) : nullptr;
  a.ringWhere = d.ringWhere ? d.ringWhere + size_t(blockIdx.x) * size_t(d.nranks) : nullptr;
  a.nodes = d.nodes;
  a.rootedTreeOnLinks = d.rootedTreeOnLinks != 0;
  if (d.nchannels > 1) {
    static_assert(sizeof(T) <= 16 && 16 % sizeof(T) == 0, "channel pieces are whole 16-byte vectors");
    constexpr size_t kAlign = 16 / sizeof(T);
    const size_t per = divUp(divUp(d.count, size_t(d.nchannels)), kAlign) * kAlign;
    const size_t off = minSize(size_t(blockIdx.x) * per, d.count);
    a.count = minSize(per, d.count - off);
    if (C == Coll::Allgather || C == Coll::ReduceScatter || C == Coll::Alltoall) a.blockStride = d.count;
    // Allgather's send buffer and reduce-scatter's receive buffer hold one
    // block: the piece's offset in it is the same `off`.
    if (a.sendbuf) a.sendbuf = static_cast<const T *>(a.sendbuf) + off;
    if (a.recvbuf) a.recvbuf = static_cast<T *>(a.recvbuf) + off;
  }
  return a;
}

template <Coll C, typename T, typename Prims>
__device__ void runAlgorithm(const CollArgs &a, Algo algo, Prims &prims, T *scratch) {
  if constexpr (C == Coll::Allreduce) {
    if (algo == Algo::Local) {
      const T *src = static_cast<const T *>(a.sendbuf);
      T *dst = static_cast<T *>(a.recvbuf);
      for (size_t off = 0; off < a.count; off += a.sliceElems)
        prims.localCopy(src + off, dst + off, minSize(a.sliceElems, a.count - off));
    } else if (algo == Algo::Tree) {
      allreduceTree<T>(a, prims);
    } else if (algo == Algo::Direct) {
      allreduceDirect<T>(a, prims, scratch);
    } else if (a.ringOrder) {
      // Across nodes: the ring over ring positions, its peers' ranks looked
      // up once at each connect.  An allreduce's blocks may belong to
      // positions instead of ranks (every rank still ends with every
      // block's sum), which saves the order table's lookups at every step:
      // they took the double and pair kernels past 128 registers into
      // spills (scripts/check-ptx.sh).
      CollArgs byPosition = a;
      byPosition.rank = a.ringWhere[a.rank];
      byPosition.ringOrder = byPosition.ringWhere = nullptr;
      prims.mapPeers(a.ringOrder);
      allreduceRing<T>(byPosition, prims);
      prims.mapPeers(nullptr);
    } else {
      allreduceRing<T>(a, prims);
    }
  } else if constexpr (C == Coll::Reduce) {
    if (algo == Algo::Direct || algo == Algo::Local) reduceDirect<T>(a, prims, scratch);
    else if (algo == Algo::Tree && a.nodes) reduceTree<T>(a, prims);
    else reduceChain<T>(a, prims);
  } else if constexpr (C == Coll::ReduceScatter) {
    if (algo == Algo::Direct || algo == Algo::Local) reduceScatterDirect<T>(a, prims, scratch);
    else reduceScatterRing<T>(a, prims);
  } else if constexpr (C == Coll::Bcast) {
    if (algo == Algo::Direct) bcastDirect<T>(a, prims);
    else if (algo == Algo::Tree && a.nodes) bcastTree<T>(a, prims);
    else if (algo != Algo::Local) bcastChain<T>(a, prims);
  } else if constexpr (C == Coll::Allgather) {
    if (algo == Algo::Direct || algo == Algo::Local) allgatherDirect<T>(a, prims);
    else allgatherRing<T>(a, prims);
  } else if constexpr (C == Coll::Alltoall) {
    alltoallPairwise<T>(a, prims);
  }
}

// Thread 0 clears the block's flags; a broken context (or its links to
// other nodes) starts failed and does nothing.
__device__ __forceinline__ void startBlock(const DevCollArgs &args, int &pending, int &error) {
  if (threadIdx.x == 0) {
    pending = 0;
    error = *reinterpret_cast<volatile int *>(args.abortFlag) ||
            (args.netAbort && *reinterpret_cast<const volatile int *>(args.netAbort));
  }
  __syncthreads();
}

}  // namespace kernel_detail

// One block per channel, kCudaThreads threads.  The 1 in the launch bounds
// (one block per SM, which is all a collective runs: a channel per SM) lets
// ptxas give each thread 65536 / 512 = 128 registers; with the default it
// kept two blocks' room, 64, and spilled in the FuncMax<double> and
// FuncProd<double> kernels (up to 252 B of spill stores).  The unrolled
// reduce-copy (reduce_copy.cuh) needs 32-48 of them for data; ptxas's
// report of every instantiation is checked by scripts/check-ptx.sh.
template <Coll C, typename T, typename Func, int P>
__global__ void __launch_bounds__(kCudaThreads, 1) collKernel(DevCollArgs args) {
  CHORUS_BLOCK_SHARED(int, sPending);
  CHORUS_BLOCK_SHARED(int, sError);
  kernel_detail::startBlock(args, sPending, sError);
  const DevChannel ch = args.channels[blockIdx.x];
  const CollArgs a = kernel_detail::channelArgs<C, T>(args);
  if (a.count == 0 || sError) return;  // same decision on every rank: the piece sizes agree
  DevicePrims<T, Func, P> prims(args, ch, &sPending, &sError);
  kernel_detail::runAlgorithm<C, T>(a, Algo(args.algo), prims, reinterpret_cast<T *>(ch.scratch));
}

namespace kernel_detail {

// One phase of the hierarchical allreduce on its group's ranks, folding
// with PhaseFunc.
template <typename T, typename PhaseFunc>
__device__ __forceinline__ void runHierarchyPhaseWith(const DevCollArgs &args, const DevChannel &ch,
                                                      const HierarchyPhase &p, int *pending, int *error) {
  DevicePrims<T, PhaseFunc, int(Proto::Simple)> prims(args, ch, pending, error);
  prims.mapPeers(p.ranks);
  runHierarchyPhase<T>(args.phase, p.args, prims);
}

}  // namespace kernel_detail

// The hierarchical allreduce (allreduce_hierarchical.h) on the kernels:
// the node's ring over NVLink/IPC, local rank i of every node in a ring
// over the links between nodes (rail-aligned: each GPU's traffic between
// nodes through its own NIC), the node's ring again; elements past the
// last whole block (fewer than a node has ranks) in a ring over everyone
// in rank order.  Each channel runs it on its piece.  Simple protocol
// only: it runs across nodes, where LL does not go.
//
// One launch per phase (DevCollArgs::phase), in stream order: a phase's
// ring then reads its arguments from the kernel's parameters, as
// collKernel's do, where one kernel running the phases in turn had to
// hold them in registers and spilled in the pair types' kernels (the
// rings alone nearly fill the 128 a thread has; scripts/check-ptx.sh).  A
// phase that finds the call failed does nothing, like any kernel.
template <typename T, typename Func>
__global__ void __launch_bounds__(kCudaThreads, 1) hierarchicalAllreduceKernel(DevCollArgs args) {
  CHORUS_BLOCK_SHARED(int, sPending);
  CHORUS_BLOCK_SHARED(int, sError);
  kernel_detail::startBlock(args, sPending, sError);
  const DevChannel ch = args.channels[blockIdx.x];
  CollArgs call = kernel_detail::channelArgs<Coll::Allreduce, T>(args);
  call.ringOrder = call.ringWhere = nullptr;  // the tail: rank order
  HierarchyPhase p;
  // Every rank decides alike: the pieces and blocks agree.
  if (sError || !hierarchyPhase<T>(call, args.hierarchy, args.phase, &p)) return;
  if (args.phase == 0)  // a partial sum: AVG divides once the sum is whole
    kernel_detail::runHierarchyPhaseWith<T, typename PartialSum<Func>::type>(args, ch, p, &sPending, &sError);
  else
    kernel_detail::runHierarchyPhaseWith<T, Func>(args, ch, p, &sPending, &sError);
}

namespace kernel_detail {

template <Coll C, typename T, typename Func>
Status launch(const LaunchRequest &req, cudaStream_t stream) {
  if constexpr (C == Coll::Allreduce) {
    if (Algo(req.args.algo) == Algo::Hierarchical) {
      // The planner chooses it only across nodes of equal size (Simple
      // protocol), where the executor has the groups.
      if (!req.args.hierarchy.localRanks || req.proto != Proto::Simple) return Status::InternalError;
      DevCollArgs phaseArgs = req.args;
      for (phaseArgs.phase = 0; phaseArgs.phase < kHierarchyPhases; ++phaseArgs.phase) {
        CHORUS_LAUNCH((hierarchicalAllreduceKernel<T, Func>), req.nblocks, kCudaThreads, 0, stream, phaseArgs);
        CHORUS_CUDACHECK(cudaGetLastError());
      }
      return Status::Ok;
    }
  }
  if constexpr (sizeof(T) <= 8) {
    if (req.proto == Proto::LL) {
      CHORUS_LAUNCH((collKernel<C, T, Func, int(Proto::LL)>), req.nblocks, kCudaThreads, 0, stream, req.args);
      CHORUS_CUDACHECK(cudaGetLastError());
      return Status::Ok;
    }
  } else {
    if (req.proto == Proto::LL) return Status::InternalError;  // kernel_table.h: Simple only
  }
  CHORUS_LAUNCH((collKernel<C, T, Func, int(Proto::Simple)>), req.nblocks, kCudaThreads, 0, stream, req.args);
  CHORUS_CUDACHECK(cudaGetLastError());
  return Status::Ok;
}

template <typename T, typename Func>
Status launchReduction(const LaunchRequest &req, cudaStream_t stream) {
  switch (req.coll) {
    case Coll::Allreduce: return launch<Coll::Allreduce, T, Func>(req, stream);
    case Coll::Reduce: return launch<Coll::Reduce, T, Func>(req, stream);
    case Coll::ReduceScatter: return launch<Coll::ReduceScatter, T, Func>(req, stream);
    default: return Status::InternalError;
  }
}

template <DataType D, typename T>
Status launchType(const LaunchRequest &req, cudaStream_t stream) {
  switch (req.op) {
#define CHORUS_OP_CASE(O)                                                                     \
  case RedOp::O:                                                                              \
    if constexpr (kernelEnabled<D, RedOp::O>())                                               \
      return launchReduction<T, typename FuncOf<RedOp::O, T>::type>(req, stream);             \
    else                                                                                      \
      return Status::Unsupported;
    CHORUS_OP_TABLE(CHORUS_OP_CASE)
#undef CHORUS_OP_CASE
    default: return Status::InternalError;
  }
}

// Copy-only collectives move bytes; the functor is never applied.
inline Status launchCopy(const LaunchRequest &req, cudaStream_t stream) {
  using Func = FuncSum<uint8_t>;
  switch (req.coll) {
    case Coll::Bcast: return launch<Coll::Bcast, uint8_t, Func>(req, stream);
    case Coll::Allgather: return launch<Coll::Allgather, uint8_t, Func>(req, stream);
    case Coll::Alltoall: return launch<Coll::Alltoall, uint8_t, Func>(req, stream);
    default: return Status::InternalError;
  }
}

}  // namespace kernel_detail

template <>
Status launchKernelGroup<CHORUS_CUDA_GROUP>(const LaunchRequest &req, cudaStream_t stream) {
#if CHORUS_CUDA_GROUP == 0
  return kernel_detail::launchCopy(req, stream);
#else
  switch (req.type) {
#define CHORUS_TYPE_CASE(D, T, G)                                               \
  case DataType::D:                                                             \
    if constexpr (G == CHORUS_CUDA_GROUP)                                       \
      return kernel_detail::launchType<DataType::D, T>(req, stream);            \
    else                                                                        \
      return Status::InternalError;
    CHORUS_TYPE_TABLE(CHORUS_TYPE_CASE)
#undef CHORUS_TYPE_CASE
    default: return Status::InternalError;
  }
#endif
}

}  // namespace chorus
