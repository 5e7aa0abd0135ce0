// The element types and ops of the multi-rank tests (harness.h): input
// generators, formatting, and the tables of every predefined MPI type.
//
// Exact inputs (as nccl-tests does): the expected result must not depend on
// the order in which Chorus and MPI combine the ranks' values, so
//  - integer SUM may wrap (MPI's integer ops wrap too), but only where the
//    wrap is defined: 8/16-bit and unsigned types get any value, signed 32/64
//    bit ones stay within +-max/nranks so no partial sum overflows;
//  - integer AVG keeps the whole sum in range (sum / nranks, truncated toward
//    zero, is then well defined);
//  - integer PROD: for each element one rank (chosen by the element index)
//    gives +-2 or +-3, every other rank +-1, so the product is always small;
//  - float SUM/AVG use small integers whose partial sums over all ranks stay
//    within the type's exact integer range (fp8 e4m3: every integer up to
//    16 is exact, 17 is not; e5m2: up to 8, 9 is not; bfloat16 256; half
//    2048); AVG divides the exact sum once, which is correctly rounded in the
//    low-precision type also when done in float (24 >= 2p+2 bits);
//  - float PROD uses {+-0.5, +-1, +-2}: at most 2^+-8 over 8 ranks, exact in
//    every type (e4m3 reaches 2^-9 with subnormals);
//  - MIN/MAX take any finite value except -0 (min(-0,+0) depends on order);
//  - logical ops mix zeros and nonzero values (nonzero ones with their low
//    byte zero too); bitwise ops and the copy collectives take random bits.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "coll/lowp.h"
#include "harness.h"

namespace chorus_test {

// ---- random numbers ----------------------------------------------------------

uint64_t mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
uint64_t elemHash(uint64_t seed, int rank, size_t index) {
  return mix(seed ^ (static_cast<uint64_t>(rank + 17) * 0xd6e8feb86659fd93ull) ^ (index * 0xc2b2ae3d27d4eb4full));
}
// Same value on every rank for a given element: used to pick per-element modes.
static uint64_t sharedHash(uint64_t seed, size_t index) { return elemHash(seed ^ 0x5a5a5a5a, -7, index); }

// ---- generators ----------------------------------------------------------------

template <typename T>
static void fillInt(void *buf, size_t n, Gen gen, uint64_t seed, int rank, int nranks, size_t first) {
  using U = std::make_unsigned_t<T>;
  constexpr bool kSigned = std::is_signed_v<T>;
  constexpr T kMax = std::numeric_limits<T>::max();
  T *p = static_cast<T *>(buf);
  const uint64_t m = static_cast<uint64_t>(kMax) / static_cast<uint64_t>(nranks);  // >= 1
  for (size_t i = 0; i < n; ++i) {
    const size_t g = first + i;
    const uint64_t h = elemHash(seed, rank, g);
    T v = static_cast<T>(static_cast<U>(h));
    switch (gen) {
      case Gen::Copy:
      case Gen::MinMax:
      case Gen::Bitwise:
      case Gen::Loc:  // (never for a plain integer)
        break;
      case Gen::Sum:
        if (kSigned && sizeof(T) >= 4)
          v = static_cast<T>(static_cast<int64_t>(h % (2 * m + 1)) - static_cast<int64_t>(m));
        break;
      case Gen::Avg:
        if (nranks > 1) {
          if (kSigned)
            v = static_cast<T>(static_cast<int64_t>(h % (2 * m + 1)) - static_cast<int64_t>(m));
          else
            v = static_cast<T>(h % (m + 1));
        }
        break;
      case Gen::Prod: {
        const bool special = static_cast<int>(sharedHash(seed, g) % nranks) == rank;
        int mag = special ? 2 + static_cast<int>(h & 1) : 1;
        int sign = (kSigned && (h & 2)) ? -1 : 1;
        v = static_cast<T>(sign * mag);
        break;
      }
      case Gen::Logical: {
        const uint64_t mode = sharedHash(seed, g) % 3;  // all nonzero, all zero, mixed
        const bool zero = mode == 1 || (mode == 2 && (h & 4));
        if (zero)
          v = 0;
        else if (v == 0)
          v = 1;
        break;
      }
    }
    p[i] = v;
  }
}

// One float input value (native float types store it; low-precision ones
// convert it).  `bound` is the type's exact-sum bound, `range` the MIN/MAX span.
static double genFloatValue(Gen gen, uint64_t h, int nranks, double bound, double range) {
  switch (gen) {
    case Gen::Sum:
    case Gen::Avg: {
      const uint64_t m = static_cast<uint64_t>(std::floor(bound / nranks));
      return static_cast<double>(static_cast<int64_t>(h % (2 * m + 1)) - static_cast<int64_t>(m));
    }
    case Gen::Prod: {
      static const double kVals[6] = {-2.0, -1.0, -0.5, 0.5, 1.0, 2.0};
      return kVals[h % 6];
    }
    default: {  // MinMax
      const double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // [0,1)
      double v = (2.0 * u - 1.0) * range;
      if ((h & 7) == 0) v = std::floor(v);  // some exact integers and ties too
      return v == 0.0 ? 0.0 : v;
    }
  }
}

template <typename T>
static void fillFloat(void *buf, size_t n, Gen gen, uint64_t seed, int rank, int nranks, size_t first) {
  T *p = static_cast<T *>(buf);
  const double bound = sizeof(T) == 4 ? 0x1.0p22 : 0x1.0p40;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t h = elemHash(seed, rank, first + i);
    if (gen == Gen::Copy) {  // random bits, NaNs included: copies must be bitwise
      std::memcpy(&p[i], &h, sizeof(T));
      continue;
    }
    T v = static_cast<T>(genFloatValue(gen, h, nranks, bound, 1.0e6));
    if (v == 0) v = 0;  // never -0
    p[i] = v;
  }
}

