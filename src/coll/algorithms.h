// The collectives and algorithms Chorus knows, and the planner's choice.
#pragma once

#include "core/datatype.h"

namespace chorus {

enum class Coll : uint8_t { Allreduce, Reduce, Bcast, Allgather, ReduceScatter, Alltoall, Barrier, Count };
// Publish (allgather, bcast and allreduce, host memory): each slice written
// once into its owner's publish ring and copied out by every reader (for
// allreduce, after the ring's reduce-scatter).  The CUDA executor runs the
// ring or chain in its place.
// Hierarchical (allreduce, host memory, several nodes of equal size): ring
// reduce-scatter in the node, ring allreduce across nodes, ring allgather in
// the node.
// RecursiveDoubling (allreduce, allgather and, as recursive halving,
// reduce-scatter; host memory and the staged device path, a power of two
// ranks): log2(n) pairwise exchanges, for small messages across nodes.
// SingleCopy (alltoall, host memory, one machine): every rank copies its
// blocks straight out of its peers' send buffers (cross-memory attach),
// for large blocks when ranks share cores; pairwise where it cannot run.
enum class Algo : uint8_t {
  Ring, Tree, Direct, Chain, Pairwise, Dissemination, Local, Publish, Hierarchical, RecursiveDoubling, SingleCopy,
  Count
};

const char *collName(Coll c);
const char *algoName(Algo a);

struct Plan {
  Algo algo;
  const char *why;  // for the INFO log: what decided
};

// Where the ranks are: the planner's view of the communicator.
struct PlanShape {
  int nranks = 1;
  int nnodes = 1;
  int maxNodeRanks = 1;     // ranks on the most populated node
  bool equalNodes = false;  // several nodes, all of maxNodeRanks > 1 ranks (the hierarchical allreduce)
  int nodeTreeDepth = -1;   // network hops of the node tree (nodeTreeDepthOf); -1: computed per call
  // Ranks per core on the most crowded machine (at least 1), the same on
  // every rank: each message's CPU cost grows with it (tuner.cc).
  double cpuShare = 1.0;
  // Every rank can read every other's memory (one machine, cross-memory
  // attach allowed: transport/shm/cma.h), the same on every rank.
  bool singleCopy = false;
};

// Pick the algorithm for `bytes` (the whole vector for allreduce, reduce and
// bcast; one rank's block for the others).  On one node the measured
// crossovers decide; across nodes a cost model over the link classes (shm
// inside a node, the network between nodes).  Honours CHORUS_ALGO where it
// names an algorithm the collective has.
Plan planCollective(Coll coll, size_t bytes, const PlanShape &shape);
// One node of `nranks` ranks.
inline Plan planCollective(Coll coll, size_t bytes, int nranks) {
  PlanShape shape;
  shape.nranks = shape.maxNodeRanks = nranks;
  return planCollective(coll, bytes, shape);
}

// Network hops from the root to the deepest node of the node tree over
// `nnodes` nodes (patterns.h), for PlanShape::nodeTreeDepth.
int nodeTreeDepthOf(int nnodes);

// The cost model's estimate, in microseconds, of `algo` for `coll` on
// `shape` (several nodes); a negative value when the algorithm does not
// apply.  Exposed for the unit tests and chorus_info.
double modelCostUs(Coll coll, Algo algo, size_t bytes, const PlanShape &shape);

}  // namespace chorus
