// MPI datatype and op handles -> Chorus's closed set of types and ops.
#pragma once

#include <mpi.h>

#include <string>

#include "core/datatype.h"

namespace chorus {

struct TypeMapping {
  DataType type;    // Bytes for predefined types Chorus does not reduce
  size_t size;      // bytes per element in a buffer: MPI's extent
  // Null when every byte of the extent is data; else the data blocks.
  const TypeLayout *gaps = nullptr;
  // MPI_C_BOOL, MPI_CXX_BOOL, MPI_LOGICAL: reduced by the logical ops only.
  bool logicalOnly = false;
  // Complex types: the float type of each part (Bytes otherwise).  A complex
  // MPI_SUM is two independent sums, so it runs as 2 x count parts.
  DataType complexPart = DataType::Bytes;
  int components = 1;  // elements of `type` per MPI element (2 for a complex sum)
};

// False (with `why` set) for MPI_DATATYPE_NULL, derived types, and
// predefined types that cannot be moved as MPI moves them.  The layout is
// decided from MPI's own description of the type (envelope, size, extent,
// and which bytes MPI_Unpack writes), so no predefined type can slip through
// as the wrong number of bytes.
bool mapDatatype(MPI_Datatype dt, TypeMapping *out, std::string *why);

// The predefined type this thread mapped last, and its mapping: a program
// calls with one or two types, and the search and the string of
// mapDatatype are 80 of a small call's ~1000 instructions (callgrind).
// Predefined handles live as long as MPI, so the mapping cannot go stale.
// Plain data only: a thread_local that needs no constructor is read from
// its static TLS slot, without the call of a TLS wrapper and __tls_get_addr.
// (A predefined type's mapping is its element type and size, nothing else.)
struct LastPredefinedType {
  bool valid;
  MPI_Datatype handle;
  DataType type;
  size_t size;
};
extern thread_local LastPredefinedType t_lastPredefinedType __attribute__((tls_model("initial-exec")));
inline bool mapDatatypeAgain(MPI_Datatype dt, TypeMapping *out) {
  const LastPredefinedType &last = t_lastPredefinedType;
  if (!last.valid || last.handle != dt) return false;
  *out = {last.type, last.size};
  return true;
}
// False (with `why` set) for MPI_OP_NULL and user-defined ops (Chorus's AVG
// op is the one user-created op it knows).
bool mapOp(MPI_Op op, RedOp *out, const char **why);
// A printable name for a handle ("MPI_FLOAT", "MPIX_GPU_FLOAT16", ...).
std::string datatypeLabel(MPI_Datatype dt);
std::string opLabel(MPI_Op op);

}  // namespace chorus
