// What the small MPI test programs (test_check, test_checksum, ...) need to
// assert on an error: its text as MPI_Error_string gives it, and whether a
// text names something.  Header-only: these programs do not link the
// Boost-based harness.
#pragma once

#include <mpi.h>

#include <string>

inline std::string errorText(int rc) {
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  return std::string(msg, size_t(len));
}

inline bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }
