// The exact mode's per-element arithmetic (src/coll/exact_sum.h), against
// independent models: a contribution's limbs against its value scaled and
// rounded by 128-bit integer arithmetic written here, and the rounding of
// limb sums against the exact sum of the contributions rounded once
// (Shewchuk's partial sums with CPython's half-way correction), on random
// data, ties, the window's edge, subnormals and overflow; the steps in
// vector registers (coll/exact_avx2.cc, exact_avx512.cc: keys, limbs and
// the fused sum) against the scalar steps, bit for bit, on every class of
// input of every type.
#include <boost/test/unit_test.hpp>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <vector>

#include "coll/exact_simd.h"
#include "coll/exact_sum.h"
#include "exact_ref.h"

using namespace chorus;

using chorus_test::exactSum;

namespace {

constexpr ExactFormat kDouble = exactFormatOf(DataType::Float64);
constexpr ExactFormat kFloat = exactFormatOf(DataType::Float32);

uint64_t bitsOf(double x) {
  uint64_t b;
  memcpy(&b, &x, 8);
  return b;
}
double doubleOf(uint64_t b) {
  double x;
  memcpy(&x, &b, 8);
  return x;
}

// The model: |x| * 2^(W - 1 - E) for the element's top exponent E (the
// window's unit is 2^(E + 1 - W)), rounded to nearest-even, as one 128-bit
// integer; then its 42-bit digits, each with x's sign.
void modelLimbs(double x, int topBiased, int bias, int limbs, int64_t *out) {
  const int width = kExactLimbBits * limbs;
  int e = 0;
  const double m = std::frexp(std::fabs(x), &e);  // |x| = m * 2^e, m in [0.5, 1)
  // |x| = (m * 2^53) * 2^(e - 53); the unit is 2^(topBiased - bias + 1 - width).
  const uint64_t mant = uint64_t(std::ldexp(m, 53));
  const int shift = (e - 53) - (topBiased - bias + 1 - width);
  unsigned __int128 n = 0;
  if (x != 0) {
    if (shift >= 0) {
      n = static_cast<unsigned __int128>(mant) << shift;
    } else if (-shift < 120) {
      const unsigned __int128 full = mant;
      const int d = -shift;
      const unsigned __int128 q = d >= 64 ? 0 : full >> d;
      const unsigned __int128 rest = full - (q << d);
      const unsigned __int128 half = static_cast<unsigned __int128>(1) << (d - 1);
      n = q + ((rest > half || (rest == half && (q & 1))) ? 1 : 0);
    }
  }
  for (int k = 0; k < limbs; ++k) {
    const int64_t digit = int64_t(uint64_t(n >> (kExactLimbBits * k)) & ((uint64_t(1) << kExactLimbBits) - 1));
    out[k] = std::signbit(x) ? -digit : digit;
  }
}

// The library's three passes on one element's contributions.
double librarySum(const std::vector<double> &xs, uint64_t divisor = 1) {
  uint16_t key = 0;
  for (double x : xs) key = std::max(key, exactKey(bitsOf(x), kDouble));
  int64_t sums[kExactMaxLimbs] = {}, limbs[kExactMaxLimbs];
  for (double x : xs) {
    exactLimbs(bitsOf(x), key, kDouble, limbs);
    for (int k = 0; k < kDouble.limbs; ++k) sums[k] = int64_t(uint64_t(sums[k]) + uint64_t(limbs[k]));
  }
  return doubleOf(exactRound(sums, key, divisor, kDouble));
}

double randomDouble(std::mt19937_64 &rng, int exponent) {
  const double m = double(rng() >> 11) / double(uint64_t(1) << 53) + 0.5;  // [0.5, 1), 53 bits
  const double x = std::ldexp(m, exponent);
  return (rng() & 1) ? -x : x;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(exact_sum)

BOOST_AUTO_TEST_CASE(limbs_match_the_model) {
  std::mt19937_64 rng(7);
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    // A contribution and an element top up to 140 binades above it: in the
    // window, at its edge, and below it (rounded, ties included).
    double x = randomDouble(rng, int(rng() % 2000) - 1000);
    if (i % 7 == 0) x = std::ldexp(double(rng() % 8), -1074 + int(rng() % 4));  // subnormals, ties in few bits
    const uint16_t own = exactKey(bitsOf(x), kDouble);
    const int above = int(rng() % 141);
    const int top = std::min(2046, (own >> 1) + above);
    const uint16_t key = uint16_t(2 * top + 1);
    int64_t got[kExactMaxLimbs], want[kExactMaxLimbs];
    exactLimbs(bitsOf(x), key, kDouble, got);
    modelLimbs(x, top, 1023, kDouble.limbs, want);
    for (int k = 0; k < kDouble.limbs; ++k)
      if (got[k] != want[k])
        BOOST_FAIL("limb " << k << " of " << x << " at top exponent " << top << ": " << got[k] << ", the model "
                           << want[k]);
    ++checked;
  }
  BOOST_TEST(checked == 200000);
}

BOOST_AUTO_TEST_CASE(float_limbs_match_the_model) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 100000; ++i) {
    const float x = float(randomDouble(rng, int(rng() % 250) - 125));
    uint32_t b;
    memcpy(&b, &x, 4);
    const uint16_t own = exactKey(b, kFloat);
    const int top = std::min(254, (own >> 1) + int(rng() % 100));
    int64_t got[kExactMaxLimbs], want[kExactMaxLimbs];
    exactLimbs(b, uint16_t(2 * top + 1), kFloat, got);
    modelLimbs(double(x), top, 127, kFloat.limbs, want);
    for (int k = 0; k < kFloat.limbs; ++k)
      if (got[k] != want[k]) BOOST_FAIL("float limb " << k << " of " << x << " at top " << top);
  }
}

