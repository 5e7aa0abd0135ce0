// What a datatype's signature is made of, so that the interposer decides
// from what MPI guarantees to match across the ranks of a call (the type
// signature), not from the datatype handle each rank happens to pass.
#pragma once

#include <mpi.h>

namespace chorus_interpose {

struct TypeShape {
  MPI_Datatype base = MPI_DATATYPE_NULL;  // the one predefined type the signature repeats
  MPI_Count per = 1;                      // base elements per element of the type
  // The type is `per` base elements laid out as an array of `base`
  // (predefined, or contiguous and dup chains of it): the user's buffer
  // passes as it is; otherwise the call is staged (stageIn/stageOut).
  bool dense = true;
};

// False when the signature is not one predefined type repeated (a struct
// of an int and a double, Fortran parameterised types): such a call stays
// MPI's on every rank, since every rank's signature is the same.  Derived
// types are walked once and the answer cached on the type (an attribute).
bool typeShape(MPI_Datatype dt, TypeShape *out);

// Staging for a type that is not dense: `count` elements of `dt` at `user`
// as count * per elements of the base type in a buffer of their own, and
// back.  stageIn returns nullptr when memory runs out (copying the data in
// when `copy`).
// A negative count or one whose bytes overflow stages nothing (nullptr):
// callers send negative counts to MPI, whose checks raise MPI_ERR_COUNT.
void *stageIn(const void *user, MPI_Count count, MPI_Datatype dt, const TypeShape &shape, bool copy, MPI_Comm comm);
int stageOut(const void *staged, void *user, MPI_Count count, MPI_Datatype dt, const TypeShape &shape, MPI_Comm comm);
void stageFree(void *staged);
// Staging memory ran out: MPI_ERR_NO_MEM through `comm`'s error handler,
// as MPI raises its own errors, and returned.
int stagingFailed(MPI_Comm comm);

}  // namespace chorus_interpose
