// The exact mode's per-element steps (exactKey, exactLimbs, exactRound,
// coll/exact_sum.h) eight elements at a time in AVX-512 registers, chosen at
// run time where the CPU has AVX-512 F, CD, VL, BW and DQ (else AVX2 for the
// limbs, coll/exact_avx2.cc, and the scalar steps).  Why: scalar, the two
// steps cost about 4 and 16 ns an element on this project's machines (the
// rounding's branches mispredict on real sums), several times the default
// allreduce's whole cost; vectored, about 2 each.  Why AVX-512 for the
// rounding: it needs each lane's leading-zero count (vplzcntq), arithmetic
// 64-bit shifts and unsigned compares, which AVX2 lacks.
//
// The limbs are exact_avx2.cc's lanes, eight wide, their interleaved stores
// done by permutes.  The rounding's lanes follow the scalar path's arithmetic in another form: the limb
// sums are carried into 42-bit digits (the top one signed), negated when
// the total is negative and carried again, so that the magnitude is digits
// d_k >= 0; its top bit h and the 64 bits below it (each digit shifted into
// place: the digits do not overlap) with a sticky bit for the rest are then
// rounded as exactRoundNormalized does for a normal result.  Lanes whose
// result is not a normal number (a zero, a subnormal, an overflow, an
// infinity or NaN) are redone by the scalar step: the same bits, rarely.
// tests/unit/test_exact_sum.cc compares the two on every class of input.
#include "coll/exact_simd.h"

#include "coll/exact_sum.h"

#if defined(__x86_64__) && !defined(__CUDACC__)
#include <immintrin.h>
#define CHORUS_EXACT_AVX512 1
// GCC 12 warns that its own intrinsics' "undefined" pass-through operands
// are or may be used uninitialized (they are not used: the masks are full).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace chorus {

#ifdef CHORUS_EXACT_AVX512
namespace {

#define CHORUS_AVX512_TARGET __attribute__((target("avx512f,avx512cd,avx512vl,avx512bw,avx512dq")))
// The per-lane helpers: inlined into their loops, or their vector arrays
// would pass through memory.
#define CHORUS_AVX512_INLINE CHORUS_AVX512_TARGET inline __attribute__((always_inline))

// Eight elements of `Bytes` bytes each, one a 64-bit lane.
template <int Bytes>
CHORUS_AVX512_INLINE __m512i loadBits(const unsigned char *p) {
  if constexpr (Bytes == 8) return _mm512_loadu_si512(p);
  else if constexpr (Bytes == 4) return _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
  else return _mm512_cvtepu16_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
}

// A vector stored at p, or added (as int64, wrapping) to what is there.
template <bool Accumulate>
CHORUS_AVX512_INLINE void put(int64_t *p, __m512i v) {
  if constexpr (Accumulate) v = _mm512_add_epi64(v, _mm512_loadu_si512(p));
  _mm512_storeu_si512(p, v);
}

// Eight elements' limbs, one vector per limb, stored (or added) interleaved
// (element j's limb k at p[L j + k]).
template <int L, bool Accumulate>
CHORUS_AVX512_INLINE void storeLimbs(int64_t *p, const __m512i *l) {
  if constexpr (L == 1) {
    put<Accumulate>(p, l[0]);
  } else if constexpr (L == 2) {
    put<Accumulate>(p, _mm512_permutex2var_epi64(l[0], _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), l[1]));
    put<Accumulate>(p + 8, _mm512_permutex2var_epi64(l[0], _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4), l[1]));
  } else {
    // Output lane t of vector v is position 8 v + t: element (8 v + t) / 3,
    // limb (8 v + t) % 3; limbs 0 and 1 by a two-source permute, limb 2's
    // lanes (the masks) from the third.
    const __m512i i0 = _mm512_set_epi64(10, 2, 1, 9, 1, 0, 8, 0);
    const __m512i i1 = _mm512_set_epi64(5, 4, 12, 4, 3, 11, 3, 2);
    const __m512i i2 = _mm512_set_epi64(7, 15, 7, 6, 14, 6, 5, 13);
    put<Accumulate>(p, _mm512_mask_permutexvar_epi64(_mm512_permutex2var_epi64(l[0], i0, l[1]), 0x24, i0, l[2]));
    put<Accumulate>(p + 8, _mm512_mask_permutexvar_epi64(_mm512_permutex2var_epi64(l[0], i1, l[1]), 0x49, i1, l[2]));
    put<Accumulate>(p + 16, _mm512_mask_permutexvar_epi64(_mm512_permutex2var_epi64(l[0], i2, l[1]), 0x92, i2, l[2]));
  }
}

