#include "core/log.h"

#include <fcntl.h>
#include <sys/stat.h>
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
    case Status::Mismatch: return "the ranks' calls do not match";
  }
  return "unknown status";
}

int openOwnFile(const char *path, bool append) {
  // O_NONBLOCK: opening a FIFO someone planted would otherwise wait for a
  // reader.  No O_TRUNC: a file is emptied only once it is known ours.
  const int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (append ? O_APPEND : 0);
  const int fd = open(path, flags, 0600);
  if (fd < 0) {
    if (errno == ENXIO) errno = EPERM;  // a FIFO without a reader, or a device: not a regular file
    return -1;
  }
  struct stat st;
  int err = 0;
  if (fstat(fd, &st) != 0) err = errno;
  else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) err = EPERM;
  else if (fcntl(fd, F_SETFL, append ? O_APPEND : 0) != 0) err = errno;
  else if (!append && ftruncate(fd, 0) != 0) err = errno;
  if (!err) fchmod(fd, 0600);  // an older file of ours; some file systems cannot, which is no reason to fail
  if (err) {
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
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
  // Appended to, as several processes may share one file; but never
  // through a link nor into a file of another user (see openOwnFile).
  const int fd = openOwnFile(path.c_str(), true);
  FILE *f = fd >= 0 ? fdopen(fd, "a") : nullptr;
  if (f) return f;
  const int err = errno;
  if (fd >= 0) close(fd);
  // Not CHORUS_WARN: the logger is being set up.
  char host[64] = "";
  gethostname(host, sizeof host - 1);
  fprintf(stderr, "%s:%d [rank -1] CHORUS WARN log.cc:%d openLogFile(): CHORUS_DEBUG_FILE = %s: cannot write %s: %s; "
                  "logging to standard error\n", host, int(getpid()), __LINE__, pattern, path.c_str(),
          err == ELOOP ? "it is a symbolic link" : err == EPERM ? "not a regular file of this user with one link"
                                                                : strerror(err));
  return stderr;
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