template <typename L>
struct LowTraits;
template <>
struct LowTraits<chorus::Half> {
  using Bits = uint16_t;
  static constexpr double kBound = 2048, kRange = 60000;
};
template <>
struct LowTraits<chorus::BFloat16> {
  using Bits = uint16_t;
  static constexpr double kBound = 256, kRange = 1.0e30;
};
template <>
struct LowTraits<chorus::Fp8E4M3> {
  using Bits = uint8_t;
  static constexpr double kBound = 16, kRange = 440;
};
template <>
struct LowTraits<chorus::Fp8E5M2> {
  using Bits = uint8_t;
  static constexpr double kBound = 8, kRange = 50000;
};

template <typename L>
static void fillLow(void *buf, size_t n, Gen gen, uint64_t seed, int rank, int nranks, size_t first) {
  using Bits = typename LowTraits<L>::Bits;
  Bits *p = static_cast<Bits *>(buf);
  const Bits signBit = static_cast<Bits>(1u << (8 * sizeof(Bits) - 1));
  for (size_t i = 0; i < n; ++i) {
    const uint64_t h = elemHash(seed, rank, first + i);
    if (gen == Gen::Copy) {
      p[i] = static_cast<Bits>(h);
      continue;
    }
    const double v = genFloatValue(gen, h, nranks, LowTraits<L>::kBound, LowTraits<L>::kRange);
    Bits b = chorus::fromFloat<L>(static_cast<float>(v)).bits;
    if (b == signBit) b = 0;  // a tiny negative value rounded to -0
    p[i] = b;
  }
}

template <typename L>
static void lowToFloat(const void *in, float *out, size_t n) {
  using Bits = typename LowTraits<L>::Bits;
  const Bits *p = static_cast<const Bits *>(in);
  for (size_t i = 0; i < n; ++i) out[i] = chorus::toFloat(L{p[i]});
}
template <typename L>
static void lowFromFloat(const float *in, void *out, size_t n) {
  using Bits = typename LowTraits<L>::Bits;
  Bits *p = static_cast<Bits *>(out);
  for (size_t i = 0; i < n; ++i) p[i] = chorus::fromFloat<L>(in[i]).bits;
}