BOOST_AUTO_TEST_CASE(sums_are_the_exact_sum_rounded_once) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100000; ++i) {
    const int n = 2 + int(rng() % 6);
    const int top = int(rng() % 1900) - 950;
    std::vector<double> xs;
    for (int j = 0; j < n; ++j) xs.push_back(randomDouble(rng, top - int(rng() % 70)));
    if (i % 3 == 0) xs.push_back(-xs[0]);  // cancellation
    const double got = librarySum(xs), want = exactSum(xs);
    if (bitsOf(got) != bitsOf(want)) BOOST_FAIL("sum " << i << ": " << got << ", the exact sum rounded " << want);
  }
}

BOOST_AUTO_TEST_CASE(ties_subnormals_and_overflow) {
  const double u = std::ldexp(1.0, -53);
  // Half-way cases go to the even neighbour.
  BOOST_TEST(librarySum({1.0, u}) == 1.0);
  BOOST_TEST(librarySum({1.0 + 2 * u, u}) == 1.0 + 4 * u);
  BOOST_TEST(librarySum({1.0, u, std::ldexp(1.0, -100)}) == 1.0 + 2 * u);  // just above half: up
  BOOST_TEST(librarySum({-1.0, -u}) == -1.0);
  // Subnormal results: exact, and rounded at the smallest subnormal.
  const double tiny = std::ldexp(1.0, -1074);
  BOOST_TEST(librarySum({std::ldexp(1.0, -1022), -std::ldexp(1.0, -1022) + tiny}) == tiny);
  BOOST_TEST(librarySum({3 * tiny, -tiny}) == 2 * tiny);
  // Overflow of the rounding gives the infinity; a sum that comes back does not.
  const double big = std::ldexp(1.75, 1023);
  BOOST_TEST(std::isinf(librarySum({big, big})));
  BOOST_TEST(librarySum({big, big, -big}) == big);
  // Zeros: -0 only when every contribution is.
  BOOST_TEST(std::signbit(librarySum({-0.0, -0.0})));
  BOOST_TEST(!std::signbit(librarySum({-0.0, 0.0})));
  BOOST_TEST(!std::signbit(librarySum({1.0, -1.0})));
  // Infinities and NaN.
  BOOST_TEST(librarySum({HUGE_VAL, 1.0}) == HUGE_VAL);
  BOOST_TEST(std::isnan(librarySum({HUGE_VAL, -HUGE_VAL})));
  BOOST_TEST(std::isnan(librarySum({std::nan(""), 1.0})));
}

