// The exact mode's per-element work (coll/exact_sum.h) eight elements at a
// time in AVX-512 registers, chosen at run time where the CPU has AVX-512 F,
// CD, VL, BW and DQ (else AVX2 for the limbs, coll/exact_avx2.cc, and the
// scalar steps).  Why: scalar, the steps cost about 4 (key and limbs) and 16
// (rounding) ns an element on this project's machines (the rounding's
// branches mispredict on real sums), several times the default allreduce's
// whole cost.  Why AVX-512: the rounding needs each lane's leading-zero
// count (vplzcntq), variable 64-bit shifts and unsigned compares, which AVX2
// lacks.
//
// Two forms.  The separate steps (keysAvx512, limbsAvx512) produce what
// travels between ranks: keys, and limbs as exactLimbs makes them, their
// interleaved stores done by permutes.  The fused sum (sumAvx512) takes an
// element's contributions straight to its rounded result, all in registers;
// its integer is the same exact sum held as plain binary words (see its
// comment), so its bits are exactRound's.  Lanes whose result is not a
// normal number (a zero, a subnormal, an overflow, an infinity or NaN) are
// redone by the scalar steps: the same bits, rarely.  And for two
// contributions, the FPU's addition eight lanes wide (sumPairAvx512, called
// through exactSumOfTwo, coll/exact_pair.cc).
// tests/unit/test_exact_sum.cc compares the vector and scalar forms on every
// class of input and for rank counts that take each accumulator width.
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