void fillBytes(void *buf, size_t n, Gen, uint64_t seed, int rank, int, size_t first) {
  unsigned char *p = static_cast<unsigned char *>(buf);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(elemHash(seed, rank, first + i));
}

// MPI's pair types, declared here as the C structs MPI-3.1 describes them
// (independently of Chorus's own LocPair).  MINLOC/MAXLOC inputs take few
// distinct values so that ties (lowest index wins) are common, indices
// spread wide, and the padding random: a library that moved or kept the
// wrong bytes of an element shows.
template <typename V, typename I>
struct CPair {
  V v;
  I k;
};

template <typename P>
static void fillPair(void *buf, size_t n, Gen gen, uint64_t seed, int rank, int, size_t first) {
  fillBytes(buf, n * sizeof(P), gen, seed ^ 0x9a1c, rank, 0, first * sizeof(P));
  if (gen == Gen::Copy) return;
  P *p = static_cast<P *>(buf);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t h = elemHash(seed, rank, first + i);
    p[i].v = static_cast<decltype(P::v)>(static_cast<int>(h % 5) - 2);
    p[i].k = static_cast<decltype(P::k)>(static_cast<int>((h >> 8) % 2001) - 1000);
  }
}

template <typename P>
static std::string formatPair(const void *e) {
  P p;
  std::memcpy(&p, e, sizeof p);
  std::ostringstream s;
  s << "{" << static_cast<double>(p.v) << ", " << static_cast<double>(p.k) << "} (bytes";
  char hex[4];
  for (size_t b = 0; b < sizeof p; ++b) {
    std::snprintf(hex, sizeof hex, " %02x", static_cast<const unsigned char *>(e)[b]);
    s << hex;
  }
  s << ")";
  return s.str();
}

// Complex values: the real and imaginary parts drawn as two floats each.
template <typename F>
static void fillComplex(void *buf, size_t n, Gen gen, uint64_t seed, int rank, int nranks, size_t first) {
  fillFloat<F>(buf, 2 * n, gen, seed, rank, nranks, 2 * first);
}

// Booleans hold 0 or 1 for the logical ops (other bytes are not booleans);
// copies take random bits.
template <typename T>
static void fillLogical(void *buf, size_t n, Gen gen, uint64_t seed, int rank, int nranks, size_t first) {
  if (gen != Gen::Logical) return fillBytes(buf, n * sizeof(T), gen, seed, rank, nranks, first * sizeof(T));
  T *p = static_cast<T *>(buf);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t mode = sharedHash(seed, first + i) % 3;  // all true, all false, mixed
    const uint64_t h = elemHash(seed, rank, first + i);
    p[i] = static_cast<T>(mode == 0 || (mode == 2 && (h & 4)));
  }
}

// ---- formatting and AVG division ------------------------------------------------

template <typename T>
static std::string formatInt(const void *e) {
  T v;
  std::memcpy(&v, e, sizeof(T));
  char s[64];
  if (std::is_signed_v<T>)
    std::snprintf(s, sizeof s, "%lld (0x%llx)", static_cast<long long>(v),
                  static_cast<unsigned long long>(static_cast<std::make_unsigned_t<T>>(v)));
  else
    std::snprintf(s, sizeof s, "%llu (0x%llx)", static_cast<unsigned long long>(v),
                  static_cast<unsigned long long>(v));
  return s;
}
template <typename T>
static std::string formatFloat(const void *e) {
  T v;
  std::memcpy(&v, e, sizeof(T));
  uint64_t bits = 0;
  std::memcpy(&bits, e, sizeof(T));
  char s[64];
  std::snprintf(s, sizeof s, "%.17g (0x%llx)", static_cast<double>(v), static_cast<unsigned long long>(bits));
  return s;
}
template <typename L>
static std::string formatLow(const void *e) {
  typename LowTraits<L>::Bits b;
  std::memcpy(&b, e, sizeof b);
  char s[64];
  std::snprintf(s, sizeof s, "%.9g (0x%x)", static_cast<double>(chorus::toFloat(L{b})), static_cast<unsigned>(b));
  return s;
}
static std::string formatByte(const void *e) {
  char s[16];
  std::snprintf(s, sizeof s, "0x%02x", *static_cast<const unsigned char *>(e));
  return s;
}