BOOST_AUTO_TEST_CASE(average_divides_before_its_one_rounding) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20000; ++i) {
    // 40-bit values close together: the sum is exact in double, so the
    // correctly rounded quotient is the double division's.
    const int n = 2 + int(rng() % 7);
    std::vector<double> xs;
    for (int j = 0; j < n; ++j) {
      const double m = double((rng() >> 24) | (uint64_t(1) << 39));
      xs.push_back((rng() & 1 ? -1 : 1) * std::ldexp(m, -int(rng() % 8)));
    }
    const double want = exactSum(xs) / double(n);
    const double got = librarySum(xs, uint64_t(n));
    if (bitsOf(got) != bitsOf(want)) BOOST_FAIL("average " << i << ": " << got << ", expected " << want);
  }
}

// One element's contributions of format f: a shared top exponent, each
// contribution below it by up to the window and more; now and then zeros,
// -0, subnormals, the largest finite values, infinities and NaN.
std::vector<uint64_t> contributionsOf(std::mt19937_64 &rng, const ExactFormat &f, int count) {
  const uint64_t expMax = (uint64_t(1) << f.exponentBits) - 1;
  const int window = kExactLimbBits * f.limbs;
  const uint64_t top = 1 + rng() % (expMax - 1);
  std::vector<uint64_t> out;
  for (int j = 0; j < count; ++j) {
    const uint64_t sign = rng() & 1, fraction = rng() & ((uint64_t(1) << f.mantissaBits) - 1);
    uint64_t exponent;
    switch (rng() % 16) {
      case 0: exponent = 0; break;                         // zero or subnormal
      case 1: exponent = expMax; break;                    // infinity or NaN
      case 2: exponent = expMax - 1; break;                // the largest binade
      default: {
        const uint64_t below = rng() % uint64_t(window + 12);
        exponent = below >= top ? 0 : top - below;
      }
    }
    uint64_t f2 = fraction;
    if (exponent == 0 && (rng() & 3) == 0) f2 = 0;  // +-0
    if (exponent == expMax && (rng() & 1)) f2 = 0;  // infinity
    out.push_back((sign << (f.mantissaBits + f.exponentBits)) | (exponent << f.mantissaBits) | f2);
  }
  // Cancellation now and then: the first contribution's negation.
  if (count > 1 && (rng() & 3) == 0) out.back() = out.front() ^ (uint64_t(1) << (f.mantissaBits + f.exponentBits));
  return out;
}

