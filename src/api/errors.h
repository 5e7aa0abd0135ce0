// MPI error codes for Chorus failures.  Each distinct message gets its own
// code (registered once under one of Chorus's error classes), so that
// MPI_Error_string on the code a call returned names the argument and value.
#pragma once

#include <mpi.h>

#include "core/common.h"

namespace chorus {

enum class ErrorClass : int { Argument, Unsupported, Timeout, Internal, PeerFailed, Corrupt, Mismatch, Count };

ErrorClass errorClassOf(Status s);

// Format the message, obtain its code, call `comm`'s error handler (MPI's
// rules: MPI_COMM_WORLD when `comm` is MPI_COMM_NULL) and return the code.
int raiseError(MPI_Comm comm, ErrorClass cls, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

}  // namespace chorus
