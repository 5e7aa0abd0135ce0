// Shared helpers of the multi-rank tests (tier 2): MPI set-up as a Boost.Test
// global fixture, the element types and ops under test, input generators whose
// expected result is exact whatever the reduction order, and a Checker that
// runs one Chorus collective and compares it bitwise with MPI's own
// collective on the same inputs, with guard bytes around every buffer.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "chorus.h"

namespace chorus_test {

// ---- element types ---------------------------------------------------------

// Bytes: any other predefined type, moved but (save MPI_BYTE's bitwise
// ops) never reduced; its size is MPI's extent.  Pair: the MINLOC/MAXLOC
// {value, index} types.  Logical: C's and Fortran's booleans (LAND, LOR,
// LXOR only).  Complex: float or double parts (MPI_SUM only).
enum class Kind { SignedInt, UnsignedInt, Float, Bytes, Pair, Logical, Complex };

// How the inputs of one call are generated (see harness.cc for the reasons).
enum class Gen { Copy, Sum, Avg, Prod, MinMax, Logical, Bitwise, Loc };

struct TypeDesc {
  const char *name;
  MPI_Datatype (*handle)();  // a function: Chorus's handles exist only after MPI_Init
  size_t size;               // bytes per element in a buffer: MPI's extent
  Kind kind;
  bool lowPrecision;  // reduced by the reference as float, converted back
  // Largest integer magnitude whose every partial sum over the ranks is exact.
  double exactSumBound;
  // Fill n elements; `first` is the global index of element 0 (so a rank's
  // block of an alltoall differs from its other blocks).
  void (*fill)(void *buf, size_t n, Gen gen, uint64_t seed, int rank, int nranks, size_t first);
  std::string (*format)(const void *elem);
  // Integer division by n truncating toward zero, or float division (AVG).
  void (*divide)(void *buf, size_t n, int nranks);
  // Low-precision types only: conversions through float.
  void (*toFloat)(const void *in, float *out, size_t n);
  void (*fromFloat)(const float *in, void *out, size_t n);
};

// Every predefined type of MPI-3.1 this MPI defines (C, Fortran, C++,
// pairs) and Chorus's own: the reducible ones first, then the pairs, then
// the logical and copy-only ones.  Types this MPI leaves out or sets to
// MPI_DATATYPE_NULL are in absentTypes() instead.
const std::vector<TypeDesc> &allTypes();
const std::vector<std::string> &absentTypes();
const TypeDesc &typeByName(const std::string &name);
inline bool isReducible(const TypeDesc &t) { return t.kind != Kind::Bytes; }

// ---- ops -------------------------------------------------------------------

struct OpDesc {
  const char *name;
  MPI_Op (*handle)();
  bool integerOnly;  // logical and bitwise ops
  bool isAvg;        // MPIX_GPU_AVG: the reference runs MPI_SUM, then divides
  Gen gen;
};

const std::vector<OpDesc> &allOps();
const OpDesc &opByName(const std::string &name);
// Whether Chorus reduces `t` with `op` (as MPI defines it: MINLOC and
// MAXLOC on pairs only, logical ops on the booleans, bitwise ones on
// MPI_BYTE); every other pair is refused with an error.
bool opValidFor(const OpDesc &op, const TypeDesc &t);

// ---- the run ---------------------------------------------------------------

enum class Coll { Allreduce, Reduce, Bcast, Allgather, ReduceScatterBlock, Alltoall };
const char *collName(Coll c);
// Allgather, reduce-scatter-block, alltoall: `count` is one rank's block.
inline bool isBlockColl(Coll c) {
  return c == Coll::Allgather || c == Coll::ReduceScatterBlock || c == Coll::Alltoall;
}
inline bool isReduction(Coll c) {
  return c == Coll::Allreduce || c == Coll::Reduce || c == Coll::ReduceScatterBlock;
}

// CHORUS_ALGO as the test script set it ("auto" when unset), for messages.
const char *algoName();
// CHORUS_SHM_SLOT_SIZE in bytes (256 KiB when unset).
size_t slotBytes();

// Element counts for a type: the fixed small list, and counts straddling one
// FIFO slot and (allreduce/reduce/bcast) nranks slots, plus 1 MiB.  `count`
// means the whole buffer for allreduce/reduce/bcast and one rank's block for
// the others.
std::vector<size_t> smallCounts();
std::vector<size_t> boundaryCounts(Coll coll, const TypeDesc &t, int nranks);

struct Case {
  Coll coll;
  const TypeDesc *type;
  const OpDesc *op;  // null for the copy collectives
  size_t count;
  bool inPlace;
  int root;  // reduce and bcast
  // MPI_FLOAT only (SUM or copy): inputs from a closed-form pattern and the
  // expected result computed locally, without MPI: for the 64 MiB cases,
  // where a hashed fill and MPI's own collective would dominate the run time.
  bool pattern = false;
};

// Runs cases on one communicator; each mismatch is reported through
// BOOST_ERROR with rank, collective, type, op, algorithm, count, in-place,
// root, first bad index and the got/expected values.
class Checker {
 public:
  Checker(MPI_Comm comm, std::string commName);
  // Runs the case; returns true when this rank saw the right result.
  bool run(const Case &c);
  int rank() const { return rank_; }
  int size() const { return size_; }
  long casesRun() const { return casesRun_; }

 private:
  void report(const Case &c, const std::string &what);
  MPI_Comm comm_;
  std::string commName_;
  int rank_ = 0, size_ = 1;
  long casesRun_ = 0;
  int reported_ = 0;
};

// Roots tried by reduce and bcast: 0, the last rank and a middle one.
std::vector<int> testRoots(int nranks);

// Helpers shared by harness.cc and harness_types.cc.
uint64_t mix(uint64_t x);  // splitmix64 finaliser
uint64_t elemHash(uint64_t seed, int rank, size_t index);
// n random bytes (any type's copy input).
void fillBytes(void *buf, size_t n, Gen gen, uint64_t seed, int rank, int nranks, size_t first);
// Toggle the sign bit of n little-endian integers of `size` bytes.
void flipTopBits(unsigned char *buf, size_t size, size_t n);
MPI_Datatype signedIntOfSize(size_t size);

// MPI_Error_string of a return code.
std::string errorString(int code);

// Open file descriptors and /dev/shm mappings of this process (leak checks).
int openFdCount();
int shmMappingCount();

}  // namespace chorus_test
