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
enum class Algo : uint8_t { Ring, Tree, Direct, Chain, Pairwise, Dissemination, Local, Publish, Hierarchical, Count };

const char *collName(Coll c);
const char *algoName(Algo a);

struct Plan {
  Algo algo;
  const char *why;  // for the INFO log: what decided
};

// Pick the algorithm for `bytes` (the whole vector for allreduce, reduce and
// bcast; one rank's block for the others) on `nranks` ranks; `equalNodes`:
// they span several nodes of equal size (the hierarchical allreduce).
// Honours CHORUS_ALGO where it names an algorithm the collective has.
Plan planCollective(Coll coll, size_t bytes, int nranks, bool equalNodes = false);

}  // namespace chorus
