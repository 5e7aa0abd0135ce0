// Reference model of the low-precision formats for the unit tests, written
// independently of src/coll/lowp.h: values come from ldexp of the fields,
// and rounding picks the nearest entry of a table of every representable
// value (ties to the even encoding), in double precision.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "coll/lowp.h"

namespace chorus_test {

// Field layout of each format, stated once from the specifications.
template <typename T> struct Fmt;
template <> struct Fmt<chorus::Half> { static constexpr int E = 5, M = 10; static constexpr bool kIeee = true; };
template <> struct Fmt<chorus::BFloat16> { static constexpr int E = 8, M = 7; static constexpr bool kIeee = true; };
template <> struct Fmt<chorus::Fp8E4M3> { static constexpr int E = 4, M = 3; static constexpr bool kIeee = false; };
template <> struct Fmt<chorus::Fp8E5M2> { static constexpr int E = 5, M = 2; static constexpr bool kIeee = true; };

template <typename T>
constexpr uint32_t numPatterns() { return 1u << (1 + Fmt<T>::E + Fmt<T>::M); }

template <typename T>
constexpr uint32_t signBit() { return 1u << (Fmt<T>::E + Fmt<T>::M); }

template <typename T>
T fromBits(uint32_t bits) {
  T v;
  v.bits = static_cast<decltype(v.bits)>(bits);
  return v;
}

template <typename T>
bool isNanBits(uint32_t v) {
  const int E = Fmt<T>::E, M = Fmt<T>::M;
  uint32_t expField = (v >> M) & ((1u << E) - 1);
  uint32_t mant = v & ((1u << M) - 1);
  bool expAllOnes = expField == (1u << E) - 1;
  if (Fmt<T>::kIeee) return expAllOnes && mant != 0;
  return expAllOnes && mant == (1u << M) - 1;
}

template <typename T>
bool isInfBits(uint32_t v) {
  const int E = Fmt<T>::E, M = Fmt<T>::M;
  return Fmt<T>::kIeee && (v & (signBit<T>() - 1)) == ((1u << E) - 1) << M;
}

// Value of an encoding: (-1)^s * 2^(e - bias) * 1.m, or 2^(1 - bias) * 0.m.
template <typename T>
double refToDouble(uint32_t v) {
  const int E = Fmt<T>::E, M = Fmt<T>::M;
  const int bias = (1 << (E - 1)) - 1;
  if (isNanBits<T>(v)) return std::nan("");
  bool negative = (v & signBit<T>()) != 0;
  if (isInfBits<T>(v)) return negative ? -HUGE_VAL : HUGE_VAL;
  int expField = int((v >> M) & ((1u << E) - 1));
  int mant = int(v & ((1u << M) - 1));
  double mag = expField == 0 ? std::ldexp(double(mant), 1 - bias - M)
                             : std::ldexp(double(mant + (1 << M)), expField - bias - M);
  return negative ? -mag : mag;
}

// Every finite non-negative value of T, ascending, with its encoding.
template <typename T>
struct ValueTable {
  std::vector<double> values;
  std::vector<uint32_t> codes;
  ValueTable() {
    for (uint32_t v = 0; v < signBit<T>(); ++v) {  // positive encodings ascend with value
      if (isNanBits<T>(v) || isInfBits<T>(v)) continue;
      values.push_back(refToDouble<T>(v));
      codes.push_back(v);
    }
  }
  static const ValueTable &get() {
    static const ValueTable table;
    return table;
  }
};

// Encoding of the representable value nearest to x, ties to the even
// encoding.  Overflow: inf for IEEE-like formats (at or beyond max + ulp/2,
// the tie going to inf, the even neighbour), 448 for E4M3 (satfinite).
// NaN in -> the caller checks isNanBits on the result.
template <typename T>
uint32_t roundRef(double x) {
  const int E = Fmt<T>::E, M = Fmt<T>::M;
  const ValueTable<T> &t = ValueTable<T>::get();
  if (std::isnan(x)) return Fmt<T>::kIeee ? ((1u << E) - 1) << M | 1u : (1u << (E + M)) - 1;
  uint32_t sign = std::signbit(x) ? signBit<T>() : 0u;
  double a = std::fabs(x);
  size_t n = t.values.size();
  double maxValue = t.values[n - 1];
  if (a > maxValue) {
    if (!Fmt<T>::kIeee) return sign | t.codes[n - 1];
    double ulp = maxValue - t.values[n - 2];
    return sign | (a >= maxValue + ulp / 2 ? ((1u << E) - 1) << M : t.codes[n - 1]);
  }
  size_t lo = size_t(std::upper_bound(t.values.begin(), t.values.end(), a) - t.values.begin()) - 1;
  if (t.values[lo] == a) return sign | t.codes[lo];
  size_t hi = lo + 1;
  double dLo = a - t.values[lo], dHi = t.values[hi] - a;  // exact (Sterbenz)
  if (dLo < dHi) return sign | t.codes[lo];
  if (dHi < dLo) return sign | t.codes[hi];
  return sign | ((t.codes[lo] & 1u) == 0 ? t.codes[lo] : t.codes[hi]);
}

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float floatFromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Identical floating values, telling -0 from +0; any NaN matches any NaN.
template <typename F>
bool sameFloating(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace chorus_test