// The steps on eight elements of type T in 64-bit lanes: the same arithmetic
// as exactKey, exactLimbs and exactRound (sumAvx512's comment says how the
// fused sum's integer differs in form).
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
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi64(1);
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
    if (_mm512_cmplt_epi64_mask(shift, zero)) roundIntoWindow(scale, rounded);
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

  // The fused sum's form of the windowed integer (see sumAvx512): each
  // contribution's magnitude `m << shift` (below 2^W, W = 42 L) in Words
  // 64-bit words, added to one of two unsigned accumulators by its sign.
  static constexpr int W = kExactLimbBits * L;
  static constexpr int Words = W <= 63 ? 1 : 2;
  // The accumulators' words: a sum of n contributions is below n 2^W
  // (n < 2^21), and p - n must fit a signed number of AccW words: one for
  // half and bfloat16, two for float, for double two up to 2 contributions
  // and three (a word for carries) beyond.
  struct Acc {
    __m512i w[3];
  };
  static constexpr int accWordsFor(int nranks) {
    return Words == 1 ? 1 : W + (nranks <= 2 ? 1 : 21) <= 127 ? 2 : 3;
  }

  // Lanes whose magnitude m would sit below the window (shift < 0, more
  // than its width below the element's largest contribution): m rounded to
  // the window's unit, nearest, ties to even, as exactLimbs does, and the
  // shift clamped to 0.
  CHORUS_AVX512_INLINE static void roundIntoWindow(__m512i &shift, __m512i &m) {
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi64(1), ones = _mm512_set1_epi64(-1);
    const __m512i drop = _mm512_max_epi64(_mm512_sub_epi64(zero, shift), zero);
    shift = _mm512_max_epi64(shift, zero);
    const __m512i q = _mm512_srlv_epi64(m, drop);
    const __m512i rest = _mm512_and_si512(m, _mm512_sub_epi64(_mm512_sllv_epi64(one, drop), one));
    const __m512i halfBit = _mm512_sllv_epi64(one, _mm512_sub_epi64(drop, one));  // 0 for drop 0 and above 64
    const __m512i half = _mm512_mask_mov_epi64(halfBit, _mm512_cmpeq_epi64_mask(halfBit, zero), ones);
    const __mmask8 up = _mm512_cmpgt_epu64_mask(rest, half) |
                        (_mm512_cmpeq_epu64_mask(rest, half) & _mm512_test_epi64_mask(q, one));
    m = _mm512_mask_add_epi64(q, up, q, one);
  }

  // The biased exponent of each lane.
  CHORUS_AVX512_INLINE static __m512i exponentOf(__m512i bits) {
    return _mm512_and_si512(_mm512_srli_epi64(bits, f.mantissaBits), _mm512_set1_epi64(expMask));
  }

  // Adds the contribution `bits` to p (positive) or n (negative), aligned
  // to the element's largest exponent `top` (base: W - precision - top).
  // The same integer as exactLimbs' digits, below-window rounding included.
  template <int AccW>
  CHORUS_AVX512_INLINE static void add(__m512i bits, __m512i base, Acc &p, Acc &n) {
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi64(1);
    const __m512i exponent = exponentOf(bits);
    const __mmask8 negative = _mm512_test_epi64_mask(bits, _mm512_set1_epi64(int64_t(uint64_t(1) << signShift)));
    const __m512i fraction = _mm512_and_si512(bits, _mm512_set1_epi64((int64_t(1) << f.mantissaBits) - 1));
    const __mmask8 normal = _mm512_test_epi64_mask(exponent, exponent);
    __m512i m = _mm512_mask_or_epi64(fraction, normal, fraction, _mm512_set1_epi64(int64_t(1) << f.mantissaBits));
    __m512i shift = _mm512_add_epi64(base, _mm512_max_epi64(exponent, one));
    if (_mm512_cmplt_epi64_mask(shift, zero)) roundIntoWindow(shift, m);  // rare
    __m512i word[Words];
    word[0] = _mm512_sllv_epi64(m, shift);  // counts of 64 and more give 0
    if constexpr (Words == 2) {
      const __m512i t = _mm512_sub_epi64(shift, _mm512_set1_epi64(64));
      word[1] = _mm512_or_si512(_mm512_sllv_epi64(m, t), _mm512_srlv_epi64(m, _mm512_sub_epi64(zero, t)));
    }
    addTo<AccW>(p, __mmask8(~negative), word);
    addTo<AccW>(n, negative, word);
  }

  // acc += word in the lanes of k, carried (word[1] < 2^62: adding the
  // carry to it cannot wrap).
  template <int AccW>
  CHORUS_AVX512_INLINE static void addTo(Acc &acc, __mmask8 k, const __m512i *word) {
    const __m512i one = _mm512_set1_epi64(1);
    const __m512i low = _mm512_mask_add_epi64(acc.w[0], k, acc.w[0], word[0]);
    if constexpr (Words == 2) {
      const __mmask8 carry = _mm512_mask_cmplt_epu64_mask(k, low, word[0]);
      const __m512i high = _mm512_mask_add_epi64(word[1], carry, word[1], one);
      const __m512i mid = _mm512_mask_add_epi64(acc.w[1], k, acc.w[1], high);
      if constexpr (AccW == 3)
        acc.w[2] = _mm512_mask_add_epi64(acc.w[2], _mm512_mask_cmplt_epu64_mask(k, mid, high), acc.w[2], one);
      acc.w[1] = mid;
    }
    acc.w[0] = low;
  }

  // The sum p - n rounded once, for a plain sum whose largest exponent is
  // `top`.  Lanes set in `scalar` are not a normal result (a zero, a
  // subnormal, an overflow, an infinity or NaN): the caller redoes them
  // with the scalar steps.
  template <int AccW>
  CHORUS_AVX512_INLINE static __m512i round(const Acc &p, const Acc &n, __m512i top, __mmask8 *scalar) {
    constexpr int64_t bias = expMask >> 1;
    constexpr int precision = f.mantissaBits + 1;
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi64(1), ones = _mm512_set1_epi64(-1);
    // The magnitude of p - n in AccW words, and its sign.
    __m512i w[AccW];
    __mmask8 negative;
    if constexpr (AccW == 1) {
      const __m512i d = _mm512_sub_epi64(p.w[0], n.w[0]);  // |d| < 2^63
      negative = _mm512_cmplt_epi64_mask(d, zero);
      w[0] = _mm512_abs_epi64(d);
    } else {
      // d = p - n with borrows; then negated (~d + 1) where negative.
      __m512i d[AccW];
      __mmask8 borrow = 0;
#pragma GCC unroll 3
      for (int k = 0; k < AccW; ++k) {
        const __m512i t = _mm512_sub_epi64(p.w[k], n.w[k]);
        d[k] = _mm512_mask_sub_epi64(t, borrow, t, one);
        borrow = _mm512_cmplt_epu64_mask(p.w[k], n.w[k]) | (_mm512_cmpeq_epi64_mask(p.w[k], n.w[k]) & borrow);
      }
      negative = _mm512_cmplt_epi64_mask(d[AccW - 1], zero);
      __mmask8 carry = negative;  // the +1, carried while the words below are 0
#pragma GCC unroll 3
      for (int k = 0; k < AccW; ++k) {
        const __m512i inverted = _mm512_mask_xor_epi64(d[k], negative, d[k], ones);
        w[k] = _mm512_mask_add_epi64(inverted, carry, inverted, one);
        carry &= _mm512_testn_epi64_mask(d[k], d[k]);
      }
    }
    // The magnitude's top bit h: in the highest non-zero word (-1 for zero,
    // from lzcnt(0) = 64).
    __m512i h = _mm512_sub_epi64(_mm512_set1_epi64(63), _mm512_lzcnt_epi64(w[0]));
#pragma GCC unroll 3
    for (int k = 1; k < AccW; ++k)
      h = _mm512_mask_sub_epi64(h, _mm512_test_epi64_mask(w[k], w[k]), _mm512_set1_epi64(64 * k + 63),
                                _mm512_lzcnt_epi64(w[k]));
    // The 64 bits from h down, and whether any bit is below them: word k
    // shifted left by `offset` puts bit h at 63; shifted left by
    // 64 + offset (0 once the whole word is below) keeps only its bits
    // below the 64.
    __m512i mant = zero, below = zero;
#pragma GCC unroll 3
    for (int k = 0; k < AccW; ++k) {
      const __m512i offset = _mm512_sub_epi64(_mm512_set1_epi64(64 * k + 63), h);
      mant = _mm512_ternarylogic_epi64(mant, _mm512_sllv_epi64(w[k], offset),
                                       _mm512_srlv_epi64(w[k], _mm512_sub_epi64(zero, offset)), 0xfe);
      const __m512i belowShift = _mm512_max_epi64(_mm512_add_epi64(offset, _mm512_set1_epi64(64)), zero);
      below = _mm512_or_si512(below, _mm512_sllv_epi64(w[k], belowShift));
    }
    const __mmask8 sticky = _mm512_test_epi64_mask(below, below);
    // A normal result: round the 64 bits to `precision`, nearest, ties to even.
    const __m512i exponent = _mm512_add_epi64(h, _mm512_sub_epi64(top, _mm512_set1_epi64(bias - 1 + W)));
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

// The whole sum of each element in registers: the largest exponent, the
// contributions added, the rounding; nothing between the steps goes to
// memory (the element's n contributions are read twice, from cache).  The
// integer is the one exactLimbs' digits make, held another way: each
// contribution's magnitude as a plain binary number (two 64-bit words for
// float and double) added to a positive or a negative accumulator, with
// carries into a third word.  That is about half the instructions of
// splitting every contribution into signed 42-bit digits (shifts, masks and
// sign flips per digit); the digits stay the form of the separate steps,
// whose sums other ranks add.  Only the rounding's lanes that are not a
// normal result, rare, take the scalar steps.
template <DataType T, int AccW>
CHORUS_AVX512_TARGET void sumAvx512Of(const unsigned char *const *vectors, int nranks, size_t n, unsigned char *out) {
  using Lane = Lanes<T>;
  constexpr ExactFormat f = exactFormatOf(T);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const size_t at = i * f.bytes;
    __m512i top = Lane::exponentOf(loadBits<f.bytes>(vectors[0] + at));
    for (int r = 1; r < nranks; ++r) top = _mm512_max_epu64(top, Lane::exponentOf(loadBits<f.bytes>(vectors[r] + at)));
    top = _mm512_max_epu64(top, _mm512_set1_epi64(1));  // subnormals count as exponent 1
    const __m512i base = _mm512_sub_epi64(_mm512_set1_epi64(Lane::W - (f.mantissaBits + 1)), top);
    typename Lane::Acc p, m;
#pragma GCC unroll 3
    for (int k = 0; k < AccW; ++k) p.w[k] = m.w[k] = _mm512_setzero_si512();
    for (int r = 0; r < nranks; ++r) Lane::template add<AccW>(loadBits<f.bytes>(vectors[r] + at), base, p, m);
    __mmask8 scalar;
    __m512i result = Lane::template round<AccW>(p, m, top, &scalar);
    if (scalar) {  // redone before the store: `out` may be a contribution's memory (in place)
      alignas(64) uint64_t lanes[8];
      _mm512_store_si512(lanes, result);
      for (unsigned set = scalar; set; set &= set - 1) {
        const size_t lane = size_t(__builtin_ctz(set));
        lanes[lane] = exactSumElement(vectors, nranks, at + lane * f.bytes, f);
      }
      result = _mm512_load_si512(lanes);
    }
    Lane::store(out + at, result);
  }
  for (; i < n; ++i) exactStoreBits(out + i * f.bytes, f.bytes, exactSumElement(vectors, nranks, i * f.bytes, f));
}