template <DataType T>
void compareVectorSteps() {
  constexpr ExactFormat f = exactFormatOf(T);
  std::mt19937_64 rng(11 + int(T));
  constexpr size_t n = 20011;  // not a multiple of 8: the tails too
  constexpr int ranks = 3;
  // ranks vectors of contributions, element by element.
  std::vector<unsigned char> values(ranks * n * size_t(f.bytes));
  std::vector<uint16_t> keys(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const std::vector<uint64_t> c = contributionsOf(rng, f, ranks);
    for (int r = 0; r < ranks; ++r) {
      exactStoreBits(&values[(r * n + i) * size_t(f.bytes)], f.bytes, c[size_t(r)]);
      keys[i] = std::max(keys[i], exactKey(c[size_t(r)], f));
    }
  }
  std::vector<uint16_t> vectorKeys(n);
  bool haveKeys = true;
  for (int r = 0; r < ranks; ++r)
    haveKeys = exactKeysVector(T, &values[r * n * size_t(f.bytes)], n, vectorKeys.data(), r > 0) && haveKeys;
  size_t differ = 0;
  for (size_t i = 0; haveKeys && i < n; ++i)
    if (vectorKeys[i] != keys[i] && differ++ == 0)
      BOOST_TEST_MESSAGE(dataTypeName(T) << " element " << i << ": key " << vectorKeys[i] << " in vector registers, "
                                         << keys[i] << " scalar");
  const size_t width = n * size_t(f.limbs);
  std::vector<int64_t> scalar(width), avx512(width), avx2(width), sums(width, 0);
  std::vector<int64_t> added512(width, 0), added2(width, 0);  // each rank's limbs added by the vector steps
  bool have512 = true, have2 = true;
  for (int r = 0; r < ranks; ++r) {
    const unsigned char *in = &values[r * n * size_t(f.bytes)];
    for (size_t i = 0; i < n; ++i) exactLimbs(exactLoadBits(in + i * f.bytes, f.bytes), keys[i], f, &scalar[i * f.limbs]);
    have512 = exactLimbsAvx512(T, in, n, keys.data(), avx512.data(), false) && have512;
    have2 = exactLimbsAvx2(T, in, n, keys.data(), avx2.data(), false) && have2;
    exactLimbsAvx512(T, in, n, keys.data(), added512.data(), true);
    exactLimbsAvx2(T, in, n, keys.data(), added2.data(), true);
    for (size_t k = 0; k < width; ++k) {
      if (have512 && avx512[k] != scalar[k] && differ++ == 0)
        BOOST_TEST_MESSAGE(dataTypeName(T) << " rank " << r << " limb " << k << ": AVX-512 " << avx512[k] << ", scalar "
                                           << scalar[k]);
      if (have2 && avx2[k] != scalar[k] && differ++ == 0)
        BOOST_TEST_MESSAGE(dataTypeName(T) << " rank " << r << " limb " << k << ": AVX2 " << avx2[k] << ", scalar "
                                           << scalar[k]);
      sums[k] = int64_t(uint64_t(sums[k]) + uint64_t(scalar[k]));
    }
  }
  for (size_t k = 0; k < width; ++k) {
    if (have512 && added512[k] != sums[k] && differ++ == 0)
      BOOST_TEST_MESSAGE(dataTypeName(T) << " limb " << k << ": added by AVX-512 " << added512[k] << ", scalar " << sums[k]);
    if (have2 && added2[k] != sums[k] && differ++ == 0)
      BOOST_TEST_MESSAGE(dataTypeName(T) << " limb " << k << ": added by AVX2 " << added2[k] << ", scalar " << sums[k]);
  }
  std::vector<unsigned char> want(n * size_t(f.bytes)), got(n * size_t(f.bytes));
  for (size_t i = 0; i < n; ++i) exactStoreBits(&want[i * f.bytes], f.bytes, exactRound(&sums[i * f.limbs], keys[i], 1, f));
  // The three steps fused (every rank's contributions at once).
  std::vector<const unsigned char *> vectors;
  for (int r = 0; r < ranks; ++r) vectors.push_back(&values[r * n * size_t(f.bytes)]);
  std::fill(got.begin(), got.end(), 0);
  const bool haveSum = exactSumVector(T, vectors.data(), ranks, n, got.data());
  for (size_t i = 0; haveSum && i < n; ++i)
    if (exactLoadBits(&got[i * f.bytes], f.bytes) != exactLoadBits(&want[i * f.bytes], f.bytes) && differ++ == 0)
      BOOST_TEST_MESSAGE(dataTypeName(T) << " element " << i << ": summed in vector registers 0x" << std::hex
                         << exactLoadBits(&got[i * f.bytes], f.bytes) << ", scalar 0x"
                         << exactLoadBits(&want[i * f.bytes], f.bytes));
  BOOST_TEST(differ == 0u, dataTypeName(T) << ": " << differ << " limbs or results of the vector steps differ");
  BOOST_TEST_MESSAGE(dataTypeName(T) << ": compared " << (haveKeys ? "AVX-512 keys, " : "")
                     << (have512 ? "AVX-512 limbs, " : "") << (have2 ? "AVX2 limbs, " : "")
                     << (haveSum ? "AVX-512 fused sum" : "no fused sum") << " with the scalar steps");
}

