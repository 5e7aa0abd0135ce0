// Reduction functors, one per chorus::RedOp, for host (g++) and device (nvcc).
//
// Contract, shared by every functor Func<T>:
//   T operator()(T a, T b) const   combines two elements; pure, no state.
//   static T finalize(T x, int nranks)
//                                  applied once to each fully reduced
//                                  element; the identity except for Avg.
//   static constexpr bool kNeedsFinalize
//                                  false when finalize is the identity, so an
//                                  algorithm may skip the extra pass.
//
// Semantics by element type:
//   Integers: Sum and Prod wrap modulo 2^bits, as MPI implementations do.
//     Signed values are computed in an unsigned type of at least int's width
//     (no signed overflow, no promotion to int), then converted back.
//   float, double: computed in their own precision with IEEE rounding.
//   Half, BFloat16, Fp8E4M3, Fp8E5M2: both operands are converted to float,
//     the operation is done in float and the result rounded back once
//     (lowp.h).  Nothing depends on native half or fp8 instructions, so the
//     host executor and every GPU produce bit-identical results.  Float is
//     wide enough (24 >= 2 * 11 + 2 bits) that this single rounding equals
//     rounding the exact result for Sum, Prod and the Avg division.
//     Device code must therefore not be built with --use_fast_math or
//     -ftz=true: bfloat16 subnormals are float subnormals.
//   Min and Max use the plain C comparisons, as MPI implementations do:
//     Min(a, b) = (b < a) ? b : a,  Max(a, b) = (a < b) ? b : a.
//     With a NaN this is order dependent: a NaN in `a` is returned, a NaN in
//     `b` is ignored.  (Not fmin/fmax, which always drop the NaN.)
//   LAnd, LOr, LXor: 1 or 0 as C's logical operators; integers only.
//   BAnd, BOr, BXor: bitwise; integers only.
//   MinLoc, MaxLoc, on the {value, index} pairs only, as MPI defines them:
//     the pair with the smaller (larger) value; on equal values the first
//     operand's value with the smaller of the two indices.  Spelled like
//     Open MPI's and MPICH's loops (a strict comparison, then ==), so a NaN
//     value is order dependent there as Min and Max are.
//   Avg reduces as Sum; finalize divides by nranks: integer division
//     truncating toward zero for integers (the Sum has already wrapped),
//     x / nranks in the type's own precision for float and double, and
//     convert-divide-round-once for the low-precision types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "coll/lowp.h"
#include "core/common.h"
#include "core/datatype.h"