// Limb sums s carried into L digits d: 42 bits each, the top one signed.
template <int L>
CHORUS_AVX512_INLINE void carryDigits(const __m512i *s, __m512i *d) {
  const __m512i digitMask = _mm512_set1_epi64((int64_t(1) << kExactLimbBits) - 1);
  __m512i c = _mm512_setzero_si512();
#pragma GCC unroll 3
  for (int k = 0; k < L; ++k) {
    const __m512i v = _mm512_add_epi64(s[k], c);
    if (k + 1 < L) {
      c = _mm512_srai_epi64(v, kExactLimbBits);
      d[k] = _mm512_and_si512(v, digitMask);
    } else {
      d[k] = v;
    }
  }
}

// The three steps on eight elements of type T in 64-bit lanes: the same
// arithmetic as exactKey, exactLimbs and exactRound (the header says how the
// rounding's lanes differ in form).
template <DataType T>
struct Lanes {
  static constexpr ExactFormat f = exactFormatOf(T);
  static constexpr int L = f.limbs;
  static constexpr int signShift = f.mantissaBits + f.exponentBits;
  static constexpr int64_t expMask = (int64_t(1) << f.exponentBits) - 1;

  // exactKey.
  CHORUS_AVX512_INLINE static __m512i key(__m512i bits) {
    const __m512i one = _mm512_set1_epi64(1);
    const __m512i exponent = _mm512_and_si512(_mm512_srli_epi64(bits, f.mantissaBits), _mm512_set1_epi64(expMask));
    const __mmask8 magnitudeZero = _mm512_testn_epi64_mask(bits, _mm512_set1_epi64(int64_t((uint64_t(1) << signShift) - 1)));
    const __mmask8 negativeZero = magnitudeZero & _mm512_test_epi64_mask(bits, _mm512_set1_epi64(int64_t(uint64_t(1) << signShift)));
    const __m512i doubled = _mm512_slli_epi64(_mm512_max_epi64(exponent, one), 1);
    return _mm512_mask_add_epi64(doubled, __mmask8(~negativeZero), doubled, one);
  }