// Whether this CPU has the vector forms; where it has none, the cases
// that compare them are reported skipped, not passed.
boost::test_tools::assertion_result hasFusedSum(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result has = exactSumVector(DataType::Float64, nullptr, 2, 0, nullptr);
  if (!has) has.message() << "this CPU has no AVX-512: there is no fused sum to compare";
  return has;
}
boost::test_tools::assertion_result hasVectorSteps(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result has = exactLimbsVector(DataType::Float64, nullptr, 0, nullptr, nullptr);
  if (!has) has.message() << "this CPU has neither AVX2 nor AVX-512: there are no vector steps to compare";
  return has;
}

// `n` elements of `ranks` contributions drawn across every class of input
// (contributionsOf), vector r's at values[r]; with sameSignAtTop, all of
// an element's contributions one sign in one binade.
template <DataType T>
std::vector<std::vector<unsigned char>> drawVectors(int ranks, size_t n, bool sameSignAtTop, uint64_t seed) {
  constexpr ExactFormat f = exactFormatOf(T);
  std::mt19937_64 rng(seed);
  std::vector<std::vector<unsigned char>> values(size_t(ranks), std::vector<unsigned char>(n * size_t(f.bytes)));
  for (size_t i = 0; i < n; ++i) {
    std::vector<uint64_t> c = contributionsOf(rng, f, ranks);
    if (sameSignAtTop) {
      const uint64_t expMax = (uint64_t(1) << f.exponentBits) - 1, sign = (rng() & 1) << (f.mantissaBits + f.exponentBits);
      const uint64_t exponent = 1 + rng() % (expMax - 1);
      for (auto &bits : c)
        bits = sign | (exponent << f.mantissaBits) | (rng() & ((uint64_t(1) << f.mantissaBits) - 1));
    }
    for (int r = 0; r < ranks; ++r) exactStoreBits(&values[size_t(r)][i * size_t(f.bytes)], f.bytes, c[size_t(r)]);
  }
  return values;
}

// How many of `got`'s elements differ from the scalar steps' sums of the
// contributions at `vectors` (the first difference is logged).
template <DataType T>
size_t differFromScalar(const std::vector<const unsigned char *> &vectors, const unsigned char *got, size_t n,
                        const char *form) {
  constexpr ExactFormat f = exactFormatOf(T);
  const int ranks = int(vectors.size());
  size_t differ = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t want = exactSumElement(vectors.data(), ranks, i * f.bytes, f), have = exactLoadBits(got + i * f.bytes, f.bytes);
    if (have != want && differ++ == 0)
      BOOST_TEST_MESSAGE(dataTypeName(T) << " " << ranks << " ranks, element " << i << ": " << form << " 0x" << std::hex
                                         << have << ", scalar 0x" << want);
  }
  return differ;
}

// The fused sum against the scalar steps for rank counts that take each of
// its accumulator forms (double: two words up to 2 contributions, a carry
// word beyond), and one where same-signed contributions in the largest
// binade carry into that word (five of 2^126 or more exceed 2^128).
template <DataType T>
void compareFusedSum(int ranks, bool sameSignAtTop) {
  constexpr ExactFormat f = exactFormatOf(T);
  constexpr size_t n = 4099;
  const auto values = drawVectors<T>(ranks, n, sameSignAtTop, 101 + 7 * ranks + int(T));
  std::vector<const unsigned char *> vectors;
  for (const auto &v : values) vectors.push_back(v.data());
  std::vector<unsigned char> got(n * size_t(f.bytes), 0);
  BOOST_REQUIRE(exactSumVector(T, vectors.data(), ranks, n, got.data()));
  const size_t differ = differFromScalar<T>(vectors, got.data(), n, "fused");
  BOOST_TEST(differ == 0u, dataTypeName(T) << ", " << ranks << " ranks" << (sameSignAtTop ? ", carries" : "") << ": "
                                           << differ << " fused sums differ from the scalar steps");
}

template <DataType T>
void compareFusedSums() {
  for (int ranks : {1, 2, 3, 9}) compareFusedSum<T>(ranks, false);
  compareFusedSum<T>(9, true);
}

