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
// False (with `why` set) for MPI_OP_NULL and user-defined ops (Chorus's AVG
// op is the one user-created op it knows).
bool mapOp(MPI_Op op, RedOp *out, const char **why);
// A printable name for a handle ("MPI_FLOAT", "MPIX_GPU_FLOAT16", ...).
std::string datatypeLabel(MPI_Datatype dt);
std::string opLabel(MPI_Op op);

}  // namespace chorus
