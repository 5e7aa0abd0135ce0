// The CUDA side of the instantiation table (coll/type_table.h, shared with
// the host executor), used by the launchers (kernels.cu) and the kernel
// groups (kernels_<group>.cu).
//
// A kernel exists per (collective, element type, op, protocol); the
// algorithm (ring, tree, direct, chain...) is chosen at run time inside it.
// Group 0 holds the copy-only collectives (bytes); groups 1-5 the
// reductions.  Ops: every RedOp, filtered per type by kernelEnabled()
// (MPI's rules, and the developer build's short list).  Elements wider than
// 8 bytes (the 16-byte pairs) have Simple kernels only: an LL line carries
// 8 bytes, and the functor needs a whole element (cuda_executor.cc picks
// Simple for them).
#pragma once

#include "coll/type_table.h"

namespace chorus {

// Ops whose result bits do not depend on the signedness of an integer type
// (two's-complement wrap-around sums and products, logical and bitwise
// ops): signed integers run the unsigned kernel, which halves the integer
// instantiations.  Min, Max and Avg differ and keep their own kernels.
constexpr bool signAgnostic(RedOp o) {
  return o != RedOp::Min && o != RedOp::Max && o != RedOp::Avg && o != RedOp::MinLoc && o != RedOp::MaxLoc;
}
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
