// The low-precision element types (half, bfloat16, fp8 e4m3 and e5m2) and
// their conversions to and from float.
//
// The types are plain bit containers: trivially copyable PODs with no
// arithmetic of their own.  Reductions convert to float, compute there and
// round back once (see functors.h).  The conversions below are written with
// integer bit manipulation only, not with <cuda_fp16.h> or compiler
// intrinsics, so the host executor and the CUDA kernels produce bit-identical
// results whatever the compiler, the GPU generation or its hardware
// conversion instructions.
//
// Rounding (fromFloat): round to nearest, ties to even, with correct
// subnormals.  NaN stays NaN (quieted; the sign is kept).  Overflow:
//   Half, BFloat16, Fp8E5M2 (IEEE-like, they have infinities): to +/-inf.
//   Fp8E4M3 (OCP E4M3: no infinities, max finite 448, NaN = S.1111.111):
//     "satfinite": every finite value beyond 448, and +/-inf itself, becomes
//     +/-448.  We chose saturation over NaN because a reduction that
//     overshoots the range by a little should stay a usable number, and it is
//     what the hardware's .satfinite conversion mode does.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/common.h"

namespace chorus {

struct Half { uint16_t bits; };      // IEEE binary16: 1.5.10, bias 15
struct BFloat16 { uint16_t bits; };  // top half of binary32: 1.8.7, bias 127
struct Fp8E4M3 { uint8_t bits; };    // OCP E4M3: 1.4.3, bias 7, no inf
struct Fp8E5M2 { uint8_t bits; };    // OCP E5M2: 1.5.2, bias 15, IEEE-like

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit types must pack");
static_assert(sizeof(Fp8E4M3) == 1 && sizeof(Fp8E5M2) == 1, "8-bit types must pack");

namespace lowp_detail {

CHORUS_HOST_DEVICE inline uint32_t floatToBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}

CHORUS_HOST_DEVICE inline float bitsToFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// A small binary float format with E exponent bits and M mantissa bits.
// kIeee: the all-ones exponent encodes inf (mantissa 0) and NaN, as in IEEE.
// Otherwise (OCP E4M3) it holds normal numbers and only all-ones is NaN.
template <int E, int M, bool kIeee>
struct MiniFormat {
  static constexpr int kBias = (1 << (E - 1)) - 1;
  static constexpr uint32_t kExpMax = (1u << E) - 1;  // all-ones exponent field
  static constexpr uint32_t kMantMask = (1u << M) - 1;
  static constexpr uint32_t kSignBit = 1u << (E + M);
  // Largest finite magnitude, as an encoding without sign.
  static constexpr uint32_t kMaxFinite = kIeee ? (kExpMax << M) - 1 : (kExpMax << M) | (kMantMask - 1);
  // What an overflowing magnitude becomes: inf, or saturation ("satfinite").
  static constexpr uint32_t kOverflow = kIeee ? (kExpMax << M) : kMaxFinite;
  static constexpr uint32_t kQuietNan = kIeee ? (kExpMax << M) | (1u << (M - 1)) : (kExpMax << M) | kMantMask;

  CHORUS_HOST_DEVICE static float decode(uint32_t v) {
    uint32_t sign = (v & kSignBit) ? 0x80000000u : 0u;
    uint32_t exp = (v >> M) & kExpMax;
    uint32_t mant = v & kMantMask;
    if (kIeee && exp == kExpMax) {
      // inf, or NaN with its payload kept in the top mantissa bits (quieted).
      return bitsToFloat(sign | 0x7F800000u | (mant ? 0x00400000u | (mant << (23 - M)) : 0u));
    }
    if (!kIeee && exp == kExpMax && mant == kMantMask) return bitsToFloat(sign | 0x7FC00000u);
    if (exp == 0) {
      if (mant == 0) return bitsToFloat(sign);  // signed zero
      // Subnormal: mant * 2^(1 - bias - M).  Every subnormal of these formats
      // is a normal float: shift the leading one up to the implicit position.
      int e = 1 - kBias;
      while (!(mant & (1u << M))) {
        mant <<= 1;
        --e;
      }
      return bitsToFloat(sign | (uint32_t(e + 127) << 23) | ((mant & kMantMask) << (23 - M)));
    }
    return bitsToFloat(sign | ((exp - kBias + 127) << 23) | (mant << (23 - M)));
  }

