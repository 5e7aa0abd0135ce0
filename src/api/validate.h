// Argument checks shared by every entry point.  Each check that fails
// raises the error through the communicator's handler (once) and makes the
// call return its code; the message names the call, the argument and value.
#pragma once

#include <mpi.h>

#include <string>

#include "api/errors.h"
#include "api/mpi_types.h"
#include "coll/algorithms.h"

namespace chorus {

struct Context;

class ApiCall {
 public:
  ApiCall(const char *name, MPI_Comm comm);

  bool failed() const { return code_ != MPI_SUCCESS; }
  int code() const { return code_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }
  const char *name() const { return name_; }
  // The communicator's Chorus context when checkComm found one cached.
  Context *context() const { return ctx_; }

  // Each returns false (after raising) when the argument is bad.
  bool checkComm();
  bool checkCount(const char *arg, MPI_Count count);
  bool checkRoot(int root);
  bool checkType(const char *arg, MPI_Datatype dt, TypeMapping *out);
  bool checkReduction(MPI_Datatype dt, MPI_Op op, TypeMapping *type, RedOp *redop);
  bool checkBuffer(const char *arg, const void *buf, MPI_Count count);
  bool checkNotInPlace(const char *arg, const void *buf);
  bool checkBytes(MPI_Count count, size_t elemSize, int blocks);
  bool checkSameSignature(MPI_Count sendcount, MPI_Datatype sendtype, const TypeMapping &send, MPI_Count recvcount,
                          MPI_Datatype recvtype, const TypeMapping &recv);

  // Raise an error of class `cls` with "name: " prefixed to the message.
  int fail(ErrorClass cls, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
  // Turn an internal status into an MPI error, with `detail` when known.
  int failStatus(Status s, const char *detail);

 private:
  const char *name_;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 0;
  int code_ = MPI_SUCCESS;
  Context *ctx_ = nullptr;
};

}  // namespace chorus
