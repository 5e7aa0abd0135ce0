// Reduction functors (src/coll/functors.h) and the type/op tables
// (src/core/datatype.cc), checked against references that compute each
// result another way: exact 128-bit integer arithmetic reduced modulo 2^n,
// floating results computed in a wider type and rounded once, and the
// table-driven rounding of tests/unit/lowp_ref.h for the low-precision types.
#include <boost/test/unit_test.hpp>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <algorithm>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "coll/functors.h"
#include "coll/lowp.h"
#include "core/datatype.h"
#include "lowp_ref.h"

using namespace chorus;
using chorus_test::Fmt;
using chorus_test::fromBits;
using chorus_test::isNanBits;
using chorus_test::refToDouble;
using chorus_test::roundRef;
using chorus_test::sameFloating;

namespace {

// A type wide enough that one rounding from it to double equals the
// correctly rounded double result of +, * and / (113 >= 2 * 53 + 2 bits).
#if defined(__SIZEOF_FLOAT128__)
using Quad = __float128;
#else
static_assert(LDBL_MANT_DIG >= 113, "need a quad-precision type for the double reference");
using Quad = long double;
#endif

template <typename T> struct WideOf;
template <> struct WideOf<float> { using type = double; };   // 53 >= 2 * 24 + 2
template <> struct WideOf<double> { using type = Quad; };

template <typename T>
constexpr bool kIsLowp = IsLowPrecision<T>::value;

// ---------------------------------------------------------------------------
// Sample values.

template <typename T>
std::vector<T> integerSamples() {
  using L = std::numeric_limits<T>;
  std::vector<T> s = {T(0), T(1), T(2), T(3), T(7), T(100), L::max(), T(L::max() - 1), L::min(), T(L::min() + 1),
                      T(L::max() / 2), T(L::max() / 2 + 1)};
  if (std::is_signed<T>::value) {
    for (int v : {-1, -2, -3, -7, -100}) s.push_back(T(v));
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 24; ++i) s.push_back(T(rng()));
  return s;
}

template <typename T>
std::vector<T> floatSamples() {
  using L = std::numeric_limits<T>;
  std::vector<T> s = {T(0), -T(0), T(1), T(-1), T(2), T(0.5), T(3), T(-3), T(1) / T(3), T(1e10), T(-1e-10),
                      L::max(), L::lowest(), L::min(), L::denorm_min(), -L::denorm_min(), L::infinity(),
                      -L::infinity(), L::quiet_NaN(), T(1) + L::epsilon(), T(1) - L::epsilon() / 2};
  std::mt19937 rng(11);
  std::uniform_real_distribution<T> frac(-2, 2);
  std::uniform_int_distribution<int> exps(-60, 60);
  for (int i = 0; i < 40; ++i) s.push_back(std::ldexp(frac(rng), exps(rng)));
  return s;
}

// Every pattern of an 8-bit type; for a 16-bit one the special values plus
// random patterns, half of them with exponents near 1 so that sums and
// products of comparable magnitudes (where rounding happens) are common.
template <typename T>
std::vector<T> lowpSamples() {
  const int E = Fmt<T>::E, M = Fmt<T>::M;
  std::vector<T> s;
  if (E + M + 1 == 8) {
    for (uint32_t v = 0; v < 256; ++v) s.push_back(fromBits<T>(v));
    return s;
  }
  const uint32_t sign = 1u << (E + M), expOnes = (1u << E) - 1, bias = (1u << (E - 1)) - 1;
  const uint32_t one = bias << M, maxFinite = (expOnes << M) - 1, inf = expOnes << M;
  for (uint32_t v : {0u, sign, one, sign | one, one + 1, maxFinite, sign | maxFinite, 1u, sign | 1u, 1u << M,
                     (1u << M) - 1, inf, sign | inf, inf | 1u, (bias + 1) << M})
    s.push_back(fromBits<T>(v));
  std::mt19937 rng(13);
  for (int i = 0; i < 150; ++i) s.push_back(fromBits<T>(rng() & 0xFFFFu));
  for (int i = 0; i < 150; ++i) {
    uint32_t exp = bias - 3 + rng() % 7;
    s.push_back(fromBits<T>((rng() & sign) | exp << M | (rng() & ((1u << M) - 1))));
  }
  return s;
}

// {value, index} pairs: few values so that ties are common (signed zeros
// among them), indices of both orders.
template <typename T>
std::vector<T> pairSamples() {
  using V = decltype(T::value);
  using I = decltype(T::index);
  std::vector<T> s;
  const V values[] = {V(0), V(-0.0), V(1), V(-1), V(3), std::numeric_limits<V>::max(), std::numeric_limits<V>::lowest()};
  const I indices[] = {I(0), I(1), I(2), I(-5), std::numeric_limits<I>::max()};
  for (V v : values)
    for (I i : indices) {
      T p;
      std::memset(&p, 0x5A, sizeof p);  // padding with something other than zeros
      p.value = v;
      p.index = i;
      s.push_back(p);
    }
  return s;
}

template <typename T>
std::vector<T> samples() {
  if constexpr (IsLocPair<T>::value) return pairSamples<T>();
  else if constexpr (std::is_integral<T>::value) return integerSamples<T>();
  else if constexpr (kIsLowp<T>) return lowpSamples<T>();
  else return floatSamples<T>();
}

// ---------------------------------------------------------------------------
// References.

// An exact integer result, reduced modulo 2^bits into T's range.
template <typename T, typename Exact>
T wrapToT(Exact exact) {
  const int bits = 8 * int(sizeof(T));
  const Exact modulus = Exact(1) << bits;  // bits <= 64 < width of Exact
  Exact r = exact % modulus;
  if (r < 0) r += modulus;
  if (std::is_signed<T>::value && r >= modulus / 2) r -= modulus;
  return T(r);  // now in range: an exact conversion
}

// Sum/Prod exactly: in signed __int128 for signed T (|a * b| <= 2^126), in
// unsigned __int128 for unsigned T ((2^64 - 1)^2 < 2^128).
template <typename T>
T refIntArith(RedOp op, T a, T b) {
  using Exact = typename std::conditional<std::is_signed<T>::value, __int128, unsigned __int128>::type;
  Exact x = Exact(a), y = Exact(b);
  return wrapToT<T>(op == RedOp::Prod ? x * y : x + y);
}

template <typename T>
T refIntegerOp(RedOp op, T a, T b) {
  int la = a != 0, lb = b != 0;
  uint64_t ua = uint64_t(a), ub = uint64_t(b);  // two's complement patterns, sign-extended
  switch (op) {
    case RedOp::Sum: case RedOp::Avg: case RedOp::Prod: return refIntArith(op, a, b);
    case RedOp::Min: return a <= b ? a : b;
    case RedOp::Max: return a >= b ? a : b;
    case RedOp::LAnd: return T(la * lb);
    case RedOp::LOr: return T(la + lb > 0);
    case RedOp::LXor: return T(la + lb == 1);
    case RedOp::BAnd: return T(ua & ub);
    case RedOp::BOr: return T(ua | ub);
    case RedOp::BXor: return T(ua ^ ub);
    default: break;
  }
  BOOST_FAIL("no integer reference for op " << redOpName(op));
  return T(0);
}

// Min/Max with the documented C semantics spelled out: a NaN first operand
// is returned, a NaN second operand ignored; otherwise the smaller (larger),
// and the first operand when they compare equal.
template <typename V>
bool refPicksSecond(RedOp op, V a, V b) {
  if (std::isnan(a) || std::isnan(b)) return false;
  return op == RedOp::Min ? b < a : a < b;
}

template <typename T>
T refFloatOp(RedOp op, T a, T b) {
  using W = typename WideOf<T>::type;
  switch (op) {
    case RedOp::Sum: case RedOp::Avg: return T(W(a) + W(b));
    case RedOp::Prod: return T(W(a) * W(b));
    case RedOp::Min: case RedOp::Max: return refPicksSecond(op, a, b) ? b : a;
    default: break;
  }
  BOOST_FAIL("no float reference for op " << redOpName(op));
  return T(0);
}

template <typename T>
T refLowpOp(RedOp op, T a, T b) {
  double x = refToDouble<T>(a.bits), y = refToDouble<T>(b.bits);  // exact; the double op is exact too
  switch (op) {
    case RedOp::Sum: case RedOp::Avg: return fromBits<T>(roundRef<T>(x + y));
    case RedOp::Prod: return fromBits<T>(roundRef<T>(x * y));
    case RedOp::Min: case RedOp::Max: return refPicksSecond(op, x, y) ? b : a;
    default: break;
  }
  BOOST_FAIL("no low-precision reference for op " << redOpName(op));
  return T{};
}

// MPI's definition (MPI-3.1 5.9.4), with the running result `a` first: the
// smaller (MINLOC) or larger (MAXLOC) value, on a tie a's value with the
// smaller index.
template <typename T>
T refLocOp(RedOp op, T a, T b) {
  const bool bWins = op == RedOp::MinLoc ? b.value < a.value : a.value < b.value;
  const bool tie = !(a.value < b.value) && !(b.value < a.value);
  T r = bWins ? b : a;
  if (tie) r.index = std::min(a.index, b.index);
  return r;
}

template <typename T>
T refOp(RedOp op, T a, T b) {
  if constexpr (IsLocPair<T>::value) return refLocOp(op, a, b);
  else if constexpr (std::is_integral<T>::value) return refIntegerOp(op, a, b);
  else if constexpr (kIsLowp<T>) return refLowpOp(op, a, b);
  else return refFloatOp(op, a, b);
}

template <typename T>
bool sameValue(T got, T want) {
  if constexpr (IsLocPair<T>::value)  // the fields bit for bit; padding carries nothing
    return std::memcmp(&got.value, &want.value, sizeof got.value) == 0 && got.index == want.index;
  else if constexpr (std::is_integral<T>::value) return got == want;
  else if constexpr (kIsLowp<T>) return got.bits == want.bits || (isNanBits<T>(got.bits) && isNanBits<T>(want.bits));
  else return sameFloating(got, want);
}

template <typename T>
std::string show(T v) {
  std::ostringstream os;
  if constexpr (IsLocPair<T>::value) os << "{" << std::hexfloat << double(v.value) << ", " << std::defaultfloat << double(v.index) << "}";
  else if constexpr (std::is_integral<T>::value) os << int64_t(v) << (std::is_signed<T>::value ? "" : "u");
  else if constexpr (kIsLowp<T>) os << "0x" << std::hex << unsigned(v.bits) << std::dec << " (" << toFloat(v) << ")";
  else os << std::hexfloat << v;
  return os.str();
}

// ---------------------------------------------------------------------------
// The (type, op) matrix.

struct MatrixReport {
  int validPairs = 0;
  int checkedPairs = 0;
  long checkedValues = 0;
  std::set<std::pair<int, int>> seen;
};

template <DataType D, RedOp O>
void checkPair(MatrixReport &report) {
  const bool valid = isValidTypeOp(D, O);
  BOOST_TEST((IsValidTypeOp<D, O>::value == valid), dataTypeName(D) << "/" << redOpName(O) << ": compile-time and run-time validity differ");
  report.seen.insert({int(D), int(O)});
  if (valid) ++report.validPairs;
  if constexpr (IsValidTypeOp<D, O>::value) {
    using T = typename TypeOf<D>::type;
    using Func = typename FuncOf<O, T>::type;
    BOOST_TEST(sizeof(T) == dataTypeSize(D));
    const std::vector<T> values = samples<T>();
    long failures = 0;
    for (T a : values) {
      for (T b : values) {
        T got = Func()(a, b), want = refOp(O, a, b);
        ++report.checkedValues;
        if (!sameValue(got, want) && ++failures <= 3)
          BOOST_ERROR(dataTypeName(D) << " " << redOpName(O) << "(" << show(a) << ", " << show(b) << ") = " << show(got)
                                      << ", expected " << show(want));
      }
    }
    BOOST_TEST(failures == 0, dataTypeName(D) << "/" << redOpName(O) << ": " << failures << " mismatches");
    ++report.checkedPairs;
  }
}

template <DataType D, size_t... Os>
void checkAllOps(MatrixReport &report, std::index_sequence<Os...>) {
  (checkPair<D, RedOp(Os)>(report), ...);
}

template <size_t... Ds>
void checkAllTypes(MatrixReport &report, std::index_sequence<Ds...>) {
  (checkAllOps<DataType(Ds)>(report, std::make_index_sequence<kNumRedOps>()), ...);
}

// ---------------------------------------------------------------------------
// Avg finalize.

const int kRankCounts[] = {1, 2, 3, 5, 7, 8, 10, 100, 128, 200, 255, 1000, 4096, 12345, 1 << 20};

template <typename T>
T refIntegerMean(T sum, int nranks) {
  // On magnitudes, so that the truncation toward zero is explicit.
  __int128 s = __int128(sum);
  __int128 q = (s < 0 ? -s : s) / nranks;
  return T(s < 0 ? -q : q);
}

template <typename T>
long checkIntegerFinalize() {
  long failures = 0;
  for (T x : integerSamples<T>())
    for (int n : kRankCounts) {
      T got = FuncAvg<T>::finalize(x, n), want = refIntegerMean(x, n);
      if (got != want && ++failures <= 3)
        BOOST_ERROR("avg finalize(" << show(x) << ", " << n << ") = " << show(got) << ", expected " << show(want));
    }
  return failures;
}

template <typename T>
long checkFloatFinalize() {
  using W = typename WideOf<T>::type;
  long failures = 0;
  for (T x : floatSamples<T>())
    for (int n : kRankCounts) {
      T got = FuncAvg<T>::finalize(x, n), want = T(W(x) / W(n));
      if (!sameFloating(got, want) && ++failures <= 3)
        BOOST_ERROR("avg finalize(" << show(x) << ", " << n << ") = " << show(got) << ", expected " << show(want));
    }
  return failures;
}

// Every bit pattern, divided and rounded once.
template <typename T>
long checkLowpFinalize() {
  long failures = 0;
  for (uint32_t v = 0; v < chorus_test::numPatterns<T>(); ++v)
    for (int n : kRankCounts) {
      T x = fromBits<T>(v);
      T got = FuncAvg<T>::finalize(x, n), want = fromBits<T>(roundRef<T>(refToDouble<T>(v) / n));
      if (!sameValue(got, want) && ++failures <= 3)
        BOOST_ERROR("avg finalize(" << show(x) << ", " << n << ") = " << show(got) << ", expected " << show(want));
    }
  return failures;
}

template <typename T>
void checkIdentityFinalize() {
  T x = samples<T>()[2];
  BOOST_TEST(sameValue(FuncSum<T>::finalize(x, 7), x));
  BOOST_TEST(sameValue(FuncProd<T>::finalize(x, 7), x));
  BOOST_TEST(sameValue(FuncMin<T>::finalize(x, 7), x));
  BOOST_TEST(sameValue(FuncMax<T>::finalize(x, 7), x));
  if constexpr (std::is_integral<T>::value) {
    BOOST_TEST(FuncLAnd<T>::finalize(x, 7) == x);
    BOOST_TEST(FuncLOr<T>::finalize(x, 7) == x);
    BOOST_TEST(FuncLXor<T>::finalize(x, 7) == x);
    BOOST_TEST(FuncBAnd<T>::finalize(x, 7) == x);
    BOOST_TEST(FuncBOr<T>::finalize(x, 7) == x);
    BOOST_TEST(FuncBXor<T>::finalize(x, 7) == x);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(functors)

BOOST_AUTO_TEST_CASE(every_valid_type_op_pair_matches_reference) {
  MatrixReport report;
  checkAllTypes(report, std::make_index_sequence<size_t(DataType::Count)>());
  // 8 integer types x 11 ops + 6 floating types x 5 numeric ops + 7 pair types x 2 loc ops.
  BOOST_TEST(report.validPairs == 8 * 11 + 6 * 5 + 7 * 2);
  BOOST_TEST(report.checkedPairs == report.validPairs);
  BOOST_TEST(report.seen.size() == size_t(DataType::Count) * size_t(kNumRedOps));
  BOOST_TEST_MESSAGE(report.checkedPairs << " (type, op) pairs, " << report.checkedValues << " results checked");
}

BOOST_AUTO_TEST_CASE(invalid_pairs_are_refused) {
  for (int t = 0; t < int(DataType::Count); ++t)
    for (int o = 0; o < kNumRedOps; ++o) {
      DataType type = DataType(t);
      RedOp op = RedOp(o);
      bool integer = type <= DataType::Uint64;
      bool pair = type >= DataType::FloatInt && type <= DataType::DoubleDouble;
      bool numericOp = op <= RedOp::Avg;
      bool locOp = op == RedOp::MinLoc || op == RedOp::MaxLoc;
      bool expected = type != DataType::Bytes && (pair ? locOp : !locOp && (numericOp || integer));
      BOOST_TEST(isValidTypeOp(type, op) == expected, dataTypeName(type) << "/" << redOpName(op));
    }
  BOOST_TEST(!isValidTypeOp(DataType::Float32, RedOp::BAnd));
  BOOST_TEST(!isValidTypeOp(DataType::Float16, RedOp::LAnd));
  BOOST_TEST(!isValidTypeOp(DataType::Fp8E4M3, RedOp::BXor));
  BOOST_TEST(!isValidTypeOp(DataType::Bytes, RedOp::Sum));
  BOOST_TEST(!isValidTypeOp(DataType::Bytes, RedOp::BOr));
  BOOST_TEST(!isValidTypeOp(DataType::Count, RedOp::Sum));
  BOOST_TEST(!isValidTypeOp(DataType::Int32, RedOp::Count));
  BOOST_TEST(isValidTypeOp(DataType::Int8, RedOp::BXor));
  BOOST_TEST(isValidTypeOp(DataType::BFloat16, RedOp::Avg));
  BOOST_TEST(isValidTypeOp(DataType::DoubleInt, RedOp::MinLoc));
  BOOST_TEST(!isValidTypeOp(DataType::DoubleInt, RedOp::Min));
  BOOST_TEST(!isValidTypeOp(DataType::Float64, RedOp::MaxLoc));
  BOOST_TEST(!isValidTypeOp(DataType::Bytes, RedOp::MinLoc));
}

BOOST_AUTO_TEST_CASE(names_and_sizes) {
  const char *types[] = {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                         "float16", "bfloat16", "fp8_e4m3", "fp8_e5m2", "float32", "float64",
                         "float_int", "double_int", "long_int", "short_int", "int_int", "float_float",
                         "double_double", "bytes"};
  const size_t sizes[] = {1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 1, 1, 4, 8, 8, 16, 16, 8, 8, 8, 16, 1};
  for (int t = 0; t < int(DataType::Count); ++t) {
    BOOST_TEST(dataTypeName(DataType(t)) == std::string(types[t]));
    BOOST_TEST(dataTypeSize(DataType(t)) == sizes[t]);
  }
  const char *ops[] = {"sum", "prod", "min", "max", "avg", "land", "lor", "lxor", "band", "bor", "bxor", "minloc", "maxloc"};
  for (int o = 0; o < kNumRedOps; ++o) BOOST_TEST(redOpName(RedOp(o)) == std::string(ops[o]));
  BOOST_TEST(dataTypeName(DataType::Count) == std::string("unknown"));
  BOOST_TEST(redOpName(RedOp::Count) == std::string("unknown"));
  BOOST_TEST(dataTypeSize(DataType::Count) == 0u);
}

BOOST_AUTO_TEST_CASE(type_of_mapping) {
  BOOST_TEST((std::is_same<TypeOf<DataType::Int8>::type, int8_t>::value));
  BOOST_TEST((std::is_same<TypeOf<DataType::Uint64>::type, uint64_t>::value));
  BOOST_TEST((std::is_same<TypeOf<DataType::Float16>::type, Half>::value));
  BOOST_TEST((std::is_same<TypeOf<DataType::BFloat16>::type, BFloat16>::value));
  BOOST_TEST((std::is_same<TypeOf<DataType::Fp8E4M3>::type, Fp8E4M3>::value));
  BOOST_TEST((std::is_same<TypeOf<DataType::Fp8E5M2>::type, Fp8E5M2>::value));
  BOOST_TEST((std::is_same<TypeOf<DataType::Float32>::type, float>::value));
  BOOST_TEST((std::is_same<TypeOf<DataType::Float64>::type, double>::value));
  BOOST_TEST((std::is_same<FuncOf<RedOp::Avg, float>::type, FuncAvg<float>>::value));
  BOOST_TEST((std::is_same<FuncOf<RedOp::BXor, int32_t>::type, FuncBXor<int32_t>>::value));
}

BOOST_AUTO_TEST_CASE(only_avg_needs_finalize) {
  BOOST_TEST(FuncAvg<int32_t>::kNeedsFinalize);
  BOOST_TEST(FuncAvg<Half>::kNeedsFinalize);
  BOOST_TEST(!FuncSum<int32_t>::kNeedsFinalize);
  BOOST_TEST(!FuncProd<double>::kNeedsFinalize);
  BOOST_TEST(!FuncMin<float>::kNeedsFinalize);
  BOOST_TEST(!FuncMax<BFloat16>::kNeedsFinalize);
  BOOST_TEST(!FuncLAnd<int8_t>::kNeedsFinalize);
  BOOST_TEST(!FuncLOr<int8_t>::kNeedsFinalize);
  BOOST_TEST(!FuncLXor<int8_t>::kNeedsFinalize);
  BOOST_TEST(!FuncBAnd<uint64_t>::kNeedsFinalize);
  BOOST_TEST(!FuncBOr<uint64_t>::kNeedsFinalize);
  BOOST_TEST(!FuncBXor<uint64_t>::kNeedsFinalize);
  checkIdentityFinalize<int8_t>();
  checkIdentityFinalize<uint64_t>();
  checkIdentityFinalize<float>();
  checkIdentityFinalize<Half>();
  checkIdentityFinalize<Fp8E4M3>();
}

BOOST_AUTO_TEST_CASE(avg_finalize) {
  // Integers: C's truncation toward zero.
  BOOST_TEST(FuncAvg<int32_t>::finalize(-7, 2) == -3);
  BOOST_TEST(FuncAvg<int32_t>::finalize(7, 2) == 3);
  BOOST_TEST(FuncAvg<int8_t>::finalize(int8_t(-128), 200) == 0);  // nranks wider than the type
  BOOST_TEST(FuncAvg<uint8_t>::finalize(uint8_t(255), 300) == 0);
  BOOST_TEST(FuncAvg<uint64_t>::finalize(UINT64_MAX, 3) == UINT64_MAX / 3);
  BOOST_TEST(FuncAvg<int64_t>::finalize(INT64_MIN, 1) == INT64_MIN);
  BOOST_TEST(FuncAvg<float>::finalize(1.0f, 3) == 1.0f / 3.0f);
  BOOST_TEST(FuncAvg<double>::finalize(1.0, 3) == 1.0 / 3.0);
  BOOST_TEST(FuncAvg<Half>::finalize(Half{0x3C00}, 4).bits == 0x3400u);  // 1/4
  long failures = 0;
  failures += checkIntegerFinalize<int8_t>() + checkIntegerFinalize<uint8_t>();
  failures += checkIntegerFinalize<int16_t>() + checkIntegerFinalize<uint16_t>();
  failures += checkIntegerFinalize<int32_t>() + checkIntegerFinalize<uint32_t>();
  failures += checkIntegerFinalize<int64_t>() + checkIntegerFinalize<uint64_t>();
  failures += checkFloatFinalize<float>() + checkFloatFinalize<double>();
  failures += checkLowpFinalize<Half>() + checkLowpFinalize<BFloat16>();
  failures += checkLowpFinalize<Fp8E4M3>() + checkLowpFinalize<Fp8E5M2>();
  BOOST_TEST(failures == 0);
}

BOOST_AUTO_TEST_CASE(integer_wrapping_examples) {
  BOOST_TEST(FuncSum<int8_t>()(int8_t(127), int8_t(1)) == int8_t(-128));
  BOOST_TEST(FuncSum<uint8_t>()(uint8_t(255), uint8_t(2)) == 1);
  BOOST_TEST(FuncProd<uint16_t>()(uint16_t(65535), uint16_t(65535)) == 1);  // no int overflow on the way
  BOOST_TEST(FuncProd<int16_t>()(int16_t(-32768), int16_t(-1)) == int16_t(-32768));
  BOOST_TEST(FuncSum<int32_t>()(INT32_MAX, 1) == INT32_MIN);
  BOOST_TEST(FuncProd<int64_t>()(INT64_MIN, -1) == INT64_MIN);
  BOOST_TEST(FuncSum<uint64_t>()(UINT64_MAX, 1) == 0u);
}

BOOST_AUTO_TEST_CASE(logical_ops_yield_zero_or_one) {
  BOOST_TEST(FuncLAnd<int32_t>()(5, -3) == 1);
  BOOST_TEST(FuncLAnd<int32_t>()(5, 0) == 0);
  BOOST_TEST(FuncLOr<uint8_t>()(0, 200) == 1);
  BOOST_TEST(FuncLOr<uint8_t>()(0, 0) == 0);
  BOOST_TEST(FuncLXor<int64_t>()(2, 3) == 0);
  BOOST_TEST(FuncLXor<int64_t>()(0, -5) == 1);
}

BOOST_AUTO_TEST_CASE(min_max_nan_order) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  BOOST_TEST(std::isnan(FuncMin<float>()(nan, 1.0f)));
  BOOST_TEST(FuncMin<float>()(1.0f, nan) == 1.0f);
  BOOST_TEST(std::isnan(FuncMax<float>()(nan, 1.0f)));
  BOOST_TEST(FuncMax<float>()(1.0f, nan) == 1.0f);
  BOOST_TEST(!std::signbit(FuncMin<float>()(0.0f, -0.0f)));  // equal: the first operand
  BOOST_TEST(FuncMin<Half>()(Half{0x3C00}, Half{0xC000}).bits == 0xC000u);
  BOOST_TEST(FuncMax<Fp8E4M3>()(Fp8E4M3{0x38}, Fp8E4M3{0x7E}).bits == 0x7Eu);
}

// MPI's C structs, whose layout MPI describes (MPI_DOUBLE_INT: 12 data
// bytes in 16, MPI_SHORT_INT: a 2-byte hole after the short).
BOOST_AUTO_TEST_CASE(loc_pairs_have_mpi_struct_layout) {
  struct CDoubleInt { double v; int k; };
  struct CShortInt { short v; int k; };
  struct CLongInt { long v; int k; };
  BOOST_TEST(sizeof(DoubleIntPair) == sizeof(CDoubleInt));
  BOOST_TEST(offsetof(DoubleIntPair, index) == offsetof(CDoubleInt, k));
  BOOST_TEST(sizeof(ShortIntPair) == sizeof(CShortInt));
  BOOST_TEST(offsetof(ShortIntPair, index) == offsetof(CShortInt, k));
  BOOST_TEST(sizeof(LongIntPair) == sizeof(CLongInt));
  BOOST_TEST(sizeof(FloatIntPair) == 8u);
  BOOST_TEST(sizeof(DoubleDoublePair) == 16u);
}

BOOST_AUTO_TEST_CASE(loc_ties_take_the_lowest_index) {
  const DoubleIntPair a{2.0, 7}, b{2.0, 3}, c{1.0, 9};
  BOOST_TEST(FuncMinLoc<DoubleIntPair>()(a, b).index == 3);
  BOOST_TEST(FuncMinLoc<DoubleIntPair>()(b, a).index == 3);
  BOOST_TEST(FuncMaxLoc<DoubleIntPair>()(a, b).index == 3);
  BOOST_TEST(FuncMinLoc<DoubleIntPair>()(a, c).index == 9);
  BOOST_TEST(FuncMaxLoc<DoubleIntPair>()(c, a).index == 7);
  const FloatFloatPair x{5.0f, 2.0f}, y{5.0f, -1.0f};  // Fortran's 2REAL: the index is a real
  BOOST_TEST(FuncMaxLoc<FloatFloatPair>()(x, y).index == -1.0f);
}

BOOST_AUTO_TEST_CASE(reduce_into_handles_aliasing) {
  std::vector<int32_t> a(1000), b(1000), expected(1000);
  for (int i = 0; i < 1000; ++i) {
    a[i] = i * 3 - 500;
    b[i] = 7 - i;
    expected[i] = a[i] + b[i];
  }
  std::vector<int32_t> out(1000, -1);
  reduceInto<int32_t, FuncSum<int32_t>>(out.data(), a.data(), b.data(), 1000);
  BOOST_TEST(out == expected);
  std::vector<int32_t> a2 = a, b2 = b;
  reduceInto<int32_t, FuncSum<int32_t>>(a2.data(), a2.data(), b2.data(), 1000);  // dst == a
  BOOST_TEST(a2 == expected);
  a2 = a;
  reduceInto<int32_t, FuncSum<int32_t>>(b2.data(), a2.data(), b2.data(), 1000);  // dst == b
  BOOST_TEST(b2 == expected);
  reduceInto<int32_t, FuncSum<int32_t>>(out.data(), a.data(), b.data(), 0);  // n == 0 touches nothing
  BOOST_TEST(out == expected);

  std::vector<Half> h(5, Half{0x3C00});  // 1.0
  reduceInto<Half, FuncSum<Half>>(h.data(), h.data(), h.data(), h.size());
  for (Half v : h) BOOST_TEST(v.bits == 0x4000u);  // 2.0
}

BOOST_AUTO_TEST_SUITE_END()