// Two contributions by the FPU's addition, eight lanes at once, where
// exactSumOfTwo (exact_pair.cc) has found that the FPU's sum is the exact
// one (it says why).  Lanes whose result is not a normal number (NaN
// payloads, the sign of a zero, subnormals) take the scalar steps.
template <DataType T>
CHORUS_AVX512_TARGET void sumPairAvx512(const unsigned char *const *vectors, size_t n, unsigned char *out) {
  constexpr ExactFormat f = exactFormatOf(T);
  static_assert(f.bytes == 8 || f.bytes == 4, "pairs by hardware: float and double");
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const size_t at = i * f.bytes;
    alignas(64) unsigned char sums[8 * f.bytes];
    __mmask8 scalar;
    if constexpr (f.bytes == 8) {
      const __m512d sum = _mm512_add_pd(_mm512_loadu_pd(vectors[0] + at), _mm512_loadu_pd(vectors[1] + at));
      const __m512d magnitude = _mm512_abs_pd(sum);
      scalar = __mmask8(_mm512_cmp_pd_mask(magnitude, _mm512_set1_pd(0x1p-1022), _CMP_NGE_UQ) |
                        _mm512_cmp_pd_mask(magnitude, _mm512_set1_pd(0x1.fffffffffffffp1023), _CMP_NLE_UQ));
      _mm512_store_pd(sums, sum);
    } else {
      const __m256 sum = _mm256_add_ps(_mm256_loadu_ps(reinterpret_cast<const float *>(vectors[0] + at)),
                                       _mm256_loadu_ps(reinterpret_cast<const float *>(vectors[1] + at)));
      const __m256 magnitude = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), sum);
      scalar = __mmask8(_mm256_cmp_ps_mask(magnitude, _mm256_set1_ps(0x1p-126f), _CMP_NGE_UQ) |
                        _mm256_cmp_ps_mask(magnitude, _mm256_set1_ps(0x1.fffffep127f), _CMP_NLE_UQ));
      _mm256_store_ps(reinterpret_cast<float *>(sums), sum);
    }
    // Redone before the store: `out` may be a contribution's memory (in place).
    for (unsigned set = scalar; set; set &= set - 1) {
      const size_t lane = size_t(__builtin_ctz(set));
      exactStoreBits(sums + lane * f.bytes, f.bytes, exactSumElement(vectors, 2, at + lane * f.bytes, f));
    }
    __builtin_memcpy(out + at, sums, sizeof sums);
  }
  for (; i < n; ++i) exactStoreBits(out + i * f.bytes, f.bytes, exactSumElement(vectors, 2, i * f.bytes, f));
}

