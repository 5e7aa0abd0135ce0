// Exact, order-independent sums of floating-point numbers
// (CHORUS_REPRODUCIBLE=exact, issue 30): the per-element arithmetic, the
// same source for the host executor and the CUDA kernels.
//
// Why a sum of floats depends on order: each addition rounds, and where it
// rounds depends on what was added before.  Integer addition does not round
// and is associative and commutative, also when it wraps modulo 2^64.  So
// each element is summed in three steps:
//
//   1. The element's largest exponent E is found (the maximum of a 16-bit
//      key per contribution, exactKey: the biased exponent, with
//      infinities and NaN at the top and one bit saying whether the element
//      saw anything but -0).
//   2. Each rank turns its contribution into a fixed-point integer whose unit
//      is 2^(E + 1 - W): W bits below the top of the largest contribution
//      (the window).  The integer is split into L = 42-bit digits, each
//      signed with the contribution's sign, one int64 limb per digit; the
//      limbs are summed as int64 by any algorithm (exactLimbs).  A limb of
//      n ranks is below n * 2^42 in magnitude: no overflow up to 2^21 - 1
//      ranks, and wraps in between cancel, so the limb sums are the same
//      bits whatever the order.
//   3. The limb sums give the exact sum of the (windowed) contributions as
//      one big integer, rounded once to nearest-even into the element type
//      (exactRound), subnormals and overflow as IEEE has them; MPIX_GPU_AVG
//      divides that integer by the rank count before the one rounding.
//
// Each result element is therefore a function of the multiset of its
// contributions only: not of the rank count (extra zeros change nothing),
// their order, the algorithm, the layout or the engine.  It is the exact
// sum rounded once, except that a contribution whose lowest mantissa bit
// lies below the window is first rounded to the window's unit (nearest,
// ties to even): an error of at most 2^(E - W) per such contribution.
// Windows, per type (p: precision in bits):
//   double    3 limbs, W = 126: exact for contributions within 2^-73 of the largest
//   float     2 limbs, W = 84:  within 2^-60
//   bfloat16  1 limb,  W = 42:  within 2^-34
//   half      1 limb,  W = 42:  every finite half (its range is 2^40 wide)
// Infinities and NaN: a NaN or both infinities give the quiet NaN
// (0x7ff8... and alike: one bit pattern, whatever the inputs' payloads),
// else the infinity; the sum of -0 alone is -0, an exact zero otherwise +0.
// Where the steps run (coll/exact_executor.cc): on the rank that owns the
// element's block, from the contributions themselves (an alltoall of the
// values, then an allgather of the results: the default allreduce's
// bytes), all three in registers (coll/exact_avx512.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/common.h"
#include "core/datatype.h"