  // exactLimbs, aligned to the key's exponent `top` (key >> 1).
  CHORUS_AVX512_INLINE static void limbs(__m512i bits, __m512i top, __m512i *limb) {
    constexpr int64_t windowLessPrecision = kExactLimbBits * L - (f.mantissaBits + 1);
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi64(1), ones = _mm512_set1_epi64(-1);
    const __m512i expMaskV = _mm512_set1_epi64(expMask);
    const __m512i exponent = _mm512_and_si512(_mm512_srli_epi64(bits, f.mantissaBits), expMaskV);
    const __m512i negative = _mm512_and_si512(_mm512_srli_epi64(bits, signShift), one);
    const __m512i fraction = _mm512_and_si512(bits, _mm512_set1_epi64((int64_t(1) << f.mantissaBits) - 1));
    const __mmask8 subnormal = _mm512_cmpeq_epi64_mask(exponent, zero);
    const __m512i effective = _mm512_mask_mov_epi64(exponent, subnormal, one);
    const __m512i m = _mm512_mask_or_epi64(fraction, __mmask8(~subnormal), fraction,
                                           _mm512_set1_epi64(int64_t(1) << f.mantissaBits));
    const __m512i shift = _mm512_add_epi64(_mm512_sub_epi64(_mm512_set1_epi64(windowLessPrecision), top), effective);
    // Contributions below the window (rare: more than its width below the
    // element's largest) are first rounded to its unit, nearest, ties to
    // even; the common case skips that arithmetic.
    __m512i scale = shift, rounded = m;
    if (_mm512_cmplt_epi64_mask(shift, zero)) {
      const __m512i drop = _mm512_max_epi64(_mm512_sub_epi64(zero, shift), zero);
      scale = _mm512_max_epi64(shift, zero);
      const __m512i q = _mm512_srlv_epi64(m, drop);
      const __m512i rest = _mm512_and_si512(m, _mm512_sub_epi64(_mm512_sllv_epi64(one, drop), one));
      const __m512i halfBit = _mm512_sllv_epi64(one, _mm512_sub_epi64(drop, one));  // 0 for drop 0 and above 64
      const __m512i half = _mm512_mask_mov_epi64(halfBit, _mm512_cmpeq_epi64_mask(halfBit, zero), ones);
      const __mmask8 up = _mm512_cmpgt_epu64_mask(rest, half) |
                          (_mm512_cmpeq_epu64_mask(rest, half) & _mm512_test_epi64_mask(q, one));
      rounded = _mm512_mask_add_epi64(q, up, q, one);
    }
    // Infinities and NaN (the element's key says so): a count in the first
    // limb, 21 bits a field; the common case skips that too.
    const __mmask8 special = _mm512_cmpeq_epi64_mask(top, expMaskV);
    __m512i count = zero;
    if (special) {
      const __m512i fieldShift = _mm512_mask_mov_epi64(
          _mm512_maskz_mov_epi64(_mm512_test_epi64_mask(negative, one), _mm512_set1_epi64(21)),
          _mm512_test_epi64_mask(fraction, fraction), _mm512_set1_epi64(42));
      count = _mm512_maskz_mov_epi64(_mm512_cmpeq_epi64_mask(exponent, expMaskV), _mm512_sllv_epi64(one, fieldShift));
    }
    const __m512i negMask = _mm512_sub_epi64(zero, negative);
    const __m512i digitMask = _mm512_set1_epi64((int64_t(1) << kExactLimbBits) - 1);
#pragma GCC unroll 3
    for (int k = 0; k < L; ++k) {
      const __m512i offset = _mm512_sub_epi64(scale, _mm512_set1_epi64(int64_t(kExactLimbBits) * k));
      const __m512i digit = _mm512_and_si512(
          _mm512_or_si512(_mm512_sllv_epi64(rounded, offset), _mm512_srlv_epi64(rounded, _mm512_sub_epi64(zero, offset))),
          digitMask);
      const __m512i signedDigit = _mm512_sub_epi64(_mm512_xor_si512(digit, negMask), negMask);
      limb[k] = k == 0 ? _mm512_mask_mov_epi64(signedDigit, special, count)
                       : _mm512_maskz_mov_epi64(__mmask8(~special), signedDigit);
    }
  }

