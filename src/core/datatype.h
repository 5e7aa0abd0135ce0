// Chorus's element types and reduction ops: the closed set the kernels and
// host functors are instantiated for.  MPI handles map onto these in
// src/api/mpi_types.cc; derived types and user ops are refused there.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chorus {

enum class DataType : uint8_t {
  Int8, Uint8, Int16, Uint16, Int32, Uint32, Int64, Uint64,
  Float16, BFloat16, Fp8E4M3, Fp8E5M2, Float32, Float64,
  // Any other predefined MPI type (MPI_BYTE, MPI_LONG_DOUBLE, complex...):
  // movable by the copy-only collectives, never reduced.
  Bytes,
  Count
};

enum class RedOp : uint8_t {
  Sum, Prod, Min, Max, Avg,       // every numeric type
  LAnd, LOr, LXor,                // integers (MPI: logical ops on integers)
  BAnd, BOr, BXor,                // integers
  Count
};

constexpr int kNumReducibleTypes = static_cast<int>(DataType::Bytes);
constexpr int kNumRedOps = static_cast<int>(RedOp::Count);

inline bool isIntegerType(DataType t) { return t <= DataType::Uint64; }
inline bool isFloatType(DataType t) { return t >= DataType::Float16 && t <= DataType::Float64; }
inline bool isBitwiseOp(RedOp op) { return op >= RedOp::LAnd; }

// Size in bytes of one element of a reducible type.
size_t dataTypeSize(DataType t);
const char *dataTypeName(DataType t);
const char *redOpName(RedOp op);
// Whether `op` is defined on `t` (MPI's rules: logical and bitwise ops only
// on integers; every numeric op on every numeric type).
bool isValidTypeOp(DataType t, RedOp op);

}  // namespace chorus
