// The exact mode's limbs step (exactLimbs, coll/exact_sum.h) four elements
// at a time in AVX2 registers, for CPUs with AVX2 but not AVX-512 (which
// take coll/exact_avx512.cc).  Why by hand: GCC 12 does not vectorize the
// scalar loop (the limbs' interleaved stores); scalar, the step costs about
// twice the default allreduce's whole per-element time.
// Why AVX2 fits: the digits' shifts are variable 64-bit shifts whose counts
// run past 63 and below 0, and vpsllvq/vpsrlvq give 0 for every count from
// 64 up (a negative count reads as one), which is exactShiftLeft's and
// exactShiftRight's meaning.  The same bits as the scalar step, lane by lane
// (tests/unit/test_exact_sum.cc compares them on every class of input).
#include "coll/exact_simd.h"

#include "coll/exact_sum.h"

#if defined(__x86_64__) && !defined(__CUDACC__)
#include <immintrin.h>
#define CHORUS_EXACT_AVX2 1
#endif

namespace chorus {

#ifdef CHORUS_EXACT_AVX2
namespace {

template <DataType T, bool Accumulate>
__attribute__((target("avx2"))) void limbsAvx2(const unsigned char *in, size_t n, const uint16_t *keys,
                                               int64_t *out) {
  constexpr ExactFormat f = exactFormatOf(T);
  constexpr int64_t expMask = (int64_t(1) << f.exponentBits) - 1;
  constexpr int64_t windowLessPrecision = kExactLimbBits * f.limbs - (f.mantissaBits + 1);
  const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi64x(1);
  const __m256i expMaskV = _mm256_set1_epi64x(expMask);
  const __m256i fractionMask = _mm256_set1_epi64x((int64_t(1) << f.mantissaBits) - 1);
  const __m256i hidden = _mm256_set1_epi64x(int64_t(1) << f.mantissaBits);
  const __m256i digitMask = _mm256_set1_epi64x((int64_t(1) << kExactLimbBits) - 1);
  const __m256i signFlip = _mm256_set1_epi64x(INT64_MIN);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256i bits;
    if constexpr (f.bytes == 8) {
      bits = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(in + i * 8));
    } else if constexpr (f.bytes == 4) {
      bits = _mm256_cvtepu32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i *>(in + i * 4)));
    } else {
      bits = _mm256_cvtepu16_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(in + i * 2)));
    }
    const __m256i key = _mm256_cvtepu16_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(keys + i)));
    const __m256i top = _mm256_srli_epi64(key, 1);
    const __m256i exponent = _mm256_and_si256(_mm256_srli_epi64(bits, f.mantissaBits), expMaskV);
    const __m256i negative = _mm256_and_si256(_mm256_srli_epi64(bits, f.mantissaBits + f.exponentBits), one);
    const __m256i fraction = _mm256_and_si256(bits, fractionMask);
    const __m256i subnormal = _mm256_cmpeq_epi64(exponent, zero);
    const __m256i effective = _mm256_or_si256(exponent, _mm256_and_si256(subnormal, one));
    const __m256i m = _mm256_or_si256(fraction, _mm256_andnot_si256(subnormal, hidden));
    // shift = W - p - (top - effective); below the window when negative.
    const __m256i shift =
        _mm256_add_epi64(_mm256_sub_epi64(_mm256_set1_epi64x(windowLessPrecision), top), effective);
    const __m256i negShift = _mm256_sub_epi64(zero, shift);
    const __m256i drop = _mm256_and_si256(negShift, _mm256_cmpgt_epi64(negShift, zero));
    const __m256i scale = _mm256_and_si256(shift, _mm256_cmpgt_epi64(shift, zero));
    // m rounded to the window's unit, nearest, ties to even.
    const __m256i q = _mm256_srlv_epi64(m, drop);
    const __m256i rest = _mm256_and_si256(m, _mm256_sub_epi64(_mm256_sllv_epi64(one, drop), one));
    const __m256i halfBit = _mm256_sllv_epi64(one, _mm256_sub_epi64(drop, one));  // 0 for drop 0 and above 64
    const __m256i half = _mm256_or_si256(halfBit, _mm256_cmpeq_epi64(halfBit, zero));
    const __m256i above = _mm256_cmpgt_epi64(_mm256_xor_si256(rest, signFlip), _mm256_xor_si256(half, signFlip));
    const __m256i tieOdd = _mm256_and_si256(_mm256_cmpeq_epi64(rest, half),
                                            _mm256_cmpeq_epi64(_mm256_and_si256(q, one), one));
    const __m256i rounded = _mm256_sub_epi64(q, _mm256_or_si256(above, tieOdd));
    // Infinities and NaN: a count in the first limb, 21 bits a field.
    const __m256i special = _mm256_cmpeq_epi64(top, expMaskV);
    const __m256i fieldShift =
        _mm256_blendv_epi8(_mm256_mul_epu32(negative, _mm256_set1_epi64x(21)), _mm256_set1_epi64x(42),
                           _mm256_xor_si256(_mm256_cmpeq_epi64(fraction, zero), _mm256_set1_epi64x(-1)));
    const __m256i count =
        _mm256_and_si256(_mm256_sllv_epi64(one, fieldShift), _mm256_cmpeq_epi64(exponent, expMaskV));
    const __m256i negMask = _mm256_sub_epi64(zero, negative);
    alignas(32) int64_t limb[kExactMaxLimbs][4];
    for (int k = 0; k < f.limbs; ++k) {
      const __m256i offset = _mm256_sub_epi64(scale, _mm256_set1_epi64x(int64_t(kExactLimbBits) * k));
      const __m256i digit = _mm256_and_si256(
          _mm256_or_si256(_mm256_sllv_epi64(rounded, offset), _mm256_srlv_epi64(rounded, _mm256_sub_epi64(zero, offset))),
          digitMask);
      const __m256i signedDigit = _mm256_sub_epi64(_mm256_xor_si256(digit, negMask), negMask);
      const __m256i value = k == 0 ? _mm256_blendv_epi8(signedDigit, count, special)
                                   : _mm256_andnot_si256(special, signedDigit);
      _mm256_store_si256(reinterpret_cast<__m256i *>(limb[k]), value);
    }
    int64_t *o = out + i * f.limbs;
    for (int lane = 0; lane < 4; ++lane)
      for (int k = 0; k < f.limbs; ++k) {
        int64_t &slot = o[lane * f.limbs + k];
        slot = Accumulate ? int64_t(uint64_t(slot) + uint64_t(limb[k][lane])) : limb[k][lane];
      }
  }
  for (; i < n; ++i) exactLimbsInto<Accumulate>(exactLoadBits(in + i * f.bytes, f.bytes), keys[i], f, out + i * f.limbs);
}

template <bool Accumulate>
bool limbsAvx2Of(DataType type, const unsigned char *in, size_t n, const uint16_t *keys, int64_t *out) {
  switch (type) {
    case DataType::Float64: limbsAvx2<DataType::Float64, Accumulate>(in, n, keys, out); return true;
    case DataType::Float32: limbsAvx2<DataType::Float32, Accumulate>(in, n, keys, out); return true;
    case DataType::Float16: limbsAvx2<DataType::Float16, Accumulate>(in, n, keys, out); return true;
    case DataType::BFloat16: limbsAvx2<DataType::BFloat16, Accumulate>(in, n, keys, out); return true;
    default: return false;
  }
}

}  // namespace

bool exactLimbsAvx2(DataType type, const unsigned char *in, size_t n, const uint16_t *keys, int64_t *out,
                    bool accumulate) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (!avx2) return false;
  return accumulate ? limbsAvx2Of<true>(type, in, n, keys, out) : limbsAvx2Of<false>(type, in, n, keys, out);
}

#else

bool exactLimbsAvx2(DataType, const unsigned char *, size_t, const uint16_t *, int64_t *, bool) { return false; }

#endif

}  // namespace chorus
