// The exact mode's per-element steps in vector registers where the CPU
// allows (coll/exact_avx512.cc, coll/exact_avx2.cc): the same
// bits as exactLimbs and exactRound (coll/exact_sum.h), element by element.
// Each returns false, having written nothing, where this CPU or build has
// no vector form; the caller then runs the scalar step.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/datatype.h"

namespace chorus {

// exactKey of n elements of `type` at `in` stored at `out`, or with `max`
// the larger of it and what `out` holds.
bool exactKeysVector(DataType type, const unsigned char *in, size_t n, uint16_t *out, bool max);

// exactLimbs over n elements of `type` at `in`, their agreed keys at
// `keys`, limbs interleaved at `out` (element i's at out + i * limbs),
// stored there or, with `accumulate`, added to what is there.
bool exactLimbsAvx512(DataType type, const unsigned char *in, size_t n, const uint16_t *keys, int64_t *out,
                      bool accumulate);
bool exactLimbsAvx2(DataType type, const unsigned char *in, size_t n, const uint16_t *keys, int64_t *out,
                    bool accumulate);
inline bool exactLimbsVector(DataType type, const unsigned char *in, size_t n, const uint16_t *keys, int64_t *out,
                             bool accumulate = false) {
  return exactLimbsAvx512(type, in, n, keys, out, accumulate) || exactLimbsAvx2(type, in, n, keys, out, accumulate);
}

// The exact sum of each of n elements of `type` from nranks contributions
// (element i's from vectors[r] + i elements), rounded into `out`: the three
// steps fused, nothing between them in memory.  Plain sums only.
bool exactSumVector(DataType type, const unsigned char *const *vectors, int nranks, size_t n, unsigned char *out);

// Two contributions (float and double): the same bits as exactSumVector
// at 2 ranks, by the FPU's addition (coll/exact_pair.cc says why that is
// exact).  exactSumOfTwo: false, having written nothing, where the FPU does
// not round to nearest with subnormals kept (a program built with
// -ffast-math, a changed rounding mode) or for narrower types; on any CPU,
// eight lanes at once where it has AVX-512 and `vector` allows
// (exactPairVector, which leaves that check to its caller).
bool exactSumOfTwo(DataType type, const unsigned char *const *vectors, size_t n, unsigned char *out,
                   bool vector = true);
bool exactPairVector(DataType type, const unsigned char *const *vectors, size_t n, unsigned char *out);

}  // namespace chorus