BOOST_AUTO_TEST_CASE(fused_sum_gives_the_scalar_bits_for_any_rank_count,
                     *boost::unit_test::precondition(hasFusedSum)) {
  compareFusedSums<DataType::Float64>();
  compareFusedSums<DataType::Float32>();
  compareFusedSums<DataType::Float16>();
  compareFusedSums<DataType::BFloat16>();
}

// Two contributions by the FPU (coll/exact_pair.cc) against the scalar
// steps, eight lanes at once and one at a time, also in place (the result
// over the first contribution, as an owner's own block is summed).
template <DataType T>
void comparePairs() {
  constexpr ExactFormat f = exactFormatOf(T);
  constexpr size_t n = 4099;
  for (bool vector : {true, false}) {
    auto values = drawVectors<T>(2, n, false, 303 + int(T));
    std::vector<const unsigned char *> vectors{values[0].data(), values[1].data()};
    std::vector<unsigned char> got(n * size_t(f.bytes), 0);
    const char *form = vector ? "paired, vector" : "paired, scalar";
    BOOST_REQUIRE(exactSumOfTwo(T, vectors.data(), n, got.data(), vector));
    BOOST_TEST(differFromScalar<T>(vectors, got.data(), n, form) == 0u, dataTypeName(T) << " " << form);
    BOOST_REQUIRE(exactSumOfTwo(T, vectors.data(), n, values[0].data(), vector));
    BOOST_TEST(values[0] == got, dataTypeName(T) << " " << form << ": in place differs");
  }
}

BOOST_AUTO_TEST_CASE(sum_of_two_by_the_fpu_gives_the_scalar_bits) {
  comparePairs<DataType::Float64>();
  comparePairs<DataType::Float32>();
  const unsigned char *none[2] = {nullptr, nullptr};
  BOOST_TEST(!exactSumOfTwo(DataType::Float16, none, 0, nullptr), "half has no pair form (the FPU has no half sum)");
}

// A program built with -ffast-math (flush-to-zero and denormals-are-zero
// at start-up), or one that changed the rounding mode, must not get the
// FPU's sum: the pair form refuses, and the integer form it falls back on
// gives the exact sum's bits whatever the modes.
BOOST_AUTO_TEST_CASE(sum_of_two_refuses_other_fpu_modes) {
  const unsigned char *none[2] = {nullptr, nullptr};
  BOOST_REQUIRE(exactSumOfTwo(DataType::Float64, none, 0, nullptr));
  const int rounding = fegetround();
  fesetround(FE_TOWARDZERO);
  const bool towardZero = exactSumOfTwo(DataType::Float64, none, 0, nullptr);
  fesetround(rounding);
  BOOST_TEST(!towardZero, "rounding toward zero: the pair form must refuse");
#if defined(__x86_64__)
  const unsigned saved = _mm_getcsr();
  constexpr unsigned kFlushToZero = 0x8000, kDenormalsAreZero = 0x0040;
  for (unsigned mode : {kFlushToZero, kDenormalsAreZero}) {
    _mm_setcsr(saved | mode);
    const bool taken = exactSumOfTwo(DataType::Float32, none, 0, nullptr);
    const bool fused = exactSumVector(DataType::Float64, nullptr, 2, 0, nullptr);
    if (fused) {
      compareFusedSum<DataType::Float64>(2, false);
      compareFusedSum<DataType::Float32>(2, false);
    }
    _mm_setcsr(saved);
    BOOST_TEST(!taken, (mode == kFlushToZero ? "flush-to-zero" : "denormals-are-zero") << ": the pair form must refuse");
  }
#endif
}

BOOST_AUTO_TEST_CASE(vector_steps_give_the_scalar_bits, *boost::unit_test::precondition(hasVectorSteps)) {
  compareVectorSteps<DataType::Float64>();
  compareVectorSteps<DataType::Float32>();
  compareVectorSteps<DataType::Float16>();
  compareVectorSteps<DataType::BFloat16>();
}

BOOST_AUTO_TEST_SUITE_END()