namespace chorus {

// ---------------------------------------------------------------------------
// Type traits.

template <typename T>
struct IsLowPrecision : std::false_type {};
template <> struct IsLowPrecision<Half> : std::true_type {};
template <> struct IsLowPrecision<BFloat16> : std::true_type {};
template <> struct IsLowPrecision<Fp8E4M3> : std::true_type {};
template <> struct IsLowPrecision<Fp8E5M2> : std::true_type {};

// The C++ element type of a reducible DataType.  Bytes has none on purpose:
// it is never reduced.
template <DataType D> struct TypeOf;
template <> struct TypeOf<DataType::Int8> { using type = int8_t; };
template <> struct TypeOf<DataType::Uint8> { using type = uint8_t; };
template <> struct TypeOf<DataType::Int16> { using type = int16_t; };
template <> struct TypeOf<DataType::Uint16> { using type = uint16_t; };
template <> struct TypeOf<DataType::Int32> { using type = int32_t; };
template <> struct TypeOf<DataType::Uint32> { using type = uint32_t; };
template <> struct TypeOf<DataType::Int64> { using type = int64_t; };
template <> struct TypeOf<DataType::Uint64> { using type = uint64_t; };
template <> struct TypeOf<DataType::Float16> { using type = Half; };
template <> struct TypeOf<DataType::BFloat16> { using type = BFloat16; };
template <> struct TypeOf<DataType::Fp8E4M3> { using type = Fp8E4M3; };
template <> struct TypeOf<DataType::Fp8E5M2> { using type = Fp8E5M2; };
template <> struct TypeOf<DataType::Float32> { using type = float; };
template <> struct TypeOf<DataType::Float64> { using type = double; };

// The element of MPI's MINLOC/MAXLOC pair types: the same members in the
// same order as the C struct MPI describes (MPI_DOUBLE_INT is
// struct { double; int; }), so the compiler gives it MPI's layout, padding
// included (the API checks that against MPI's own size and extent).
template <typename V, typename I>
struct LocPair {
  V value;
  I index;
};
using FloatIntPair = LocPair<float, int32_t>;
using DoubleIntPair = LocPair<double, int32_t>;
using LongIntPair = LocPair<long, int32_t>;
using ShortIntPair = LocPair<int16_t, int32_t>;
using IntIntPair = LocPair<int32_t, int32_t>;
using FloatFloatPair = LocPair<float, float>;
using DoubleDoublePair = LocPair<double, double>;
template <> struct TypeOf<DataType::FloatInt> { using type = FloatIntPair; };
template <> struct TypeOf<DataType::DoubleInt> { using type = DoubleIntPair; };
template <> struct TypeOf<DataType::LongInt> { using type = LongIntPair; };
template <> struct TypeOf<DataType::ShortInt> { using type = ShortIntPair; };
template <> struct TypeOf<DataType::IntInt> { using type = IntIntPair; };
template <> struct TypeOf<DataType::FloatFloat> { using type = FloatFloatPair; };
template <> struct TypeOf<DataType::DoubleDouble> { using type = DoubleDoublePair; };

template <typename T> struct IsLocPair : std::false_type {};
template <typename V, typename I> struct IsLocPair<LocPair<V, I>> : std::true_type {};

// Compile-time twin of isValidTypeOp (datatype.cc), for dispatch tables that
// must not instantiate a functor on a type it refuses (with `if constexpr`).
// A unit test keeps the two in agreement.
template <DataType D, RedOp O>
struct IsValidTypeOp
    : std::integral_constant<bool,
                             (D < DataType::Bytes) && (O < RedOp::Count) &&
                                 ((D >= DataType::FloatInt) == (O == RedOp::MinLoc || O == RedOp::MaxLoc)) &&
                                 (O < RedOp::LAnd || O > RedOp::BXor || D <= DataType::Uint64)> {};

namespace func_detail {

// The unsigned type integer T is wrapped in: at least unsigned int, so that
// small types are not promoted to (signed) int, where a product overflows.
template <typename T>
using WrapType = typename std::conditional<(sizeof(T) < sizeof(unsigned)), unsigned,
                                           typename std::make_unsigned<T>::type>::type;

// Back from the wrapped unsigned value to T, modulo 2^bits.  (Out of range
// unsigned->signed conversion is modular in g++ and nvcc, and by definition
// since C++20.)
template <typename T, typename W>
CHORUS_HOST_DEVICE inline T narrow(W w) {
  return static_cast<T>(static_cast<typename std::make_unsigned<T>::type>(w));
}

template <typename T>
struct RequireInteger {
  static_assert(std::is_integral<T>::value, "logical and bitwise reductions are defined on integer types only");
};

}  // namespace func_detail

// ---------------------------------------------------------------------------
// Functors.

template <typename T>
struct FuncSum {
  static constexpr bool kNeedsFinalize = false;
  CHORUS_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value) {
      using W = func_detail::WrapType<T>;
      return func_detail::narrow<T>(W(W(a) + W(b)));
    } else if constexpr (IsLowPrecision<T>::value) {
      return fromFloat<T>(toFloat(a) + toFloat(b));
    } else {
      return a + b;
    }
  }
  static CHORUS_HOST_DEVICE T finalize(T x, int) { return x; }
};

template <typename T>
struct FuncProd {
  static constexpr bool kNeedsFinalize = false;
  CHORUS_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value) {
      using W = func_detail::WrapType<T>;
      return func_detail::narrow<T>(W(W(a) * W(b)));
    } else if constexpr (IsLowPrecision<T>::value) {
      return fromFloat<T>(toFloat(a) * toFloat(b));
    } else {
      return a * b;
    }
  }
  static CHORUS_HOST_DEVICE T finalize(T x, int) { return x; }
};

template <typename T>
struct FuncMin {
  static constexpr bool kNeedsFinalize = false;
  CHORUS_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (IsLowPrecision<T>::value) {
      return (toFloat(b) < toFloat(a)) ? b : a;
    } else {
      return (b < a) ? b : a;
    }
  }
  static CHORUS_HOST_DEVICE T finalize(T x, int) { return x; }
};

template <typename T>
struct FuncMax {
  static constexpr bool kNeedsFinalize = false;
  CHORUS_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (IsLowPrecision<T>::value) {
      return (toFloat(a) < toFloat(b)) ? b : a;
    } else {
      return (a < b) ? b : a;
    }
  }
  static CHORUS_HOST_DEVICE T finalize(T x, int) { return x; }
};

// Reduces as Sum; finalize turns the sum into the mean.  nranks > 0.
template <typename T>
struct FuncAvg {
  static constexpr bool kNeedsFinalize = true;
  CHORUS_HOST_DEVICE T operator()(T a, T b) const { return FuncSum<T>()(a, b); }
  static CHORUS_HOST_DEVICE T finalize(T x, int nranks) {
    if constexpr (std::is_integral<T>::value) {
      // In a 64-bit type of T's signedness, since nranks need not fit in T
      // (int8 over 200 ranks); the quotient always fits back.  C truncation.
      using Wide = typename std::conditional<std::is_signed<T>::value, int64_t, uint64_t>::type;
      return static_cast<T>(static_cast<Wide>(x) / static_cast<Wide>(nranks));
    } else if constexpr (IsLowPrecision<T>::value) {
      return fromFloat<T>(toFloat(x) / static_cast<float>(nranks));
    } else {
      return x / static_cast<T>(nranks);
    }
  }
};