  // exactRound of limb sums s (changed: used as scratch) with exponent
  // `top`, for a plain sum.  Lanes set in `scalar` are not a normal
  // result (a zero, a subnormal, an overflow, an infinity or NaN): the
  // caller redoes them with the scalar step.
  CHORUS_AVX512_INLINE static __m512i round(__m512i *s, __m512i top, __mmask8 *scalar) {
    constexpr int64_t bias = expMask >> 1;
    constexpr int precision = f.mantissaBits + 1;
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi64(1);
    __m512i d[L];
    // Carried into digits; the total is negative when the top digit is.
    carryDigits<L>(s, d);
    const __mmask8 negative = _mm512_cmplt_epi64_mask(d[L - 1], zero);
#pragma GCC unroll 3
    for (int k = 0; k < L; ++k) s[k] = _mm512_mask_sub_epi64(s[k], negative, zero, s[k]);
    carryDigits<L>(s, d);
    // The magnitude's top bit h (-1 for zero).
    __m512i h = _mm512_set1_epi64(-1);
#pragma GCC unroll 3
    for (int k = 0; k < L; ++k) {
      const __m512i bit = _mm512_sub_epi64(_mm512_set1_epi64(int64_t(kExactLimbBits) * k + 63), _mm512_lzcnt_epi64(d[k]));
      h = _mm512_mask_mov_epi64(h, _mm512_test_epi64_mask(d[k], d[k]), bit);
    }
    // The 64 bits from h down, and whether any bit is below them.
    __m512i mant = zero, below = zero;
#pragma GCC unroll 3
    for (int k = 0; k < L; ++k) {
      const __m512i offset = _mm512_sub_epi64(_mm512_set1_epi64(int64_t(kExactLimbBits) * k + 63), h);
      mant = _mm512_or_si512(mant, _mm512_or_si512(_mm512_sllv_epi64(d[k], offset),
                                                   _mm512_srlv_epi64(d[k], _mm512_sub_epi64(zero, offset))));
      const __m512i cut = _mm512_sub_epi64(zero, offset);  // d[k]'s bits below this one are below the 64
      const __m512i cutMask =
          _mm512_maskz_sub_epi64(_mm512_cmpgt_epi64_mask(cut, zero), _mm512_sllv_epi64(one, cut), one);
      below = _mm512_or_si512(below, _mm512_and_si512(d[k], cutMask));
    }
    const __mmask8 sticky = _mm512_test_epi64_mask(below, below);
    // A normal result: round the 64 bits to `precision`, nearest, ties to even.
    const __m512i exponent =
        _mm512_add_epi64(h, _mm512_sub_epi64(top, _mm512_set1_epi64(bias - 1 + int64_t(kExactLimbBits) * L)));
    constexpr int drop = 64 - precision;
    __m512i q = _mm512_srli_epi64(mant, drop);
    const __m512i rest = _mm512_and_si512(mant, _mm512_set1_epi64((int64_t(1) << drop) - 1));
    const __m512i half = _mm512_set1_epi64(int64_t(1) << (drop - 1));
    const __mmask8 up = _mm512_cmpgt_epu64_mask(rest, half) |
                        (_mm512_cmpeq_epu64_mask(rest, half) & (sticky | _mm512_test_epi64_mask(q, one)));
    q = _mm512_mask_add_epi64(q, up, q, one);
    const __mmask8 carried = _mm512_test_epi64_mask(q, _mm512_set1_epi64(int64_t(1) << precision));
    q = _mm512_mask_srli_epi64(q, carried, q, 1);
    const __m512i biased = _mm512_add_epi64(_mm512_mask_add_epi64(exponent, carried, exponent, one),
                                            _mm512_set1_epi64(bias));
    *scalar = _mm512_cmpeq_epi64_mask(top, _mm512_set1_epi64(expMask)) | _mm512_cmplt_epi64_mask(h, zero) |
              _mm512_cmplt_epi64_mask(exponent, _mm512_set1_epi64(1 - bias)) |
              _mm512_cmpge_epi64_mask(biased, _mm512_set1_epi64(expMask));
    return _mm512_or_si512(
        _mm512_or_si512(_mm512_maskz_mov_epi64(negative, _mm512_set1_epi64(int64_t(uint64_t(1) << signShift))),
                        _mm512_slli_epi64(biased, f.mantissaBits)),
        _mm512_and_si512(q, _mm512_set1_epi64((int64_t(1) << f.mantissaBits) - 1)));
  }

