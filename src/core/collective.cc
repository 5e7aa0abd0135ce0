#include "core/collective.h"

namespace chorus {

const char *collName(Coll c) {
  static const char *const names[] = {"allreduce", "reduce", "bcast", "allgather", "reduce_scatter_block",
                                      "alltoall", "barrier"};
  return c < Coll::Count ? names[int(c)] : "?";
}

const char *algoName(Algo a) {
  static const char *const names[] = {"ring", "tree", "direct", "chain", "pairwise", "dissemination", "local",
                                      "publish", "hierarchical", "recursive_doubling", "single_copy", "bruck"};
  return a < Algo::Count ? names[int(a)] : "?";
}

}  // namespace chorus