template <typename T>
struct FuncLAnd : func_detail::RequireInteger<T> {
  static constexpr bool kNeedsFinalize = false;
  CHORUS_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>((a != 0) && (b != 0)); }
  static CHORUS_HOST_DEVICE T finalize(T x, int) { return x; }
};

template <typename T>
struct FuncLOr : func_detail::RequireInteger<T> {
  static constexpr bool kNeedsFinalize = false;
  CHORUS_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>((a != 0) || (b != 0)); }
  static CHORUS_HOST_DEVICE T finalize(T x, int) { return x; }
};

template <typename T>
struct FuncLXor : func_detail::RequireInteger<T> {
  static constexpr bool kNeedsFinalize = false;
  CHORUS_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>((a != 0) != (b != 0)); }
  static CHORUS_HOST_DEVICE T finalize(T x, int) { return x; }
};

template <typename T>
struct FuncBAnd : func_detail::RequireInteger<T> {
  static constexpr bool kNeedsFinalize = false;
  CHORUS_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>(a & b); }
  static CHORUS_HOST_DEVICE T finalize(T x, int) { return x; }
};

template <typename T>
struct FuncBOr : func_detail::RequireInteger<T> {
  static constexpr bool kNeedsFinalize = false;
  CHORUS_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>(a | b); }
  static CHORUS_HOST_DEVICE T finalize(T x, int) { return x; }
};

template <typename T>
struct FuncBXor : func_detail::RequireInteger<T> {
  static constexpr bool kNeedsFinalize = false;
  CHORUS_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
  static CHORUS_HOST_DEVICE T finalize(T x, int) { return x; }
};

// T is a LocPair.  `a` is the running result, `b` the next input: MPI's
// inout and in.  kMax picks MAXLOC, else MINLOC.
template <typename T, bool kMax>
struct FuncLoc {
  static_assert(IsLocPair<T>::value, "MINLOC and MAXLOC are defined on the {value, index} pair types only");
  static constexpr bool kNeedsFinalize = false;
  CHORUS_HOST_DEVICE T operator()(T a, T b) const {
    if (kMax ? a.value < b.value : b.value < a.value) return b;
    if (b.value == a.value && b.index < a.index) a.index = b.index;
    return a;
  }
  static CHORUS_HOST_DEVICE T finalize(T x, int) { return x; }
};
template <typename T> using FuncMinLoc = FuncLoc<T, false>;
template <typename T> using FuncMaxLoc = FuncLoc<T, true>;

// The functor of a RedOp.  Naming FuncOf<O, T>::type does not instantiate
// the functor; use IsValidTypeOp to guard the instantiation itself.
template <RedOp O, typename T> struct FuncOf;
template <typename T> struct FuncOf<RedOp::Sum, T> { using type = FuncSum<T>; };
template <typename T> struct FuncOf<RedOp::Prod, T> { using type = FuncProd<T>; };
template <typename T> struct FuncOf<RedOp::Min, T> { using type = FuncMin<T>; };
template <typename T> struct FuncOf<RedOp::Max, T> { using type = FuncMax<T>; };
template <typename T> struct FuncOf<RedOp::Avg, T> { using type = FuncAvg<T>; };
template <typename T> struct FuncOf<RedOp::LAnd, T> { using type = FuncLAnd<T>; };
template <typename T> struct FuncOf<RedOp::LOr, T> { using type = FuncLOr<T>; };
template <typename T> struct FuncOf<RedOp::LXor, T> { using type = FuncLXor<T>; };
template <typename T> struct FuncOf<RedOp::BAnd, T> { using type = FuncBAnd<T>; };
template <typename T> struct FuncOf<RedOp::BOr, T> { using type = FuncBOr<T>; };
template <typename T> struct FuncOf<RedOp::BXor, T> { using type = FuncBXor<T>; };
template <typename T> struct FuncOf<RedOp::MinLoc, T> { using type = FuncMinLoc<T>; };
template <typename T> struct FuncOf<RedOp::MaxLoc, T> { using type = FuncMaxLoc<T>; };

// dst[i] = Func()(a[i], b[i]) for i < n.  dst may alias a or b exactly
// (each element is read before it is written, so no restrict qualifiers),
// never partially: iterations are independent, which ivdep tells GCC so that
// it vectorises without a run-time overlap check (one that would send the
// in-place case down the scalar path).
template <typename T, typename Func>
CHORUS_HOST_DEVICE void reduceInto(T *dst, const T *a, const T *b, size_t n) {
  Func func;
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDA_ARCH__)
#pragma GCC ivdep
#endif
  for (size_t i = 0; i < n; ++i) dst[i] = func(a[i], b[i]);
}

}  // namespace chorus
