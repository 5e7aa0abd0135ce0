// Element types, conversions and exact input patterns (see datatypes.h).
#include "datatypes.h"

#include <chorus.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace perf {
namespace {

constexpr int64_t kWide = int64_t(1) << 20;

// Indexed by Type.
const TypeInfo kTypes[] = {
    // name        size float  signed mant exact  pow2 mpiNative
    {"int8",       1, false, true,  0,  127,   6,  true},
    {"uint8",      1, false, false, 0,  255,   7,  true},
    {"int32",      4, false, true,  0,  kWide, 16, true},
    {"uint32",     4, false, false, 0,  kWide, 16, true},
    {"int64",      8, false, true,  0,  kWide, 16, true},
    {"uint64",     8, false, false, 0,  kWide, 16, true},
    {"half",       2, true,  true,  10, 2048,  15, false},
    {"bfloat16",   2, true,  true,  7,  256,   16, false},
    {"fp8_e4m3",   1, true,  true,  3,  16,    8,  false},
    {"fp8_e5m2",   1, true,  true,  2,  8,     15, false},
    {"float",      4, true,  true,  23, kWide, 16, true},
    {"double",     8, true,  true,  52, kWide, 16, true},
};
static_assert(sizeof(kTypes) / sizeof(kTypes[0]) == size_t(Type::Count), "type table");

const char *const kOpNames[] = {"sum", "prod", "min", "max", "avg"};

// A small IEEE-style binary format: half, bfloat16 and the two fp8 formats.
// E4M3 has no infinities: its only NaN is S.1111.111 and the rest of the top
// exponent holds normal numbers (max 448).
struct MiniFloat {
  int expBits;
  int mantBits;
  bool hasInf;
};

const MiniFloat kHalf = {5, 10, true};
const MiniFloat kBf16 = {8, 7, true};
const MiniFloat kE4m3 = {4, 3, false};
const MiniFloat kE5m2 = {5, 2, true};

double decodeMini(uint32_t bits, const MiniFloat &f) {
  const uint32_t mantMask = (1u << f.mantBits) - 1;
  const uint32_t expMax = (1u << f.expBits) - 1;
  const int bias = (1 << (f.expBits - 1)) - 1;
  const bool negative = (bits >> (f.expBits + f.mantBits)) & 1;
  const uint32_t e = (bits >> f.mantBits) & expMax;
  const uint32_t m = bits & mantMask;
  double v;
  if (e == expMax && f.hasInf) {
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (e == expMax && m == mantMask) {
    v = std::numeric_limits<double>::quiet_NaN();  // E4M3's only NaN
  } else if (e == 0) {
    v = std::ldexp(double(m), 1 - bias - f.mantBits);
  } else {
    v = std::ldexp(double(m | (1u << f.mantBits)), int(e) - bias - f.mantBits);
  }
  return negative ? -v : v;
}

uint32_t encodeMini(double x, const MiniFloat &f) {
  const uint32_t expMax = (1u << f.expBits) - 1;
  const uint32_t mantMask = (1u << f.mantBits) - 1;
  const uint32_t nanBits = (expMax << f.mantBits) | mantMask;
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t sign = std::signbit(x) ? 1u << (f.expBits + f.mantBits) : 0;
  if (std::isnan(x)) return nanBits;
  const double a = std::fabs(x);
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);
  e -= 1;  // a = 1.xxx * 2^e
  const int emin = 1 - bias;
  uint32_t field, mant;
  if (e < emin) {  // subnormal: the quantum is 2^(emin - mantBits)
    // nearbyint rounds half to even in the default rounding mode.
    const double q = std::nearbyint(std::ldexp(a, f.mantBits - emin));
    return sign | uint32_t(q);  // q == 2^mantBits is the smallest normal
  }
  double q = std::nearbyint(std::ldexp(a, f.mantBits - e));
  if (q >= std::ldexp(1.0, f.mantBits + 1)) {
    q /= 2;
    e += 1;
  }
  field = uint32_t(e + bias);
  mant = uint32_t(q) & mantMask;
  const bool overflow = f.hasInf ? field >= expMax : (field > expMax || (field == expMax && mant == mantMask));
  if (overflow) return f.hasInf ? sign | (expMax << f.mantBits) : sign | nanBits;
  return sign | (field << f.mantBits) | mant;
}

const MiniFloat *miniFormat(Type t) {
  switch (t) {
    case Type::Float16: return &kHalf;
    case Type::BFloat16: return &kBf16;
    case Type::Fp8E4M3: return &kE4m3;
    case Type::Fp8E5M2: return &kE5m2;
    default: return nullptr;
  }
}

// A well-mixed 64-bit hash of (rank, index) (splitmix64's finalizer).
uint64_t mix(int rank, size_t index) {
  uint64_t z = uint64_t(index) * 0x9E3779B97F4A7C15ull + uint64_t(rank + 1) * 0xD1B54A32D192ED03ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

const TypeInfo &typeInfo(Type t) { return kTypes[size_t(t)]; }
const char *opName(Op op) { return kOpNames[size_t(op)]; }

bool parseType(const char *s, Type *t) {
  for (size_t i = 0; i < size_t(Type::Count); ++i) {
    if (std::strcmp(s, kTypes[i].name) == 0) {
      *t = Type(i);
      return true;
    }
  }
  return false;
}

bool parseOp(const char *s, Op *op) {
  for (size_t i = 0; i < size_t(Op::Count); ++i) {
    if (std::strcmp(s, kOpNames[i]) == 0) {
      *op = Op(i);
      return true;
    }
  }
  return false;
}

const char *typeNames() {
  return "int8 uint8 int32 uint32 int64 uint64 half bfloat16 fp8_e4m3 fp8_e5m2 float double";
}
const char *opNames() { return "sum prod min max avg"; }

MPI_Datatype mpiType(Type t) {
  switch (t) {
    case Type::Int8: return MPI_INT8_T;
    case Type::Uint8: return MPI_UINT8_T;
    case Type::Int32: return MPI_INT32_T;
    case Type::Uint32: return MPI_UINT32_T;
    case Type::Int64: return MPI_INT64_T;
    case Type::Uint64: return MPI_UINT64_T;
    case Type::Float16: return MPIX_GPU_FLOAT16;
    case Type::BFloat16: return MPIX_GPU_BFLOAT16;
    case Type::Fp8E4M3: return MPIX_GPU_FP8_E4M3;
    case Type::Fp8E5M2: return MPIX_GPU_FP8_E5M2;
    case Type::Float32: return MPI_FLOAT;
    case Type::Float64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
  }
}

MPI_Op chorusOp(Op op) {
  switch (op) {
    case Op::Sum: return MPI_SUM;
    case Op::Prod: return MPI_PROD;
    case Op::Min: return MPI_MIN;
    case Op::Max: return MPI_MAX;
    case Op::Avg: return MPIX_GPU_AVG;
    default: return MPI_OP_NULL;
  }
}

double loadElement(Type t, const void *buf, size_t i) {
  switch (t) {
    case Type::Int8: return static_cast<const int8_t *>(buf)[i];
    case Type::Uint8: return static_cast<const uint8_t *>(buf)[i];
    case Type::Int32: return static_cast<const int32_t *>(buf)[i];
    case Type::Uint32: return static_cast<const uint32_t *>(buf)[i];
    case Type::Int64: return double(static_cast<const int64_t *>(buf)[i]);
    case Type::Uint64: return double(static_cast<const uint64_t *>(buf)[i]);
    case Type::Float16:
    case Type::BFloat16: return decodeMini(static_cast<const uint16_t *>(buf)[i], *miniFormat(t));
    case Type::Fp8E4M3:
    case Type::Fp8E5M2: return decodeMini(static_cast<const uint8_t *>(buf)[i], *miniFormat(t));
    case Type::Float32: return static_cast<const float *>(buf)[i];
    case Type::Float64: return static_cast<const double *>(buf)[i];
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

void storeElement(Type t, void *buf, size_t i, double v) {
  switch (t) {
    case Type::Int8: static_cast<int8_t *>(buf)[i] = int8_t(int64_t(v)); break;
    case Type::Uint8: static_cast<uint8_t *>(buf)[i] = uint8_t(int64_t(v)); break;
    case Type::Int32: static_cast<int32_t *>(buf)[i] = int32_t(int64_t(v)); break;
    case Type::Uint32: static_cast<uint32_t *>(buf)[i] = uint32_t(int64_t(v)); break;
    case Type::Int64: static_cast<int64_t *>(buf)[i] = int64_t(v); break;
    case Type::Uint64: static_cast<uint64_t *>(buf)[i] = uint64_t(int64_t(v)); break;
    case Type::Float16:
    case Type::BFloat16: static_cast<uint16_t *>(buf)[i] = uint16_t(encodeMini(v, *miniFormat(t))); break;
    case Type::Fp8E4M3:
    case Type::Fp8E5M2: static_cast<uint8_t *>(buf)[i] = uint8_t(encodeMini(v, *miniFormat(t))); break;
    case Type::Float32: static_cast<float *>(buf)[i] = float(v); break;
    case Type::Float64: static_cast<double *>(buf)[i] = v; break;
    default: break;
  }
}

// Patterns (M = exactLimit, n = nranks):
//  Copy     any value in [0, M]: copies are exact for every value.
//  Sum      values in [0, K] (shifted to [-K/2, K-K/2] if signed) with
//           K = M/n, so every partial sum stays within [-M, M].
//  SparseOnes  when n > M: 1 on one rank in `period`, else 0.
//  Prod     2 on one rank in `period` (sign flipped at random if signed),
//           else 1: products are powers of two below 2^pow2Limit.
//  MinMax   any value in a small range: min and max are exact.
// Integer AVG multiplies Sum values by n so that the sum divides exactly.
DataGen::DataGen(Type t, Op op, bool reduces, int nranks)
    : type_(t), op_(op), nranks_(nranks), pattern_(Pattern::Copy), range_(0),
      shift_(0), period_(1), scale_(1), tolerance_(0) {
  const TypeInfo &info = typeInfo(t);
  const int64_t n = nranks;
  int64_t limit = info.exactLimit;
  if (!reduces) {
    range_ = limit;
    return;
  }
  switch (op) {
    case Op::Prod:
      pattern_ = Pattern::Prod;
      period_ = std::max<int64_t>(2, ceilDiv(n, info.pow2Limit));
      return;
    case Op::Min:
    case Op::Max:
      pattern_ = Pattern::MinMax;
      range_ = std::min<int64_t>(limit, 64);
      shift_ = info.isSigned ? range_ / 2 : 0;
      return;
    case Op::Avg:
      if (info.isFloat) {
        tolerance_ = double(n) * std::ldexp(1.0, -info.mantissaBits);
      } else {
        scale_ = n;
        limit /= n;
      }
      break;
    default:
      break;
  }
  // Sum, and Avg on the reduced limit.
  if (limit >= n || limit == 0) {
    pattern_ = Pattern::Sum;
    range_ = limit / n;
    shift_ = info.isSigned ? range_ / 2 : 0;
  } else {
    pattern_ = Pattern::SparseOnes;
    period_ = ceilDiv(n, limit);
  }
}

double DataGen::value(int rank, size_t index) const {
  const uint64_t h = mix(rank, index);
  switch (pattern_) {
    case Pattern::Copy:
      return double(int64_t(h % uint64_t(range_ + 1)));
    case Pattern::Sum:
    case Pattern::MinMax:
      return double((int64_t(h % uint64_t(range_ + 1)) - shift_) * scale_);
    case Pattern::SparseOnes:
      return (uint64_t(rank) + index) % uint64_t(period_) == 0 ? double(scale_) : 0.0;
    case Pattern::Prod: {
      const double v = (uint64_t(rank) + index) % uint64_t(period_) == 0 ? 2.0 : 1.0;
      return typeInfo(type_).isSigned && (h >> 60) == 0 ? -v : v;
    }
  }
  return 0;
}

double DataGen::reduced(size_t index) const {
  double acc = value(0, index);
  for (int r = 1; r < nranks_; ++r) {
    const double v = value(r, index);
    switch (op_) {
      case Op::Sum:
      case Op::Avg: acc += v; break;
      case Op::Prod: acc *= v; break;
      case Op::Min: acc = std::min(acc, v); break;
      case Op::Max: acc = std::max(acc, v); break;
      default: break;
    }
  }
  return op_ == Op::Avg ? acc / nranks_ : acc;
}

bool DataGen::matches(double got, double expected) const {
  if (tolerance_ == 0) return got == expected;
  return std::fabs(got - expected) <= tolerance_ * std::max(1.0, std::fabs(expected));
}

// MPI reference op for the minifloat types: decode both operands, combine in
// double, round back.  Exact for the patterns above, whose partial results
// are all representable.
namespace {

Type miniTypeOf(MPI_Datatype dt) {
  for (Type t : {Type::Float16, Type::BFloat16, Type::Fp8E4M3, Type::Fp8E5M2}) {
    if (mpiType(t) == dt) return t;
  }
  return Type::Count;
}

template <Op kOp>
void miniReduce(void *in, void *inout, int *len, MPI_Datatype *dt) {
  const Type t = miniTypeOf(*dt);
  if (t == Type::Count) MPI_Abort(MPI_COMM_WORLD, 3);  // only ever registered for these
  for (int i = 0; i < *len; ++i) {
    const double a = loadElement(t, in, size_t(i));
    const double b = loadElement(t, inout, size_t(i));
    double r = 0;
    switch (kOp) {
      case Op::Sum: r = a + b; break;
      case Op::Prod: r = a * b; break;
      case Op::Min: r = std::min(a, b); break;
      case Op::Max: r = std::max(a, b); break;
      default: break;
    }
    storeElement(t, inout, size_t(i), r);
  }
}

MPI_Op createOp(MPI_User_function *fn) {
  MPI_Op op = MPI_OP_NULL;
  MPI_Op_create(fn, /*commute=*/1, &op);
  return op;
}

}  // namespace

MPI_Op mpiReferenceOp(Type t, Op op, bool deviceMemory, const char **why) {
  *why = nullptr;
  if (op == Op::Avg) {
    *why = "MPI has no AVG op";
    return MPI_OP_NULL;
  }
  if (typeInfo(t).mpiNative) return chorusOp(op);
  if (deviceMemory) {
    *why = "MPI cannot reduce this type in device memory (its user op runs on the host)";
    return MPI_OP_NULL;
  }
  static MPI_Op ops[size_t(Op::Count)] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
  MPI_Op &slot = ops[size_t(op)];
  if (slot == MPI_OP_NULL) {
    switch (op) {
      case Op::Sum: slot = createOp(miniReduce<Op::Sum>); break;
      case Op::Prod: slot = createOp(miniReduce<Op::Prod>); break;
      case Op::Min: slot = createOp(miniReduce<Op::Min>); break;
      case Op::Max: slot = createOp(miniReduce<Op::Max>); break;
      default: break;
    }
  }
  return slot;
}

}  // namespace perf