namespace chorus {

constexpr int kExactLimbBits = 42;
// Headroom of a limb: a sum of this many 42-bit digits stays below 2^63,
// and three counts of this many fit one limb (the infinities and NaN).
constexpr int kExactMaxRanks = (1 << 21) - 1;
constexpr int kExactMaxLimbs = 3;

struct ExactFormat {
  int mantissaBits = 0;  // stored fraction bits
  int exponentBits = 0;
  int limbs = 0;         // 0: not a type of the exact mode
  int bytes = 0;
};

CHORUS_HOST_DEVICE constexpr ExactFormat exactFormatOf(DataType t) {
  switch (t) {
    case DataType::Float16: return {10, 5, 1, 2};
    case DataType::BFloat16: return {7, 8, 1, 2};
    case DataType::Float32: return {23, 8, 2, 4};
    case DataType::Float64: return {52, 11, 3, 8};
    default: return {};
  }
}

CHORUS_HOST_DEVICE inline uint64_t exactLoadBits(const void *p, int bytes) {
  switch (bytes) {
    case 2: return *static_cast<const uint16_t *>(p);
    case 4: return *static_cast<const uint32_t *>(p);
    default: return *static_cast<const uint64_t *>(p);
  }
}

CHORUS_HOST_DEVICE inline void exactStoreBits(void *p, int bytes, uint64_t bits) {
  switch (bytes) {
    case 2: *static_cast<uint16_t *>(p) = uint16_t(bits); break;
    case 4: *static_cast<uint32_t *>(p) = uint32_t(bits); break;
    default: *static_cast<uint64_t *>(p) = bits; break;
  }
}

// Step 1: the key whose maximum over the ranks the element's limbs are
// aligned to.  2 * (biased exponent, at least 1) + (anything but -0); the
// all-ones exponent (infinity, NaN) is the largest key.
CHORUS_HOST_DEVICE CHORUS_INLINE uint16_t exactKey(uint64_t bits, const ExactFormat &f) {
  const uint64_t expMask = (uint64_t(1) << f.exponentBits) - 1;
  const uint64_t exponent = (bits >> f.mantissaBits) & expMask;
  const uint64_t magnitude = bits & ((uint64_t(1) << (f.mantissaBits + f.exponentBits)) - 1);
  const bool negativeZero = magnitude == 0 && (bits >> (f.mantissaBits + f.exponentBits)) != 0;
  const uint64_t effective = exponent == 0 ? 1 : exponent;
  return uint16_t(2 * effective + (negativeZero ? 0 : 1));
}

// Shifts of a 64-bit word by any count: 0 once all bits are gone (C++ and
// the hardware leave counts of 64 and more undefined or modulo 64).
CHORUS_HOST_DEVICE CHORUS_INLINE uint64_t exactShiftLeft(uint64_t x, int64_t count) {
  return count >= 0 && count < 64 ? x << count : 0;
}
CHORUS_HOST_DEVICE CHORUS_INLINE uint64_t exactShiftRight(uint64_t x, int64_t count) {
  return count >= 0 && count < 64 ? x >> count : 0;
}

// Step 2: the contribution `bits` as `f.limbs` signed limbs, aligned to the
// element's agreed key.  Written without branches on the data (selects and
// 64-bit arithmetic only), so that a loop of it can run in vector registers.
CHORUS_HOST_DEVICE CHORUS_INLINE void exactLimbs(uint64_t bits, uint64_t key, const ExactFormat &f, int64_t *limbs) {
  const int64_t expMask = (int64_t(1) << f.exponentBits) - 1;
  const int64_t top = int64_t(key >> 1);
  const int64_t exponent = int64_t((bits >> f.mantissaBits) & uint64_t(expMask));
  const uint64_t negative = (bits >> (f.mantissaBits + f.exponentBits)) & 1;
  const uint64_t fraction = bits & ((uint64_t(1) << f.mantissaBits) - 1);
  const int64_t precision = f.mantissaBits + 1;
  const uint64_t m = fraction | (exponent != 0 ? uint64_t(1) << f.mantissaBits : 0);
  // The contribution is m * 2^shift units of the window.
  const int64_t shift = kExactLimbBits * f.limbs - precision - (top - (exponent == 0 ? 1 : exponent));
  // Below the window (shift < 0): m rounded to the unit, nearest, ties to even.
  const int64_t drop = shift < 0 ? -shift : 0;
  const uint64_t q = exactShiftRight(m, drop);
  const uint64_t rest = m & (exactShiftLeft(1, drop) - 1);  // every bit once drop >= 64
  const uint64_t half = drop == 0 || drop > 64 ? ~uint64_t(0) : exactShiftLeft(1, drop - 1);
  const uint64_t n = q + ((rest > half) | ((rest == half) & (q & 1)) ? 1 : 0);
  const int64_t scale = shift < 0 ? 0 : shift;
  const uint64_t digitMask = (uint64_t(1) << kExactLimbBits) - 1;
  // Infinities and NaN: counted, 21 bits each, in the first limb.
  const bool special = top == expMask;
  const int64_t field = fraction != 0 ? 2 : int64_t(negative);
  const int64_t count = exponent == expMask ? int64_t(exactShiftLeft(1, 21 * field)) : 0;
  for (int k = 0; k < f.limbs; ++k) {
    const int64_t offset = scale - kExactLimbBits * k;  // the digit's lowest bit, in n's bits shifted by `scale`
    const uint64_t digit = (exactShiftLeft(n, offset) | exactShiftRight(n, -offset)) & digitMask;
    const int64_t signedDigit = int64_t((digit ^ (0 - negative)) + negative);
    limbs[k] = special ? (k == 0 ? count : 0) : signedDigit;
  }
}

// exactLimbs stored at `limbs`, or added to what is there (as int64,
// wrapping, as every sum of limbs is).
template <bool Accumulate>
CHORUS_HOST_DEVICE CHORUS_INLINE void exactLimbsInto(uint64_t bits, uint64_t key, const ExactFormat &f, int64_t *limbs) {
  if (!Accumulate) return exactLimbs(bits, key, f, limbs);
  int64_t mine[kExactMaxLimbs];
  exactLimbs(bits, key, f, mine);
  for (int k = 0; k < f.limbs; ++k) limbs[k] = int64_t(uint64_t(limbs[k]) + uint64_t(mine[k]));
}

CHORUS_HOST_DEVICE inline int exactLeadingZeros(uint64_t x) {
#ifdef __CUDA_ARCH__
  return __clzll(static_cast<long long>(x));
#else
  return __builtin_clzll(x);
#endif
}

// A 320-bit two's-complement integer: the sum of the limbs, shifted left by
// 64 bits when divided (AVG).
struct ExactWide {
  static constexpr int kWords = 5;
  uint64_t w[kWords];