template <typename F>
static std::string formatComplex(const void *e) {
  return "(" + formatFloat<F>(e) + ", " + formatFloat<F>(static_cast<const char *>(e) + sizeof(F)) + ")";
}

template <typename T>
static void divideBy(void *buf, size_t n, int nranks) {
  T *p = static_cast<T *>(buf);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<T>(p[i] / static_cast<T>(nranks));  // C: toward zero
}
static void noDivide(void *, size_t, int) {}

// ---- tables --------------------------------------------------------------------

#define HANDLE(h) [] { return static_cast<MPI_Datatype>(h); }

template <typename T>
static TypeDesc intType(const char *name, MPI_Datatype (*handle)()) {
  return {name, handle, sizeof(T), std::is_signed_v<T> ? Kind::SignedInt : Kind::UnsignedInt,
          false, 0, fillInt<T>, formatInt<T>, divideBy<T>, nullptr, nullptr};
}
template <typename T>
static TypeDesc floatType(const char *name, MPI_Datatype (*handle)()) {
  return {name, handle, sizeof(T), Kind::Float, false, sizeof(T) == 4 ? 0x1.0p22 : 0x1.0p40,
          fillFloat<T>, formatFloat<T>, divideBy<T>, nullptr, nullptr};
}
template <typename L>
static TypeDesc lowType(const char *name, MPI_Datatype (*handle)()) {
  return {name, handle, sizeof(typename LowTraits<L>::Bits), Kind::Float, true, LowTraits<L>::kBound,
          fillLow<L>, formatLow<L>, noDivide, lowToFloat<L>, lowFromFloat<L>};
}

// Toggle the sign bit of n little-endian integers of `size` bytes.
void flipTopBits(unsigned char *buf, size_t size, size_t n) {
  for (size_t i = 0; i < n; ++i) buf[i * size + size - 1] ^= 0x80;
}

MPI_Datatype signedIntOfSize(size_t size) {
  switch (size) {
    case 1: return MPI_INT8_T;
    case 2: return MPI_INT16_T;
    case 4: return MPI_INT32_T;
    default: return MPI_INT64_T;
  }
}

template <typename P>
static TypeDesc pairType(const char *name, MPI_Datatype (*handle)()) {
  return {name, handle, sizeof(P), Kind::Pair, false, 0, fillPair<P>, formatPair<P>, noDivide, nullptr, nullptr};
}
template <typename T>
static TypeDesc logicalType(const char *name, MPI_Datatype (*handle)()) {
  return {name, handle, sizeof(T), Kind::Logical, false, 0, fillLogical<T>, formatInt<T>, noDivide, nullptr, nullptr};
}
template <typename F>
static TypeDesc complexType(const char *name, MPI_Datatype (*handle)()) {
  return {name, handle, 2 * sizeof(F), Kind::Complex, false, 0, fillComplex<F>, formatComplex<F>, noDivide,
          nullptr, nullptr};
}
// Size 0: MPI's extent, read once MPI is up (allTypes()).
static TypeDesc bytesType(const char *name, MPI_Datatype (*handle)()) {
  return {name, handle, 0, Kind::Bytes, false, 0, fillBytes, formatByte, noDivide, nullptr, nullptr};
}

