// THE table of reducible element types and reduction ops, shared by the host
// executor (host_executor.cc, host_exec_<group>.cc) and the CUDA kernels
// (cuda/kernel_table.h): one dispatch, so a type or op added here reaches
// both engines, and neither can forget one.
//
// Rows: X(DataType enumerator, C++ element type, group).  The group splits
// the instantiations into compilation units that `make -j` builds in
// parallel: 1 float and double, 2 half, bfloat16 and fp8, 3 8/16-bit
// integers, 4 32/64-bit integers, 5 the MINLOC/MAXLOC pairs.  (Group 0 is
// the copy-only collectives.)  Ops are filtered per type by IsValidTypeOp.
#pragma once

#include "coll/functors.h"

#define CHORUS_TYPE_TABLE(X)           \
  X(Float32, float, 1)                 \
  X(Float64, double, 1)                \
  X(Float16, Half, 2)                  \
  X(BFloat16, BFloat16, 2)             \
  X(Fp8E4M3, Fp8E4M3, 2)               \
  X(Fp8E5M2, Fp8E5M2, 2)               \
  X(Int8, int8_t, 3)                   \
  X(Uint8, uint8_t, 3)                 \
  X(Int16, int16_t, 3)                 \
  X(Uint16, uint16_t, 3)               \
  X(Int32, int32_t, 4)                 \
  X(Uint32, uint32_t, 4)               \
  X(Int64, int64_t, 4)                 \
  X(Uint64, uint64_t, 4)               \
  X(FloatInt, FloatIntPair, 5)         \
  X(DoubleInt, DoubleIntPair, 5)       \
  X(LongInt, LongIntPair, 5)           \
  X(ShortInt, ShortIntPair, 5)         \
  X(IntInt, IntIntPair, 5)             \
  X(FloatFloat, FloatFloatPair, 5)     \
  X(DoubleDouble, DoubleDoublePair, 5)

#define CHORUS_OP_TABLE(X) \
  X(Sum) X(Prod) X(Min) X(Max) X(Avg) X(LAnd) X(LOr) X(LXor) X(BAnd) X(BOr) X(BXor) X(MinLoc) X(MaxLoc)

namespace chorus {

constexpr int kNumTypeGroups = 6;  // 0 (copies) to 5

// The group of a reducible type (0 for Bytes and anything else).
constexpr int typeGroup(DataType d) {
#define CHORUS_GROUP_CASE(D, T, G) \
  if (d == DataType::D) return G;
  CHORUS_TYPE_TABLE(CHORUS_GROUP_CASE)
#undef CHORUS_GROUP_CASE
  return 0;
}

}  // namespace chorus
