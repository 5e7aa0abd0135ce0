// The predefined datatypes of MPI-3.1 (C, Fortran, C++ and the MINLOC /
// MAXLOC pairs), for tools that list what Chorus does with each
// (chorus_info -d).  The library itself never consults this list: it decides
// how to move a type from MPI's own description of it (mpi_types.cc).
// Optional Fortran kinds appear only where mpi.h defines them.
#pragma once

#include <mpi.h>

#ifdef MPI_INTEGER16
#define CHORUS_MPI_INTEGER16(X) X(MPI_INTEGER16)
#else
#define CHORUS_MPI_INTEGER16(X)
#endif
#ifdef MPI_REAL2
#define CHORUS_MPI_REAL2(X) X(MPI_REAL2)
#else
#define CHORUS_MPI_REAL2(X)
#endif
#ifdef MPI_COMPLEX4
#define CHORUS_MPI_COMPLEX4(X) X(MPI_COMPLEX4)
#else
#define CHORUS_MPI_COMPLEX4(X)
#endif

#define CHORUS_MPI_PREDEFINED_TYPES(X)                                                                   \
  X(MPI_CHAR) X(MPI_SHORT) X(MPI_INT) X(MPI_LONG) X(MPI_LONG_LONG_INT) X(MPI_LONG_LONG)                  \
  X(MPI_SIGNED_CHAR) X(MPI_UNSIGNED_CHAR) X(MPI_UNSIGNED_SHORT) X(MPI_UNSIGNED) X(MPI_UNSIGNED_LONG)     \
  X(MPI_UNSIGNED_LONG_LONG) X(MPI_FLOAT) X(MPI_DOUBLE) X(MPI_LONG_DOUBLE) X(MPI_WCHAR) X(MPI_C_BOOL)     \
  X(MPI_INT8_T) X(MPI_INT16_T) X(MPI_INT32_T) X(MPI_INT64_T) X(MPI_UINT8_T) X(MPI_UINT16_T)              \
  X(MPI_UINT32_T) X(MPI_UINT64_T) X(MPI_AINT) X(MPI_COUNT) X(MPI_OFFSET) X(MPI_C_COMPLEX)                \
  X(MPI_C_FLOAT_COMPLEX) X(MPI_C_DOUBLE_COMPLEX) X(MPI_C_LONG_DOUBLE_COMPLEX) X(MPI_BYTE) X(MPI_PACKED)  \
  X(MPI_INTEGER) X(MPI_REAL) X(MPI_DOUBLE_PRECISION) X(MPI_COMPLEX) X(MPI_LOGICAL) X(MPI_CHARACTER)      \
  X(MPI_DOUBLE_COMPLEX) X(MPI_INTEGER1) X(MPI_INTEGER2) X(MPI_INTEGER4) X(MPI_INTEGER8)                  \
  CHORUS_MPI_INTEGER16(X) CHORUS_MPI_REAL2(X) X(MPI_REAL4) X(MPI_REAL8) X(MPI_REAL16)                    \
  CHORUS_MPI_COMPLEX4(X) X(MPI_COMPLEX8) X(MPI_COMPLEX16) X(MPI_COMPLEX32) X(MPI_CXX_BOOL)               \
  X(MPI_CXX_FLOAT_COMPLEX) X(MPI_CXX_DOUBLE_COMPLEX) X(MPI_CXX_LONG_DOUBLE_COMPLEX) X(MPI_FLOAT_INT)     \
  X(MPI_DOUBLE_INT) X(MPI_LONG_INT) X(MPI_2INT) X(MPI_SHORT_INT) X(MPI_LONG_DOUBLE_INT) X(MPI_2REAL)     \
  X(MPI_2DOUBLE_PRECISION) X(MPI_2INTEGER)