  // The limb sums' total, sum_k sums[k] * 2^(42 k) for up to three limbs,
  // as its magnitude; returns whether it is negative.  |total| < 2^148.
  CHORUS_HOST_DEVICE CHORUS_INLINE bool setMagnitude(const int64_t *sums, int limbs) {
    // As a 192-bit two's-complement number (hi, lo), without branches on
    // the data: the sign of a sum is as unpredictable as its digits.
    __int128 low = sums[0];
    if (limbs > 1) low += __int128(sums[1]) * (__int128(1) << kExactLimbBits);  // |low| < 2^106
    unsigned __int128 lo = static_cast<unsigned __int128>(low);
    int64_t hi = int64_t(low >> 64) >> 63;  // low's sign, extended
    if (limbs > 2) {
      const int64_t s2 = sums[2];
      const unsigned __int128 add = static_cast<unsigned __int128>(static_cast<__int128>(s2)) << (2 * kExactLimbBits);
      const unsigned __int128 sum = lo + add;
      hi += (s2 >> (128 - 2 * kExactLimbBits)) + int64_t(sum < lo);
      lo = sum;
    }
    const uint64_t negative = uint64_t(hi) >> 63;
    const uint64_t mask = 0 - negative;
    const unsigned __int128 wideMask = (static_cast<unsigned __int128>(mask) << 64) | mask;
    lo = (lo ^ wideMask) + negative;
    hi = int64_t((uint64_t(hi) ^ mask) + (negative & uint64_t(lo == 0)));
    w[0] = uint64_t(lo);
    w[1] = uint64_t(lo >> 64);
    w[2] = uint64_t(hi);
    w[3] = w[4] = 0;
    return negative != 0;
  }
  // Divide (non-negative) by d; returns whether a remainder was left.
  CHORUS_HOST_DEVICE bool divide(uint64_t d) {
    unsigned __int128 rest = 0;
    for (int i = kWords - 1; i >= 0; --i) {
      const unsigned __int128 cur = (rest << 64) | w[i];
      w[i] = uint64_t(cur / d);
      rest = cur % d;
    }
    return rest != 0;
  }
  CHORUS_HOST_DEVICE CHORUS_INLINE int topBit() const {
    for (int i = kWords - 1; i >= 0; --i)
      if (w[i]) return 64 * i + 63 - exactLeadingZeros(w[i]);
    return -1;
  }
  CHORUS_HOST_DEVICE bool anyBelow(int pos) const {
    for (int i = 0; i < kWords && 64 * i < pos; ++i) {
      const int n = pos - 64 * i;
      const uint64_t mask = n >= 64 ? ~uint64_t(0) : ((uint64_t(1) << n) - 1);
      if (w[i] & mask) return true;
    }
    return false;
  }
};

// The rounding itself: the value mant * 2^(e - 63), plus something below
// it when `sticky`, with mant's top bit set (e: the exponent of that bit),
// rounded once to nearest-even into the format, subnormals and overflow
// included.
CHORUS_HOST_DEVICE CHORUS_INLINE uint64_t exactRoundNormalized(uint64_t mant, bool sticky, int e, uint64_t sign,
                                                        const ExactFormat &f) {
  const int precision = f.mantissaBits + 1;
  const int expMask = (1 << f.exponentBits) - 1;
  const int bias = expMask >> 1;
  const int minExponent = 1 - bias;
  // Bits kept: p for a normal result, fewer down to the smallest subnormal.
  const int keep = e >= minExponent ? precision : precision - (minExponent - e);
  if (keep <= 0) {
    // At most half the smallest subnormal: 0, or that subnormal when above half.
    if (keep < 0) return sign;
    return sign | ((mant > (uint64_t(1) << 63) || sticky) ? 1 : 0);
  }
  const int drop = 64 - keep;  // >= 11
  uint64_t q = mant >> drop;
  const uint64_t rest = mant & ((uint64_t(1) << drop) - 1), half = uint64_t(1) << (drop - 1);
  if (rest > half || (rest == half && (sticky || (q & 1)))) ++q;
  if (keep < precision) return sign | q;  // subnormal, or carried into the smallest normal: the same bits
  int top = e;
  if (q >> precision) {  // rounding carried into a new top bit
    q >>= 1;
    ++top;
  }
  const int biased = top + bias;
  if (biased >= expMask) return sign | (uint64_t(expMask) << f.mantissaBits);
  return sign | (uint64_t(biased) << f.mantissaBits) | (q & ((uint64_t(1) << f.mantissaBits) - 1));
}

// Step 3 for a plain sum (no divisor): the limb sums' total as at most 192
// bits, its top 64 bits found from the highest non-zero word.  The same
// bits as exactRound's general path, without its 320-bit loops.
CHORUS_HOST_DEVICE CHORUS_INLINE uint64_t exactRoundSum(const int64_t *sums, int unit, uint16_t key, uint64_t signBit,
                                                 const ExactFormat &f) {
  ExactWide t;
  const bool negative = t.setMagnitude(sums, f.limbs);
  const uint64_t sign = negative ? signBit : 0;
  const uint64_t hi = t.w[2], mid = t.w[1], lo = t.w[0];
  uint64_t mant;
  bool sticky;
  int h;
  if (hi != 0) {
    const int s = exactLeadingZeros(hi);
    mant = s ? (hi << s) | (mid >> (64 - s)) : hi;
    sticky = (mid << s) != 0 || lo != 0;
    h = 191 - s;
  } else if (mid != 0) {
    const int s = exactLeadingZeros(mid);
    mant = s ? (mid << s) | (lo >> (64 - s)) : mid;
    sticky = (lo << s) != 0;
    h = 127 - s;
  } else if (lo != 0) {
    const int s = exactLeadingZeros(lo);
    mant = lo << s;
    sticky = false;
    h = 63 - s;
  } else {
    return (key & 1) ? sign : signBit;  // an exact zero: -0 only when every contribution was -0
  }
  return exactRoundNormalized(mant, sticky, h + unit, sign, f);
}

// Step 3: the element's result bits from its limb sums and agreed key,
// divided by `divisor` (1, or the rank count for MPIX_GPU_AVG), rounded once.
CHORUS_HOST_DEVICE CHORUS_INLINE uint64_t exactRound(const int64_t *sums, uint16_t key, uint64_t divisor,
                                              const ExactFormat &f) {
  const int expMask = (1 << f.exponentBits) - 1;
  const int bias = expMask >> 1;
  const int signShift = f.mantissaBits + f.exponentBits;
  const int top = key >> 1;
  if (top == expMask) {
    const uint64_t field = (uint64_t(1) << 21) - 1;
    const uint64_t counts = uint64_t(sums[0]);
    const bool nan = ((counts >> 42) & field) != 0, plus = (counts & field) != 0, minus = ((counts >> 21) & field) != 0;
    const uint64_t infinity = uint64_t(expMask) << f.mantissaBits;
    if (nan || (plus && minus)) return infinity | (uint64_t(1) << (f.mantissaBits - 1));
    return minus ? infinity | (uint64_t(1) << signShift) : infinity;
  }
  // The value is the limbs' total times 2^unit.
  int unit = top - bias + 1 - kExactLimbBits * f.limbs;
  if (divisor <= 1) return exactRoundSum(sums, unit, key, uint64_t(1) << signShift, f);
  ExactWide t;
  const bool negative = t.setMagnitude(sums, f.limbs);
  const uint64_t sign = negative ? uint64_t(1) << signShift : 0;
  bool sticky = false;
  if (divisor > 1) {
    for (int i = ExactWide::kWords - 1; i > 0; --i) t.w[i] = t.w[i - 1];
    t.w[0] = 0;
    unit -= 64;
    sticky = t.divide(divisor);
  }
  const int h = t.topBit();
  if (h < 0) return (key & 1) ? sign : uint64_t(1) << signShift;  // an exact zero (AVG's quotient is never 0 alone)
  // The top 64 bits from bit h down, and whether anything is below them.
  uint64_t mant;
  if (h >= 63) {
    const int low = h - 63, word = low / 64, shift = low % 64;
    mant = t.w[word] >> shift;
    if (shift && word + 1 < ExactWide::kWords) mant |= t.w[word + 1] << (64 - shift);
    sticky = sticky || t.anyBelow(low);
  } else {
    mant = t.w[0] << (63 - h);
  }
  return exactRoundNormalized(mant, sticky, h + unit, sign, f);
}

// The three steps for one element at byte offset `at` of every one of
// `nranks` contributions (vectors[r] + at), in a local sum: the reference
// the fused and paired forms are held to, and what they fall back on for
// the lanes they leave (results that are not normal numbers).
CHORUS_HOST_DEVICE inline uint64_t exactSumElement(const unsigned char *const *vectors, int nranks, size_t at,
                                                   const ExactFormat &f) {
  uint16_t key = 0;
  for (int r = 0; r < nranks; ++r) {
    const uint16_t k = exactKey(exactLoadBits(vectors[r] + at, f.bytes), f);
    key = k > key ? k : key;
  }
  int64_t sums[kExactMaxLimbs] = {};
  for (int r = 0; r < nranks; ++r) exactLimbsInto<true>(exactLoadBits(vectors[r] + at, f.bytes), key, f, sums);
  return exactRound(sums, key, 1, f);
}

}  // namespace chorus