namespace {

struct TypeTables {
  std::vector<TypeDesc> present;
  std::vector<std::string> absent;
};

const TypeTables &typeTables() {
  static const TypeTables tables = [] {
    const std::vector<TypeDesc> candidates = {
        intType<int8_t>("MPI_INT8_T", HANDLE(MPI_INT8_T)),
        intType<uint8_t>("MPI_UINT8_T", HANDLE(MPI_UINT8_T)),
        intType<int16_t>("MPI_INT16_T", HANDLE(MPI_INT16_T)),
        intType<uint16_t>("MPI_UINT16_T", HANDLE(MPI_UINT16_T)),
        intType<int32_t>("MPI_INT32_T", HANDLE(MPI_INT32_T)),
        intType<uint32_t>("MPI_UINT32_T", HANDLE(MPI_UINT32_T)),
        intType<int64_t>("MPI_INT64_T", HANDLE(MPI_INT64_T)),
        intType<uint64_t>("MPI_UINT64_T", HANDLE(MPI_UINT64_T)),
        intType<signed char>("MPI_SIGNED_CHAR", HANDLE(MPI_SIGNED_CHAR)),
        intType<unsigned char>("MPI_UNSIGNED_CHAR", HANDLE(MPI_UNSIGNED_CHAR)),
        intType<short>("MPI_SHORT", HANDLE(MPI_SHORT)),
        intType<unsigned short>("MPI_UNSIGNED_SHORT", HANDLE(MPI_UNSIGNED_SHORT)),
        intType<int>("MPI_INT", HANDLE(MPI_INT)),
        intType<unsigned>("MPI_UNSIGNED", HANDLE(MPI_UNSIGNED)),
        intType<long>("MPI_LONG", HANDLE(MPI_LONG)),
        intType<unsigned long>("MPI_UNSIGNED_LONG", HANDLE(MPI_UNSIGNED_LONG)),
        intType<long long>("MPI_LONG_LONG", HANDLE(MPI_LONG_LONG)),
        intType<unsigned long long>("MPI_UNSIGNED_LONG_LONG", HANDLE(MPI_UNSIGNED_LONG_LONG)),
        intType<MPI_Aint>("MPI_AINT", HANDLE(MPI_AINT)),
        intType<MPI_Offset>("MPI_OFFSET", HANDLE(MPI_OFFSET)),
        intType<MPI_Count>("MPI_COUNT", HANDLE(MPI_COUNT)),
        // Fortran's integers and reals, by the sizes gfortran gives them
        // (checked against MPI's extent below).
        intType<int32_t>("MPI_INTEGER", HANDLE(MPI_INTEGER)),
        intType<int8_t>("MPI_INTEGER1", HANDLE(MPI_INTEGER1)),
        intType<int16_t>("MPI_INTEGER2", HANDLE(MPI_INTEGER2)),
        intType<int32_t>("MPI_INTEGER4", HANDLE(MPI_INTEGER4)),
        intType<int64_t>("MPI_INTEGER8", HANDLE(MPI_INTEGER8)),
        floatType<float>("MPI_FLOAT", HANDLE(MPI_FLOAT)),
        floatType<double>("MPI_DOUBLE", HANDLE(MPI_DOUBLE)),
        floatType<float>("MPI_REAL", HANDLE(MPI_REAL)),
        floatType<double>("MPI_DOUBLE_PRECISION", HANDLE(MPI_DOUBLE_PRECISION)),
        floatType<float>("MPI_REAL4", HANDLE(MPI_REAL4)),
        floatType<double>("MPI_REAL8", HANDLE(MPI_REAL8)),
        lowType<chorus::Half>("MPIX_GPU_FLOAT16", HANDLE(MPIX_GPU_FLOAT16)),
        lowType<chorus::BFloat16>("MPIX_GPU_BFLOAT16", HANDLE(MPIX_GPU_BFLOAT16)),
        lowType<chorus::Fp8E4M3>("MPIX_GPU_FP8_E4M3", HANDLE(MPIX_GPU_FP8_E4M3)),
        lowType<chorus::Fp8E5M2>("MPIX_GPU_FP8_E5M2", HANDLE(MPIX_GPU_FP8_E5M2)),
        pairType<CPair<float, int>>("MPI_FLOAT_INT", HANDLE(MPI_FLOAT_INT)),
        pairType<CPair<double, int>>("MPI_DOUBLE_INT", HANDLE(MPI_DOUBLE_INT)),
        pairType<CPair<long, int>>("MPI_LONG_INT", HANDLE(MPI_LONG_INT)),
        pairType<CPair<int, int>>("MPI_2INT", HANDLE(MPI_2INT)),
        pairType<CPair<short, int>>("MPI_SHORT_INT", HANDLE(MPI_SHORT_INT)),
        pairType<CPair<float, float>>("MPI_2REAL", HANDLE(MPI_2REAL)),
        pairType<CPair<double, double>>("MPI_2DOUBLE_PRECISION", HANDLE(MPI_2DOUBLE_PRECISION)),
        pairType<CPair<int32_t, int32_t>>("MPI_2INTEGER", HANDLE(MPI_2INTEGER)),
        logicalType<uint8_t>("MPI_C_BOOL", HANDLE(MPI_C_BOOL)),
        logicalType<uint8_t>("MPI_CXX_BOOL", HANDLE(MPI_CXX_BOOL)),
        logicalType<int32_t>("MPI_LOGICAL", HANDLE(MPI_LOGICAL)),
        {"MPI_BYTE", HANDLE(MPI_BYTE), 1, Kind::Bytes, false, 0, fillBytes, formatByte, noDivide, nullptr, nullptr},
        {"MPI_CHAR", HANDLE(MPI_CHAR), 1, Kind::Bytes, false, 0, fillBytes, formatByte, noDivide, nullptr, nullptr},
        bytesType("MPI_WCHAR", HANDLE(MPI_WCHAR)),
        bytesType("MPI_PACKED", HANDLE(MPI_PACKED)),
        bytesType("MPI_CHARACTER", HANDLE(MPI_CHARACTER)),
        bytesType("MPI_LONG_DOUBLE", HANDLE(MPI_LONG_DOUBLE)),
        complexType<float>("MPI_C_COMPLEX", HANDLE(MPI_C_COMPLEX)),
        complexType<float>("MPI_C_FLOAT_COMPLEX", HANDLE(MPI_C_FLOAT_COMPLEX)),
        complexType<double>("MPI_C_DOUBLE_COMPLEX", HANDLE(MPI_C_DOUBLE_COMPLEX)),
        bytesType("MPI_C_LONG_DOUBLE_COMPLEX", HANDLE(MPI_C_LONG_DOUBLE_COMPLEX)),
        complexType<float>("MPI_CXX_FLOAT_COMPLEX", HANDLE(MPI_CXX_FLOAT_COMPLEX)),
        complexType<double>("MPI_CXX_DOUBLE_COMPLEX", HANDLE(MPI_CXX_DOUBLE_COMPLEX)),
        bytesType("MPI_CXX_LONG_DOUBLE_COMPLEX", HANDLE(MPI_CXX_LONG_DOUBLE_COMPLEX)),
        complexType<float>("MPI_COMPLEX", HANDLE(MPI_COMPLEX)),
        complexType<double>("MPI_DOUBLE_COMPLEX", HANDLE(MPI_DOUBLE_COMPLEX)),
        complexType<float>("MPI_COMPLEX8", HANDLE(MPI_COMPLEX8)),
        complexType<double>("MPI_COMPLEX16", HANDLE(MPI_COMPLEX16)),
        bytesType("MPI_REAL16", HANDLE(MPI_REAL16)),
        bytesType("MPI_COMPLEX32", HANDLE(MPI_COMPLEX32)),
        bytesType("MPI_LONG_DOUBLE_INT", HANDLE(MPI_LONG_DOUBLE_INT)),
    };
    TypeTables t;
    for (const TypeDesc &c : candidates) {
      const MPI_Datatype h = c.handle();
      if (h == MPI_DATATYPE_NULL) {
        t.absent.push_back(c.name);
        continue;
      }
      MPI_Aint lb = 0, extent = 0;
      MPI_Type_get_extent(h, &lb, &extent);
      TypeDesc d = c;
      if (d.size == 0) d.size = static_cast<size_t>(extent);
      if (lb != 0 || d.size != static_cast<size_t>(extent))
        throw std::logic_error(std::string("test table: ") + c.name + " has extent " + std::to_string(extent) +
                               " and lower bound " + std::to_string(lb) + " in this MPI, not " +
                               std::to_string(d.size) + " and 0");
      t.present.push_back(d);
    }
    // Names this MPI's header does not define at all (optional Fortran kinds).
#ifndef MPI_INTEGER16
    t.absent.push_back("MPI_INTEGER16");
#endif
#ifndef MPI_REAL2
    t.absent.push_back("MPI_REAL2");
#endif
#ifndef MPI_COMPLEX4
    t.absent.push_back("MPI_COMPLEX4");
#endif
    return t;
  }();
  return tables;
}

}  // namespace