  // Eight results stored as elements of T.
  CHORUS_AVX512_INLINE static void store(unsigned char *o, __m512i bits) {
    if constexpr (f.bytes == 8) _mm512_storeu_si512(o, bits);
    else if constexpr (f.bytes == 4) _mm256_storeu_si256(reinterpret_cast<__m256i *>(o), _mm512_cvtepi64_epi32(bits));
    else _mm_storeu_si128(reinterpret_cast<__m128i *>(o), _mm512_cvtepi64_epi16(bits));
  }
};

CHORUS_AVX512_INLINE __m512i loadKeys(const uint16_t *keys) {
  return _mm512_cvtepu16_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i *>(keys)));
}

template <DataType T, bool Max>
CHORUS_AVX512_TARGET void keysAvx512(const unsigned char *in, size_t n, uint16_t *out) {
  constexpr ExactFormat f = exactFormatOf(T);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i packed = _mm512_cvtepi64_epi16(Lanes<T>::key(loadBits<f.bytes>(in + i * f.bytes)));
    if constexpr (Max) packed = _mm_max_epu16(packed, _mm_loadu_si128(reinterpret_cast<const __m128i *>(out + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out + i), packed);
  }
  for (; i < n; ++i) {
    const uint16_t k = exactKey(exactLoadBits(in + i * f.bytes, f.bytes), f);
    out[i] = Max && out[i] > k ? out[i] : k;
  }
}

template <DataType T, bool Accumulate>
CHORUS_AVX512_TARGET void limbsAvx512(const unsigned char *in, size_t n, const uint16_t *keys, int64_t *out) {
  constexpr ExactFormat f = exactFormatOf(T);
  constexpr int L = f.limbs;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m512i limb[L];
    Lanes<T>::limbs(loadBits<f.bytes>(in + i * f.bytes), _mm512_srli_epi64(loadKeys(keys + i), 1), limb);
    storeLimbs<L, Accumulate>(out + i * L, limb);
  }
  for (; i < n; ++i) exactLimbsInto<Accumulate>(exactLoadBits(in + i * f.bytes, f.bytes), keys[i], f, out + i * L);
}

// The whole sum of each element in registers: the contributions' keys'
// maximum, their limbs added, the rounding; nothing between the steps goes
// to memory (the element's n contributions are read twice, from cache).
template <DataType T>
CHORUS_AVX512_TARGET void sumAvx512(const unsigned char *const *vectors, int nranks, size_t n, unsigned char *out) {
  constexpr ExactFormat f = exactFormatOf(T);
  constexpr int L = f.limbs;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const size_t at = i * f.bytes;
    __m512i key = Lanes<T>::key(loadBits<f.bytes>(vectors[0] + at));
    for (int r = 1; r < nranks; ++r) key = _mm512_max_epu64(key, Lanes<T>::key(loadBits<f.bytes>(vectors[r] + at)));
    const __m512i top = _mm512_srli_epi64(key, 1);
    __m512i sum[L], limb[L];
    Lanes<T>::limbs(loadBits<f.bytes>(vectors[0] + at), top, sum);
    for (int r = 1; r < nranks; ++r) {
      Lanes<T>::limbs(loadBits<f.bytes>(vectors[r] + at), top, limb);
#pragma GCC unroll 3
      for (int k = 0; k < L; ++k) sum[k] = _mm512_add_epi64(sum[k], limb[k]);
    }
    alignas(64) int64_t kept[L][8];  // the sums, for lanes the scalar step redoes
#pragma GCC unroll 3
    for (int k = 0; k < L; ++k) _mm512_store_si512(kept[k], sum[k]);
    __mmask8 scalar;
    Lanes<T>::store(out + at, Lanes<T>::round(sum, top, &scalar));
    if (scalar) {
      alignas(64) int64_t keys[8];
      _mm512_store_si512(keys, key);
      for (unsigned lanes = scalar; lanes; lanes &= lanes - 1) {
        const int lane = __builtin_ctz(lanes);
        int64_t sums[kExactMaxLimbs];
        for (int k = 0; k < L; ++k) sums[k] = kept[k][lane];
        exactStoreBits(out + at + size_t(lane) * f.bytes, f.bytes, exactRound(sums, uint16_t(keys[lane]), 1, f));
      }
    }
  }
  for (; i < n; ++i) {
    const size_t at = i * f.bytes;
    uint16_t key = 0;
    for (int r = 0; r < nranks; ++r) {
      const uint16_t k = exactKey(exactLoadBits(vectors[r] + at, f.bytes), f);
      key = k > key ? k : key;
    }
    int64_t sums[kExactMaxLimbs] = {};
    for (int r = 0; r < nranks; ++r) exactLimbsInto<true>(exactLoadBits(vectors[r] + at, f.bytes), key, f, sums);
    exactStoreBits(out + at, f.bytes, exactRound(sums, key, 1, f));
  }
}

