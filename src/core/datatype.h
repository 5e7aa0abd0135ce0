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
  // {value, index} pairs for MPI_MINLOC/MPI_MAXLOC, laid out as MPI's C
  // structs (functors.h): FloatInt = MPI_FLOAT_INT, DoubleInt =
  // MPI_DOUBLE_INT (4 bytes of padding), LongInt = MPI_LONG_INT (4),
  // ShortInt = MPI_SHORT_INT (2, between the fields), IntInt = MPI_2INT and
  // MPI_2INTEGER, FloatFloat = MPI_2REAL, DoubleDouble = MPI_2DOUBLE_PRECISION.
  FloatInt, DoubleInt, LongInt, ShortInt, IntInt, FloatFloat, DoubleDouble,
  // Any other predefined MPI type (MPI_BYTE, MPI_LONG_DOUBLE, complex...):
  // movable by the copy-only collectives, never reduced.
  Bytes,
  Count
};

enum class RedOp : uint8_t {
  Sum, Prod, Min, Max, Avg,       // every numeric type
  LAnd, LOr, LXor,                // integers (MPI: logical ops on integers)
  BAnd, BOr, BXor,                // integers
  MinLoc, MaxLoc,                 // the {value, index} pair types only
  Count
};

constexpr int kNumReducibleTypes = static_cast<int>(DataType::Bytes);
constexpr int kNumRedOps = static_cast<int>(RedOp::Count);

inline bool isIntegerType(DataType t) { return t <= DataType::Uint64; }
inline bool isFloatType(DataType t) { return t >= DataType::Float16 && t <= DataType::Float64; }
inline bool isPairType(DataType t) { return t >= DataType::FloatInt && t <= DataType::DoubleDouble; }
inline bool isBitwiseOp(RedOp op) { return op >= RedOp::LAnd && op <= RedOp::BXor; }
inline bool isLocOp(RedOp op) { return op == RedOp::MinLoc || op == RedOp::MaxLoc; }

// Where an element's data lies inside its extent, for a predefined MPI type
// whose size is smaller than its extent (MPI_DOUBLE_INT: 12 bytes of data in
// 16).  MPI never writes the gaps of a receive buffer, so neither may Chorus:
// such collectives land in staging memory and only the data blocks are
// copied out (copyDataBlocks).
struct TypeLayout {
  static constexpr int kMaxBlocks = 4;
  int nblocks = 0;
  struct Block {
    uint32_t offset, length;
  } blocks[kMaxBlocks];
};

// For each of `count` elements of `extent` bytes, copy the layout's data
// blocks from `from` to `to` (host memory); the gaps of `to` stay as they are.
void copyDataBlocks(const void *from, void *to, size_t count, size_t extent, const TypeLayout &layout);

// Size in bytes of one element of a reducible type.
size_t dataTypeSize(DataType t);
const char *dataTypeName(DataType t);
const char *redOpName(RedOp op);
// Whether `op` is defined on `t` (MPI's rules: logical and bitwise ops only
// on integers; every numeric op on every numeric type; MINLOC and MAXLOC on
// the pair types and nothing else on them).
bool isValidTypeOp(DataType t, RedOp op);

}  // namespace chorus
