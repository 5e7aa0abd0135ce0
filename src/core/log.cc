#include "core/log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "core/common.h"
#include "core/params.h"

namespace chorus {

const char *statusName(Status s) {
  switch (s) {
    case Status::Ok: return "success";
    case Status::InvalidArgument: return "invalid argument";
    case Status::Unsupported: return "unsupported";
    case Status::Timeout: return "timeout";
    case Status::SystemError: return "system error";
    case Status::MpiError: return "MPI error";
    case Status::CudaError: return "CUDA error";
    case Status::Aborted: return "aborted by an earlier failure";
    case Status::PeerFailed: return "a peer process died";
    case Status::InternalError: return "internal error";
    case Status::DataCorrupt: return "a message arrived corrupted";
  }
  return "unknown status";
}

namespace {

struct LogState {
  std::once_flag once;
  LogLevel level = LogLevel::Warn;
  unsigned subsysMask = kSubsysAll;
  FILE *out = stderr;
  int rank = -1;
  char host[64] = "";
};

LogState &state() {
  static LogState s;
  return s;
}

struct SubsysName {
  const char *name;
  unsigned bit;
};
constexpr SubsysName kSubsysNames[] = {
    {"INIT", kSubsysInit}, {"COLL", kSubsysColl}, {"TRANSPORT", kSubsysTransport},
    {"TUNE", kSubsysTune}, {"TOPO", kSubsysTopo}, {"NET", kSubsysNet},
    {"CUDA", kSubsysCuda}, {"ALL", kSubsysAll},
};

unsigned parseSubsysList(const char *text) {
  bool exclude = text[0] == '^';
  unsigned mask = 0;
  std::string list(exclude ? text + 1 : text);
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    for (const auto &s : kSubsysNames)
      if (strcasecmp(item.c_str(), s.name) == 0) mask |= s.bit;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return exclude ? ~mask : mask;
}

FILE *openLogFile(const char *pattern) {
  std::string path;
  for (const char *p = pattern; *p; ++p) {
    if (p[0] == '%' && p[1] == 'h') {
      char host[64];
      gethostname(host, sizeof host);
      host[sizeof host - 1] = 0;
      path += host;
      ++p;
    } else if (p[0] == '%' && p[1] == 'p') {
      path += std::to_string(getpid());
      ++p;
    } else {
      path += *p;
    }
  }
  FILE *f = fopen(path.c_str(), "a");
  return f ? f : stderr;
}

// Set once the settings are read.  logEnabled runs on every collective, and
// std::call_once costs a thread-local access and pthread_once each time.
std::atomic<bool> g_ready{false};

void initOnce() {
  if (g_ready.load(std::memory_order_acquire)) return;
  LogState &s = state();
  std::call_once(s.once, [&s] {
    paramsInit();
    const char *level = paramString(ParamId::Debug);
    if (!strcasecmp(level, "NONE")) s.level = LogLevel::None;
    else if (!strcasecmp(level, "INFO")) s.level = LogLevel::Info;
    else if (!strcasecmp(level, "TRACE")) s.level = LogLevel::Trace;
    else s.level = LogLevel::Warn;
    s.subsysMask = parseSubsysList(paramString(ParamId::DebugSubsys));
    const char *file = paramString(ParamId::DebugFile);
    if (file && *file) s.out = openLogFile(file);
    gethostname(s.host, sizeof s.host);
    s.host[sizeof s.host - 1] = 0;
    g_ready.store(true, std::memory_order_release);
  });
}

}  // namespace

void logSetRank(int worldRank) { state().rank = worldRank; }

bool logEnabled(LogLevel level, unsigned subsys) {
  initOnce();
  const LogState &s = state();
  return level <= s.level && (level == LogLevel::Warn || (s.subsysMask & subsys));
}

void logPrint(LogLevel level, unsigned subsys, const char *file, int line, const char *func, const char *fmt,
              ...) {
  if (!logEnabled(level, subsys)) return;
  const LogState &s = state();
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *tag = level == LogLevel::Warn ? "WARN" : level == LogLevel::Info ? "INFO" : "TRACE";
  const char *base = strrchr(file, '/');
  // One fprintf per line so that lines of different ranks do not interleave.
  if (level == LogLevel::Warn)
    fprintf(s.out, "%s:%d [rank %d] CHORUS %s %s:%d %s(): %s\n", s.host, getpid(), s.rank, tag,
            base ? base + 1 : file, line, func, msg);
  else
    fprintf(s.out, "%s:%d [rank %d] CHORUS %s %s\n", s.host, getpid(), s.rank, tag, msg);
  fflush(s.out);
}

void logCheckFailure(const char *file, int line, const char *func, const char *call, const char *detail) {
  int err = errno;
  if (detail)
    logPrint(LogLevel::Info, kSubsysAll, file, line, func, "%s:%d %s failed: %s", file, line, call, detail);
  else
    CHORUS_WARN("%s failed: %s", call, strerror(err));
}

}  // namespace chorus