  CHORUS_HOST_DEVICE static uint32_t encode(float f) {
    uint32_t x = floatToBits(f);
    uint32_t sign = (x & 0x80000000u) ? kSignBit : 0u;
    uint32_t a = x & 0x7FFFFFFFu;
    if (a > 0x7F800000u) {  // NaN: keep what fits of the payload, quiet it
      if (!kIeee) return sign | kQuietNan;
      return sign | kQuietNan | ((a & 0x007FFFFFu) >> (23 - M));
    }
    int fexp = int(a >> 23);  // biased float exponent
    // A zero or subnormal float is below 2^-126, far under half of the
    // smallest subnormal of every format here: it rounds to a signed zero.
    if (fexp == 0) return sign;
    int texp = fexp - 127 + kBias;  // the target's biased exponent
    uint32_t r;                     // truncated magnitude encoding
    uint32_t rem;                   // the bits shifted out
    int dropped;                    // how many bits were shifted out
    if (texp >= 1) {
      if (texp > int(kExpMax)) return sign | kOverflow;  // also catches +/-inf
      dropped = 23 - M;
      r = (uint32_t(texp) << M) | ((a & 0x007FFFFFu) >> dropped);
      rem = a & ((1u << dropped) - 1);
    } else {
      // Lands on the subnormal grid, units of 2^(1 - bias - M).  The 24-bit
      // significand m (implicit one included) is worth m * 2^(fexp - 150).
      uint32_t m = (a & 0x007FFFFFu) | 0x00800000u;
      dropped = (1 - kBias - M) - (fexp - 150);  // >= 24 - M > 0
      if (dropped > 24) return sign;             // below half a unit: zero
      r = m >> dropped;
      rem = m & ((1u << dropped) - 1);
    }
    // Round to nearest, ties to even.  A carry out of the mantissa moves the
    // exponent up by one, which is the right encoding (also subnormal ->
    // smallest normal, and max finite -> inf for the IEEE formats).
    uint32_t halfway = 1u << (dropped - 1);
    if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
    if (r > kMaxFinite) r = kOverflow;
    return sign | r;
  }
};

using HalfFormat = MiniFormat<5, 10, true>;
using E4M3Format = MiniFormat<4, 3, false>;
using E5M2Format = MiniFormat<5, 2, true>;

}  // namespace lowp_detail

CHORUS_HOST_DEVICE inline float toFloat(Half h) { return lowp_detail::HalfFormat::decode(h.bits); }
CHORUS_HOST_DEVICE inline float toFloat(Fp8E4M3 v) { return lowp_detail::E4M3Format::decode(v.bits); }
CHORUS_HOST_DEVICE inline float toFloat(Fp8E5M2 v) { return lowp_detail::E5M2Format::decode(v.bits); }
// bfloat16 is the top half of a binary32: exact, subnormals and NaNs included.
CHORUS_HOST_DEVICE inline float toFloat(BFloat16 b) { return lowp_detail::bitsToFloat(uint32_t(b.bits) << 16); }

// Round a float to T (one of the four types above); see the top of the file.
template <typename T>
CHORUS_HOST_DEVICE T fromFloat(float f);

template <>
CHORUS_HOST_DEVICE inline Half fromFloat<Half>(float f) {
  return Half{uint16_t(lowp_detail::HalfFormat::encode(f))};
}

template <>
CHORUS_HOST_DEVICE inline Fp8E4M3 fromFloat<Fp8E4M3>(float f) {
  return Fp8E4M3{uint8_t(lowp_detail::E4M3Format::encode(f))};
}

template <>
CHORUS_HOST_DEVICE inline Fp8E5M2 fromFloat<Fp8E5M2>(float f) {
  return Fp8E5M2{uint8_t(lowp_detail::E5M2Format::encode(f))};
}

template <>
CHORUS_HOST_DEVICE inline BFloat16 fromFloat<BFloat16>(float f) {
  uint32_t x = lowp_detail::floatToBits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return BFloat16{uint16_t((x >> 16) | 0x0040u)};  // quiet NaN
  // Same exponent range as float: dropping the low 16 bits with a
  // nearest-even increment is the whole job.  A carry that runs into the
  // exponent is correct, including max finite -> inf.
  x += 0x7FFFu + ((x >> 16) & 1u);
  return BFloat16{uint16_t(x >> 16)};
}

}  // namespace chorus
