// Two contributions: the exact sum by the FPU's addition.
//
// Why it is exact: IEEE addition returns a + b, the exact sum of its two
// operands, rounded once to nearest-even (in that rounding mode), and
// a + b = b + a, so it is a function of the pair only.  The exact mode's
// window cannot change it: a contribution whose low bits fall below the
// window is below a quarter of the larger one's ulp (the window reaches 73
// bits below a double's top, 60 below a float's), far from any tie, so
// rounding it to the window first does not move the sum's rounding.  Results
// that are not normal numbers (a zero, whose sign the exact mode decides
// its own way; subnormals, infinities, NaN payloads) are redone by the
// scalar steps.  So at 2 ranks the owner's sum is one addition an element
// where the integer form costs several ns (perf/RESULTS.md, "Exact sums").
//
// When: only where the FPU rounds to nearest and keeps subnormals.  A
// program built with -ffast-math (flush-to-zero and denormals-are-zero set
// at start-up), by some vendors' compilers, or that called fesetround,
// gets the integer form and the same bits.  The modes are probed per call,
// as the thread that calls may have its own.
#include <cfenv>
#include <cstring>

#include "coll/exact_simd.h"
#include "coll/exact_sum.h"

namespace chorus {

namespace {

// Whether this thread's FPU adds as IEEE says with round-to-nearest: the
// mode, and two sums that flush-to-zero (a subnormal result) and
// denormals-are-zero (subnormal operands) would change, in both widths.
// volatile: the compiler must not fold them at build time.
bool fpuAddsAsIeee() {
  if (fegetround() != FE_TONEAREST) return false;
  volatile double dTiny = 0x1p-1074, dMin = 0x1p-1022, dPart = -0x1.8p-1023;
  volatile float fTiny = 0x1p-149f, fMin = 0x1p-126f, fPart = -0x1.8p-127f;
  return dTiny + dTiny == 0x1p-1073 && dMin + dPart == 0x1p-1024 && fTiny + fTiny == 0x1p-148f &&
         fMin + fPart == 0x1p-128f;
}

template <typename Float>
bool isNormal(Float x, Float smallest, Float largest) {
  const Float magnitude = x < 0 ? -x : x;
  return magnitude >= smallest && magnitude <= largest;  // false for NaN
}

template <typename Float>
void sumPairScalar(const unsigned char *const *vectors, size_t n, unsigned char *out, Float smallest, Float largest) {
  constexpr ExactFormat f = exactFormatOf(sizeof(Float) == 8 ? DataType::Float64 : DataType::Float32);
  for (size_t i = 0; i < n; ++i) {
    const size_t at = i * sizeof(Float);
    Float a, b;
    memcpy(&a, vectors[0] + at, sizeof a);
    memcpy(&b, vectors[1] + at, sizeof b);
    const Float sum = a + b;
    if (isNormal(sum, smallest, largest)) memcpy(out + at, &sum, sizeof sum);
    else exactStoreBits(out + at, f.bytes, exactSumElement(vectors, 2, at, f));
  }
}

}  // namespace

bool exactSumOfTwo(DataType type, const unsigned char *const *vectors, size_t n, unsigned char *out, bool vector) {
  if (type != DataType::Float64 && type != DataType::Float32) return false;
  if (!fpuAddsAsIeee()) return false;
  if (vector && exactPairVector(type, vectors, n, out)) return true;
  if (type == DataType::Float64) sumPairScalar<double>(vectors, n, out, 0x1p-1022, 0x1.fffffffffffffp1023);
  else sumPairScalar<float>(vectors, n, out, 0x1p-126f, 0x1.fffffep127f);
  return true;
}

}  // namespace chorus