template <DataType T>
void sumAvx512(const unsigned char *const *vectors, int nranks, size_t n, unsigned char *out) {
  switch (Lanes<T>::accWordsFor(nranks)) {
    case 1: return sumAvx512Of<T, 1>(vectors, nranks, n, out);
    case 2: return sumAvx512Of<T, 2>(vectors, nranks, n, out);
    default: return sumAvx512Of<T, 3>(vectors, nranks, n, out);
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

bool exactPairVector(DataType type, const unsigned char *const *vectors, size_t n, unsigned char *out) {
  if (!avx512Usable()) return false;
  switch (type) {
    case DataType::Float64: sumPairAvx512<DataType::Float64>(vectors, n, out); return true;
    case DataType::Float32: sumPairAvx512<DataType::Float32>(vectors, n, out); return true;
    default: return false;
  }
}

#else

bool exactKeysVector(DataType, const unsigned char *, size_t, uint16_t *, bool) { return false; }
bool exactLimbsAvx512(DataType, const unsigned char *, size_t, const uint16_t *, int64_t *, bool) { return false; }
bool exactSumVector(DataType, const unsigned char *const *, int, size_t, unsigned char *) { return false; }
bool exactPairVector(DataType, const unsigned char *const *, size_t, unsigned char *) { return false; }

#endif

}  // namespace chorus
