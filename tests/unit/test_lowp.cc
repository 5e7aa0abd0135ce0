// Conversions of the low-precision types (src/coll/lowp.h), checked against
// the independent model of tests/unit/lowp_ref.h and against values stated
// from the format specifications.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <tuple>
#include <type_traits>

#include "coll/lowp.h"
#include "lowp_ref.h"

using chorus::BFloat16;
using chorus::Fp8E4M3;
using chorus::Fp8E5M2;
using chorus::Half;
using chorus::fromFloat;
using chorus::toFloat;
using namespace chorus_test;

namespace {

using LowpTypes = std::tuple<Half, BFloat16, Fp8E4M3, Fp8E5M2>;

static_assert(std::is_trivially_copyable<Half>::value && std::is_standard_layout<Half>::value, "POD");
static_assert(std::is_trivially_copyable<BFloat16>::value, "POD");
static_assert(std::is_trivially_copyable<Fp8E4M3>::value, "POD");
static_assert(std::is_trivially_copyable<Fp8E5M2>::value, "POD");

template <typename T>
uint32_t bitsOf(float f) {
  return fromFloat<T>(f).bits;
}

template <typename T>
float valueOf(uint32_t bits) {
  return toFloat(fromBits<T>(bits));
}

// Counts mismatches of fromFloat against roundRef, reporting the first few.
template <typename T>
struct RoundChecker {
  long checked = 0, failures = 0;
  void check(float f) {
    ++checked;
    uint32_t got = bitsOf<T>(f);
    uint32_t want = roundRef<T>(double(f));
    bool ok = std::isnan(f) ? isNanBits<T>(got) : got == want;
    if (!ok && ++failures <= 5)
      BOOST_ERROR("fromFloat(" << std::hexfloat << f << ") = 0x" << std::hex << got << ", expected 0x" << want);
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(lowp)

BOOST_AUTO_TEST_CASE(sizes) {
  BOOST_TEST(sizeof(Half) == 2u);
  BOOST_TEST(sizeof(BFloat16) == 2u);
  BOOST_TEST(sizeof(Fp8E4M3) == 1u);
  BOOST_TEST(sizeof(Fp8E5M2) == 1u);
}

// toFloat against the ldexp model over every bit pattern.
BOOST_AUTO_TEST_CASE_TEMPLATE(to_float_matches_reference_exhaustively, T, LowpTypes) {
  long failures = 0;
  for (uint32_t v = 0; v < numPatterns<T>(); ++v) {
    float got = valueOf<T>(v);
    double want = refToDouble<T>(v);
    bool ok = std::isnan(want) ? std::isnan(got)
                               : double(got) == want && std::signbit(got) == std::signbit(want);
    if (!ok && ++failures <= 5) BOOST_ERROR("toFloat(0x" << std::hex << v << ") = " << got << ", expected " << want);
  }
  BOOST_TEST(failures == 0);
}

// fromFloat(toFloat(x)) == x for every non-NaN pattern; NaNs stay NaN with their sign.
BOOST_AUTO_TEST_CASE_TEMPLATE(round_trip_exhaustive, T, LowpTypes) {
  long failures = 0, nans = 0;
  for (uint32_t v = 0; v < numPatterns<T>(); ++v) {
    uint32_t back = bitsOf<T>(valueOf<T>(v));
    bool ok;
    if (isNanBits<T>(v)) {
      ++nans;
      ok = isNanBits<T>(back) && (back & signBit<T>()) == (v & signBit<T>());
    } else {
      ok = back == v;
    }
    if (!ok && ++failures <= 5) BOOST_ERROR("0x" << std::hex << v << " came back as 0x" << back);
  }
  BOOST_TEST(failures == 0);
  BOOST_TEST(nans > 0);
}

BOOST_AUTO_TEST_CASE(known_values_half) {
  BOOST_TEST(bitsOf<Half>(1.0f) == 0x3C00u);
  BOOST_TEST(bitsOf<Half>(-2.0f) == 0xC000u);
  BOOST_TEST(bitsOf<Half>(0.5f) == 0x3800u);
  BOOST_TEST(bitsOf<Half>(65504.0f) == 0x7BFFu);                 // max finite
  BOOST_TEST(bitsOf<Half>(std::ldexp(1.0f, -14)) == 0x0400u);   // min normal
  BOOST_TEST(bitsOf<Half>(std::ldexp(1.0f, -24)) == 0x0001u);   // min subnormal
  BOOST_TEST(bitsOf<Half>(-0.0f) == 0x8000u);
  BOOST_TEST(valueOf<Half>(0x3C00) == 1.0f);
  BOOST_TEST(valueOf<Half>(0x7BFF) == 65504.0f);
  BOOST_TEST(valueOf<Half>(0x0001) == std::ldexp(1.0f, -24));
  BOOST_TEST(valueOf<Half>(0x3555) == 0x1.554p-2f);              // ~1/3
  BOOST_TEST(std::isinf(valueOf<Half>(0x7C00)));
  BOOST_TEST(std::isnan(valueOf<Half>(0x7E00)));
}

BOOST_AUTO_TEST_CASE(known_values_bfloat16) {
  BOOST_TEST(bitsOf<BFloat16>(1.0f) == 0x3F80u);
  BOOST_TEST(bitsOf<BFloat16>(-2.0f) == 0xC000u);
  BOOST_TEST(bitsOf<BFloat16>(0x1.FEp127f) == 0x7F7Fu);          // max finite
  BOOST_TEST(bitsOf<BFloat16>(std::ldexp(1.0f, -133)) == 0x0001u);  // min subnormal
  BOOST_TEST(valueOf<BFloat16>(0x7F7F) == 0x1.FEp127f);
  BOOST_TEST(valueOf<BFloat16>(0x0001) == std::ldexp(1.0f, -133));
  BOOST_TEST(std::isinf(valueOf<BFloat16>(0xFF80)));
}

BOOST_AUTO_TEST_CASE(known_values_fp8) {
  // E4M3: bias 7, max 1.75 * 2^8 = 448 (S.1111.110), min subnormal 2^-9.
  BOOST_TEST(bitsOf<Fp8E4M3>(1.0f) == 0x38u);
  BOOST_TEST(bitsOf<Fp8E4M3>(-2.0f) == 0xC0u);
  BOOST_TEST(bitsOf<Fp8E4M3>(448.0f) == 0x7Eu);
  BOOST_TEST(bitsOf<Fp8E4M3>(-448.0f) == 0xFEu);
  BOOST_TEST(bitsOf<Fp8E4M3>(std::ldexp(1.0f, -9)) == 0x01u);
  BOOST_TEST(valueOf<Fp8E4M3>(0x7E) == 448.0f);
  BOOST_TEST(valueOf<Fp8E4M3>(0x78) == 256.0f);  // exponent field 15 is an ordinary binade
  BOOST_TEST(std::isnan(valueOf<Fp8E4M3>(0x7F)));
  BOOST_TEST(std::isnan(valueOf<Fp8E4M3>(0xFF)));
  // E5M2: bias 15, max 1.75 * 2^15 = 57344, min subnormal 2^-16, inf 0x7C.
  BOOST_TEST(bitsOf<Fp8E5M2>(1.0f) == 0x3Cu);
  BOOST_TEST(bitsOf<Fp8E5M2>(-2.0f) == 0xC0u);
  BOOST_TEST(bitsOf<Fp8E5M2>(57344.0f) == 0x7Bu);
  BOOST_TEST(bitsOf<Fp8E5M2>(std::ldexp(1.0f, -16)) == 0x01u);
  BOOST_TEST(valueOf<Fp8E5M2>(0x7B) == 57344.0f);
  BOOST_TEST(std::isinf(valueOf<Fp8E5M2>(0x7C)));
  BOOST_TEST(std::isnan(valueOf<Fp8E5M2>(0x7D)));
}

// Explicit ties, from first principles.
BOOST_AUTO_TEST_CASE(ties_to_even_examples) {
  // Half near 1: ulp 2^-10.  1 + 2^-11 is halfway between 0x3C00 (even) and 0x3C01.
  BOOST_TEST(bitsOf<Half>(1.0f + std::ldexp(1.0f, -11)) == 0x3C00u);
  // 1 + 3 * 2^-11 is halfway between 0x3C01 and 0x3C02 (even).
  BOOST_TEST(bitsOf<Half>(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02u);
  // Just above a tie goes up.
  BOOST_TEST(bitsOf<Half>(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)) == 0x3C01u);
  // Subnormal ties: 2^-25 is halfway between 0 and 2^-24 -> 0; 3 * 2^-25 -> 2 * 2^-24.
  BOOST_TEST(bitsOf<Half>(std::ldexp(1.0f, -25)) == 0x0000u);
  BOOST_TEST(bitsOf<Half>(-std::ldexp(1.0f, -25)) == 0x8000u);
  BOOST_TEST(bitsOf<Half>(3 * std::ldexp(1.0f, -25)) == 0x0002u);
  // Carry from the largest subnormal into the smallest normal.
  BOOST_TEST(bitsOf<Half>(std::ldexp(1023.75f, -24)) == 0x0400u);
  // BFloat16: 1 + 2^-8 is halfway between 0x3F80 (even) and 0x3F81.
  BOOST_TEST(bitsOf<BFloat16>(1.0f + std::ldexp(1.0f, -8)) == 0x3F80u);
  BOOST_TEST(bitsOf<BFloat16>(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3F82u);
  // E4M3 near 1: ulp 1/8; 1 + 1/16 -> 1 (0x38); 1 + 3/16 -> 1.25 (0x3A).
  BOOST_TEST(bitsOf<Fp8E4M3>(1.0625f) == 0x38u);
  BOOST_TEST(bitsOf<Fp8E4M3>(1.1875f) == 0x3Au);
  // E5M2 near 1: ulp 1/4; 1.125 -> 1 (0x3C); 1.375 -> 1.5 (0x3E).
  BOOST_TEST(bitsOf<Fp8E5M2>(1.125f) == 0x3Cu);
  BOOST_TEST(bitsOf<Fp8E5M2>(1.375f) == 0x3Eu);
}

// Every midpoint between adjacent finite values (of both signs): the tie
// goes to the even encoding, one float step either side to the nearer one.
BOOST_AUTO_TEST_CASE_TEMPLATE(ties_to_even_exhaustive, T, LowpTypes) {
  const ValueTable<T> &t = ValueTable<T>::get();
  long failures = 0, ties = 0;
  for (size_t i = 0; i + 1 < t.values.size(); ++i) {
    double lo = t.values[i], hi = t.values[i + 1];
    uint32_t even = (t.codes[i] & 1u) == 0 ? t.codes[i] : t.codes[i + 1];
    float mid = float((lo + hi) / 2);  // a midpoint needs M + 2 bits: exact in float
    if (double(mid) != (lo + hi) / 2) BOOST_FAIL("midpoint not exact in float");
    for (int s = 0; s < 2; ++s) {
      float sign = s ? -1.0f : 1.0f;
      uint32_t signBits = s ? signBit<T>() : 0u;
      ++ties;
      bool ok = bitsOf<T>(sign * mid) == (signBits | even) &&
                bitsOf<T>(sign * std::nextafter(mid, float(hi))) == (signBits | t.codes[i + 1]) &&
                bitsOf<T>(sign * std::nextafter(mid, float(lo))) == (signBits | t.codes[i]);
      if (!ok && ++failures <= 5) BOOST_ERROR("tie between 0x" << std::hex << t.codes[i] << " and 0x" << t.codes[i + 1]);
    }
  }
  BOOST_TEST(failures == 0);
  BOOST_TEST(ties == 2 * long(t.values.size() - 1));
}

BOOST_AUTO_TEST_CASE(overflow_ieee_like_goes_to_inf) {
  const float inf = std::numeric_limits<float>::infinity();
  // Half: max 65504, ulp there 32; 65520 is the tie to "65536" = inf (even).
  BOOST_TEST(bitsOf<Half>(65519.0f) == 0x7BFFu);
  BOOST_TEST(bitsOf<Half>(65520.0f) == 0x7C00u);
  BOOST_TEST(bitsOf<Half>(-1e6f) == 0xFC00u);
  BOOST_TEST(bitsOf<Half>(inf) == 0x7C00u);
  BOOST_TEST(bitsOf<Half>(-inf) == 0xFC00u);
  // BFloat16: max 0x1.FEp127, ulp 2^120; the tie is 0x1.FFp127.
  BOOST_TEST(bitsOf<BFloat16>(std::nextafter(0x1.FFp127f, 0.0f)) == 0x7F7Fu);
  BOOST_TEST(bitsOf<BFloat16>(0x1.FFp127f) == 0x7F80u);
  BOOST_TEST(bitsOf<BFloat16>(std::numeric_limits<float>::max()) == 0x7F80u);
  BOOST_TEST(bitsOf<BFloat16>(-inf) == 0xFF80u);
  // E5M2: max 57344, ulp 8192; 61440 is the tie -> inf.
  BOOST_TEST(bitsOf<Fp8E5M2>(61439.0f) == 0x7Bu);
  BOOST_TEST(bitsOf<Fp8E5M2>(61440.0f) == 0x7Cu);
  BOOST_TEST(bitsOf<Fp8E5M2>(-1e9f) == 0xFCu);
  BOOST_TEST(bitsOf<Fp8E5M2>(inf) == 0x7Cu);
}

BOOST_AUTO_TEST_CASE(overflow_e4m3_saturates) {
  const float inf = std::numeric_limits<float>::infinity();
  BOOST_TEST(bitsOf<Fp8E4M3>(449.0f) == 0x7Eu);
  BOOST_TEST(bitsOf<Fp8E4M3>(464.0f) == 0x7Eu);  // would-be tie with 480
  BOOST_TEST(bitsOf<Fp8E4M3>(500.0f) == 0x7Eu);
  BOOST_TEST(bitsOf<Fp8E4M3>(-1e30f) == 0xFEu);
  BOOST_TEST(bitsOf<Fp8E4M3>(inf) == 0x7Eu);
  BOOST_TEST(bitsOf<Fp8E4M3>(-inf) == 0xFEu);
  BOOST_TEST(bitsOf<Fp8E4M3>(std::numeric_limits<float>::quiet_NaN()) == 0x7Fu);
  BOOST_TEST(bitsOf<Fp8E4M3>(-std::numeric_limits<float>::quiet_NaN()) == 0xFFu);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(nan_stays_nan, T, LowpTypes) {
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  const float snan = std::numeric_limits<float>::signaling_NaN();
  for (float f : {qnan, -qnan, snan, floatFromBits(0x7F800001u), floatFromBits(0xFFFFFFFFu)}) {
    uint32_t got = bitsOf<T>(f);
    BOOST_TEST(isNanBits<T>(got), "0x" << std::hex << floatBits(f) << " -> 0x" << got);
    BOOST_TEST(((got & signBit<T>()) != 0) == std::signbit(f));
  }
}

// fromFloat against roundRef on random floats: raw 32-bit patterns (every
// exponent, NaNs and infinities included) and values spread over the
// format's own range, where the interesting rounding happens.
BOOST_AUTO_TEST_CASE_TEMPLATE(from_float_matches_reference_random, T, LowpTypes) {
  const ValueTable<T> &t = ValueTable<T>::get();
  std::mt19937 rng(12345);
  RoundChecker<T> checker;
  for (int i = 0; i < 300000; ++i) checker.check(floatFromBits(uint32_t(rng())));
  int minExp = std::ilogb(t.values[1]) - 3, maxExp = std::ilogb(t.values.back()) + 3;
  std::uniform_int_distribution<int> exps(minExp, maxExp);
  std::uniform_real_distribution<float> frac(1.0f, 2.0f);
  for (int i = 0; i < 300000; ++i) {
    float f = std::ldexp(frac(rng), exps(rng));
    checker.check((rng() & 1u) ? -f : f);
  }
  BOOST_TEST_MESSAGE(checker.checked << " random floats checked");
  BOOST_TEST(checker.failures == 0);
}

BOOST_AUTO_TEST_SUITE_END()
