// Element types and reduction ops of the perf tools: names, sizes, MPI
// handles, conversion from and to double, and the input patterns that make
// every expected result exact whatever order the library reduces in.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>

namespace perf {

enum class Type : uint8_t {
  Int8, Uint8, Int32, Uint32, Int64, Uint64,
  Float16, BFloat16, Fp8E4M3, Fp8E5M2, Float32, Float64,
  Count
};

enum class Op : uint8_t { Sum, Prod, Min, Max, Avg, Count };

struct TypeInfo {
  const char *name;   // as -d spells it
  size_t size;        // bytes per element
  bool isFloat;
  bool isSigned;
  int mantissaBits;   // floats: explicit mantissa bits (precision - 1)
  // Largest M such that every integer in [-M, M] (or [0, M]) is exact in the
  // type; capped at 2^20 for the wide types so that patterns stay small.
  int64_t exactLimit;
  // Largest k such that 2^k fits (and is exact): bounds PROD patterns.
  int pow2Limit;
  bool mpiNative;     // MPI reduces it with its predefined ops
};

const TypeInfo &typeInfo(Type t);
const char *opName(Op op);
// Parse -d / -o values; false if unknown.
bool parseType(const char *s, Type *t);
bool parseOp(const char *s, Op *op);
// A list of the accepted names, for the usage message.
const char *typeNames();
const char *opNames();

MPI_Datatype mpiType(Type t);
MPI_Op chorusOp(Op op);  // the handle passed to Chorus (MPIX_GPU_AVG for avg)

// Element `i` of a buffer of type `t`, as a double, and back.  Encoding rounds
// to nearest even (floats) or converts (integers); NaN encodes to a NaN.
double loadElement(Type t, const void *buf, size_t i);
void storeElement(Type t, void *buf, size_t i, double v);

// Input values for a test: value(rank, index) is what `rank` contributes at
// global element `index`; reduced(index) is the exact result of reducing
// value(0..n-1, index) with `op`.  Which pattern is used depends on the op
// (see perf/README.md, "Correctness check").
class DataGen {
 public:
  // reduces=false: copy-only collective, values are merely distinct-ish.
  DataGen(Type t, Op op, bool reduces, int nranks);
  double value(int rank, size_t index) const;
  double reduced(size_t index) const;
  // Whether `got` is right for `expected`: exact equality, except AVG on
  // floating types, which may round (NCCL-style pre-multiplied averages).
  bool matches(double got, double expected) const;

 private:
  enum class Pattern { Copy, Sum, SparseOnes, Prod, MinMax };
  Type type_;
  Op op_;
  int nranks_;
  Pattern pattern_;
  int64_t range_;    // values drawn in [0, range_] (then shifted if signed)
  int64_t shift_;    // subtracted from the drawn value
  int64_t period_;   // SparseOnes and Prod: one rank in `period_` is special
  int64_t scale_;    // integer AVG: every value is a multiple of nranks
  double tolerance_; // relative, AVG on floats only
};

// MPI's own op for a (type, op) pair, for the --mpi reference run.  Returns
// MPI_OP_NULL when MPI cannot do it, with `why` set; the minifloat types get
// a user-defined op that reduces in float and rounds back (host memory only).
MPI_Op mpiReferenceOp(Type t, Op op, bool deviceMemory, const char **why);

}  // namespace perf