const std::vector<TypeDesc> &allTypes() { return typeTables().present; }
const std::vector<std::string> &absentTypes() { return typeTables().absent; }

const TypeDesc &typeByName(const std::string &name) {
  for (const TypeDesc &t : allTypes())
    if (name == t.name) return t;
  throw std::invalid_argument("no test type " + name);
}

#define OPHANDLE(h) [] { return static_cast<MPI_Op>(h); }

const std::vector<OpDesc> &allOps() {
  static const std::vector<OpDesc> ops = {
      {"MPI_SUM", OPHANDLE(MPI_SUM), false, false, Gen::Sum},
      {"MPI_PROD", OPHANDLE(MPI_PROD), false, false, Gen::Prod},
      {"MPI_MIN", OPHANDLE(MPI_MIN), false, false, Gen::MinMax},
      {"MPI_MAX", OPHANDLE(MPI_MAX), false, false, Gen::MinMax},
      {"MPIX_GPU_AVG", OPHANDLE(MPIX_GPU_AVG), false, true, Gen::Avg},
      {"MPI_LAND", OPHANDLE(MPI_LAND), true, false, Gen::Logical},
      {"MPI_LOR", OPHANDLE(MPI_LOR), true, false, Gen::Logical},
      {"MPI_LXOR", OPHANDLE(MPI_LXOR), true, false, Gen::Logical},
      {"MPI_BAND", OPHANDLE(MPI_BAND), true, false, Gen::Bitwise},
      {"MPI_BOR", OPHANDLE(MPI_BOR), true, false, Gen::Bitwise},
      {"MPI_BXOR", OPHANDLE(MPI_BXOR), true, false, Gen::Bitwise},
      {"MPI_MINLOC", OPHANDLE(MPI_MINLOC), false, false, Gen::Loc},
      {"MPI_MAXLOC", OPHANDLE(MPI_MAXLOC), false, false, Gen::Loc},
  };
  return ops;
}

bool opValidFor(const OpDesc &op, const TypeDesc &t) {
  switch (t.kind) {
    case Kind::Pair: return op.gen == Gen::Loc;
    case Kind::Logical: return op.gen == Gen::Logical;
    case Kind::Complex: return std::string(op.name) == "MPI_SUM";
    case Kind::Bytes: return op.gen == Gen::Bitwise && std::string(t.name) == "MPI_BYTE";
    case Kind::Float: return !op.integerOnly && op.gen != Gen::Loc;
    default: return op.gen != Gen::Loc;
  }
}

const OpDesc &opByName(const std::string &name) {
  for (const OpDesc &o : allOps())
    if (name == o.name) return o;
  throw std::invalid_argument("no test op " + name);
}

}  // namespace chorus_test
