// Shared by every Chorus translation unit, host (g++) and device (nvcc):
// the host/device qualifier, the internal status codes and the CHECK macros.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define CHORUS_HOST_DEVICE __host__ __device__
#define CHORUS_DEVICE __device__
#define CHORUS_INLINE __forceinline__
#else
#define CHORUS_HOST_DEVICE
#define CHORUS_DEVICE
#define CHORUS_INLINE inline __attribute__((always_inline))
#endif

namespace chorus {

// Status codes travel inside the library; the API layer turns them into MPI
// error codes.  Never an exception across the C ABI.
enum class Status : int {
  Ok = 0,
  InvalidArgument,  // bad user input detected locally
  Unsupported,      // valid MPI, but not something Chorus does (yet)
  Timeout,          // a peer did not answer within CHORUS_TIMEOUT
  SystemError,      // an OS call failed (errno logged)
  MpiError,         // an MPI call of the bootstrap failed
  CudaError,        // a CUDA runtime call failed
  Aborted,          // the context was broken by an earlier failure
  PeerFailed,       // a peer process died (seen from this machine)
  InternalError,    // a bug: a broken invariant
  DataCorrupt,      // a message failed its checksum (CHORUS_CHECKSUM)
  Mismatch,         // the ranks' calls differ (a message of another call arrived)
};

const char *statusName(Status s);

}  // namespace chorus

// Host-only breadcrumb logger used by the CHECK macros (see log.h).
#if !defined(__CUDA_ARCH__)
namespace chorus {
void logCheckFailure(const char *file, int line, const char *func, const char *call, const char *detail);
}
#define CHORUS_BREADCRUMB(call, detail) ::chorus::logCheckFailure(__FILE__, __LINE__, __func__, call, detail)
#else
#define CHORUS_BREADCRUMB(call, detail) ((void)0)
#endif

// Propagate a failing Status, leaving a file:line breadcrumb (a poor man's
// backtrace when CHORUS_DEBUG=INFO or TRACE).
#define CHORUS_CHECK(call)                                      \
  do {                                                          \
    ::chorus::Status chorus_s_ = (call);                        \
    if (chorus_s_ != ::chorus::Status::Ok) {                    \
      CHORUS_BREADCRUMB(#call, ::chorus::statusName(chorus_s_)); \
      return chorus_s_;                                         \
    }                                                           \
  } while (0)

// An OS call returning -1 (or a null pointer for the _PTR form) sets errno.
#define CHORUS_SYSCHECK(call)                                   \
  do {                                                          \
    if ((call) == -1) {                                         \
      ::chorus::logCheckFailure(__FILE__, __LINE__, __func__, #call, nullptr); \
      return ::chorus::Status::SystemError;                     \
    }                                                           \
  } while (0)

#define CHORUS_MPICHECK(call)                                   \
  do {                                                          \
    int chorus_rc_ = (call);                                    \
    if (chorus_rc_ != MPI_SUCCESS) {                            \
      CHORUS_BREADCRUMB(#call, "MPI call failed");              \
      return ::chorus::Status::MpiError;                        \
    }                                                           \
  } while (0)
