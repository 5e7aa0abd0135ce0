// The collectives and algorithms Chorus knows, by name: the vocabulary
// that the flight recorder, the statistics and the error texts share with
// the planner (coll/algorithms.h), kept on the ground floor so that they
// need nothing above it.
#pragma once

#include <cstdint>

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
  Bruck, Count
};

const char *collName(Coll c);
const char *algoName(Algo a);

}  // namespace chorus
