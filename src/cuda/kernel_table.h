// THE instantiation table of the CUDA kernels, shared by the launchers
// (kernels.cu) and the kernel groups (kernels_<group>.cu).
//
// A kernel exists per (collective, element type, op, protocol); the
// algorithm (ring, tree, direct, chain...) is chosen at run time inside it.
// Rows: X(DataType enumerator, C++ type, group).  Group 0 holds the
// copy-only collectives (bytes); groups 1-4 split the reductions so that
// `make -j` builds them in parallel.  Ops: every RedOp, filtered per type by
// kernelEnabled() (MPI's rules, and the developer build's short list).
#pragma once

#include "coll/functors.h"

#define CHORUS_CUDA_TYPE_TABLE(X) \
  X(Float32, float, 1)            \
  X(Float64, double, 1)           \
  X(Float16, Half, 2)             \
  X(BFloat16, BFloat16, 2)        \
  X(Fp8E4M3, Fp8E4M3, 2)          \
  X(Fp8E5M2, Fp8E5M2, 2)          \
  X(Int8, int8_t, 3)              \
  X(Uint8, uint8_t, 3)            \
  X(Int16, int16_t, 3)            \
  X(Uint16, uint16_t, 3)          \
  X(Int32, int32_t, 4)            \
  X(Uint32, uint32_t, 4)          \
  X(Int64, int64_t, 4)            \
  X(Uint64, uint64_t, 4)

#define CHORUS_CUDA_OP_TABLE(X) \
  X(Sum) X(Prod) X(Min) X(Max) X(Avg) X(LAnd) X(LOr) X(LXor) X(BAnd) X(BOr) X(BXor)

namespace chorus {

// Ops whose result bits do not depend on the signedness of an integer type
// (two's-complement wrap-around sums and products, logical and bitwise
// ops): signed integers run the unsigned kernel, which halves the integer
// instantiations.  Min, Max and Avg differ and keep their own kernels.
constexpr bool signAgnostic(RedOp o) { return o != RedOp::Min && o != RedOp::Max && o != RedOp::Avg; }
constexpr bool isSignedInteger(DataType d) {
  return d == DataType::Int8 || d == DataType::Int16 || d == DataType::Int32 || d == DataType::Int64;
}
// The unsigned twin of a signed integer type (Int8 -> Uint8, ...).
constexpr DataType unsignedTwin(DataType d) { return DataType(int(d) + 1); }
static_assert(DataType(int(DataType::Int32) + 1) == DataType::Uint32, "signed/unsigned pairs are adjacent");

// The filter: with CHORUS_CUDA_DEV_BUILD only float and (u)int32 sums (and
// the copy kernels) are built, for fast edit-compile cycles.
// (Int32 sums run the Uint32 kernel, see signAgnostic.)
template <DataType D, RedOp O>
constexpr bool kernelEnabled() {
  if (isSignedInteger(D) && signAgnostic(O)) return false;
#ifdef CHORUS_CUDA_DEV_BUILD
  return (D == DataType::Float32 || D == DataType::Uint32) && O == RedOp::Sum;
#else
  return IsValidTypeOp<D, O>::value;
#endif
}

}  // namespace chorus
