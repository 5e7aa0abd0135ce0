#include "api/errors.h"

#include "chorus.h"

#include <cstdarg>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "core/log.h"

namespace chorus {

namespace {

constexpr const char *kClassText[] = {
    "Chorus: invalid argument",
    "Chorus: unsupported operation",
    "Chorus: timed out waiting for a peer",
    "Chorus: internal error",
    "Chorus: a peer process died",
    "Chorus: a message arrived corrupted (CHORUS_CHECKSUM)",
    "Chorus: the ranks' calls do not match (an erroneous program: a rank in another collective, or with another count)",
};
static_assert(sizeof kClassText / sizeof *kClassText == size_t(ErrorClass::Count), "one text per error class");

// Distinct messages are few (arguments x values seen); past this bound new
// messages share their class's generic code rather than grow MPI's tables.
constexpr size_t kMaxCodes = 4096;

struct ErrorTable {
  std::mutex mutex;
  bool registered = false;
  int classes[int(ErrorClass::Count)] = {};
  std::map<std::string, int> codes;
};

ErrorTable &table() {
  static ErrorTable t;
  return t;
}

// Register every class once (t.mutex held); false when MPI refuses.
bool registerClasses(ErrorTable &t) {
  if (t.registered) return true;
  for (int i = 0; i < int(ErrorClass::Count); ++i) {
    if (MPI_Add_error_class(&t.classes[i]) != MPI_SUCCESS) return false;
    MPI_Add_error_string(t.classes[i], kClassText[i]);
  }
  t.registered = true;
  return true;
}

int codeFor(ErrorClass cls, const std::string &message) {
  ErrorTable &t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (!registerClasses(t)) return MPI_ERR_OTHER;
  const std::string key = std::to_string(int(cls)) + message;
  auto it = t.codes.find(key);
  if (it != t.codes.end()) return it->second;
  const int cl = t.classes[int(cls)];
  if (t.codes.size() >= kMaxCodes) return cl;
  int code = cl;
  if (MPI_Add_error_code(cl, &code) != MPI_SUCCESS) return cl;
  MPI_Add_error_string(code, message.c_str());
  t.codes.emplace(key, code);
  return code;
}

}  // namespace

ErrorClass errorClassOf(Status s) {
  switch (s) {
    case Status::InvalidArgument: return ErrorClass::Argument;
    case Status::Unsupported: return ErrorClass::Unsupported;
    case Status::Timeout: return ErrorClass::Timeout;
    case Status::PeerFailed: return ErrorClass::PeerFailed;
    case Status::DataCorrupt: return ErrorClass::Corrupt;
    case Status::Mismatch: return ErrorClass::Mismatch;
    default: return ErrorClass::Internal;
  }
}

int raiseError(MPI_Comm comm, ErrorClass cls, const char *fmt, ...) {
  char text[MPI_MAX_ERROR_STRING];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  CHORUS_INFO(kSubsysColl, "error raised: %s", text);
  const int code = codeFor(cls, text);
  MPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, code);
  return code;
}

}  // namespace chorus

// The kinds of chorus.h are the ErrorClass values, in order.
static_assert(MPIX_GPU_ERR_ARGUMENT == int(chorus::ErrorClass::Argument) &&
                  MPIX_GPU_ERR_UNSUPPORTED == int(chorus::ErrorClass::Unsupported) &&
                  MPIX_GPU_ERR_TIMEOUT == int(chorus::ErrorClass::Timeout) &&
                  MPIX_GPU_ERR_INTERNAL == int(chorus::ErrorClass::Internal) &&
                  MPIX_GPU_ERR_PEER_FAILED == int(chorus::ErrorClass::PeerFailed) &&
                  MPIX_GPU_ERR_CORRUPT == int(chorus::ErrorClass::Corrupt) &&
                  MPIX_GPU_ERR_MISMATCH == int(chorus::ErrorClass::Mismatch) &&
                  MPIX_GPU_ERR_MISMATCH + 1 == int(chorus::ErrorClass::Count),
              "chorus.h's MPIX_GPU_ERR_* kinds follow ErrorClass");

extern "C" int MPIX_Gpu_error_class(int kind) {
  if (kind < 0 || kind >= int(chorus::ErrorClass::Count)) return MPI_UNDEFINED;
  chorus::ErrorTable &t = chorus::table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return chorus::registerClasses(t) ? t.classes[kind] : MPI_UNDEFINED;
}