bool avx512Usable() {
  static const bool usable = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
                             __builtin_cpu_supports("avx512dq");
  return usable;
}

}  // namespace

template <bool Max>
bool keysAvx512Of(DataType type, const unsigned char *in, size_t n, uint16_t *out) {
  switch (type) {
    case DataType::Float64: keysAvx512<DataType::Float64, Max>(in, n, out); return true;
    case DataType::Float32: keysAvx512<DataType::Float32, Max>(in, n, out); return true;
    case DataType::Float16: keysAvx512<DataType::Float16, Max>(in, n, out); return true;
    case DataType::BFloat16: keysAvx512<DataType::BFloat16, Max>(in, n, out); return true;
    default: return false;
  }
}

bool exactKeysVector(DataType type, const unsigned char *in, size_t n, uint16_t *out, bool max) {
  if (!avx512Usable()) return false;
  return max ? keysAvx512Of<true>(type, in, n, out) : keysAvx512Of<false>(type, in, n, out);
}

template <bool Accumulate>
bool limbsAvx512Of(DataType type, const unsigned char *in, size_t n, const uint16_t *keys, int64_t *out) {
  switch (type) {
    case DataType::Float64: limbsAvx512<DataType::Float64, Accumulate>(in, n, keys, out); return true;
    case DataType::Float32: limbsAvx512<DataType::Float32, Accumulate>(in, n, keys, out); return true;
    case DataType::Float16: limbsAvx512<DataType::Float16, Accumulate>(in, n, keys, out); return true;
    case DataType::BFloat16: limbsAvx512<DataType::BFloat16, Accumulate>(in, n, keys, out); return true;
    default: return false;
  }
}

bool exactLimbsAvx512(DataType type, const unsigned char *in, size_t n, const uint16_t *keys, int64_t *out,
                      bool accumulate) {
  if (!avx512Usable()) return false;
  return accumulate ? limbsAvx512Of<true>(type, in, n, keys, out) : limbsAvx512Of<false>(type, in, n, keys, out);
}

bool exactSumVector(DataType type, const unsigned char *const *vectors, int nranks, size_t n, unsigned char *out) {
  if (!avx512Usable()) return false;
  switch (type) {
    case DataType::Float64: sumAvx512<DataType::Float64>(vectors, nranks, n, out); return true;
    case DataType::Float32: sumAvx512<DataType::Float32>(vectors, nranks, n, out); return true;
    case DataType::Float16: sumAvx512<DataType::Float16>(vectors, nranks, n, out); return true;
    case DataType::BFloat16: sumAvx512<DataType::BFloat16>(vectors, nranks, n, out); return true;
    default: return false;
  }
}

#else

bool exactKeysVector(DataType, const unsigned char *, size_t, uint16_t *, bool) { return false; }
bool exactLimbsAvx512(DataType, const unsigned char *, size_t, const uint16_t *, int64_t *, bool) { return false; }
bool exactSumVector(DataType, const unsigned char *const *, int, size_t, unsigned char *) { return false; }

#endif

}  // namespace chorus
