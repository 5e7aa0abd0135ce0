#include "core/log.h"

#include <dlfcn.h>
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

bool isOwnPlainFile(const struct stat &st) {
  return S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_nlink == 1;
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
  else if (!isOwnPlainFile(st)) err = EPERM;
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

int writeAll(int fd, const void *buf, size_t len) {
  const char *bytes = static_cast<const char *>(buf);
  for (size_t done = 0; done < len;) {
    const ssize_t n = write(fd, bytes + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += size_t(n);
  }
  return 0;
}

size_t expandFilePattern(const char *pattern, const char *host, int rank, const char *job, char *out,
                         size_t outLen) {
  size_t len = 0, full = 0;
  auto append = [&](const char *text) {
    for (; *text; ++text, ++full)
      if (len + 1 < outLen) out[len++] = *text;
  };
  char number[24];
  for (const char *p = pattern; *p; ++p) {
    const char *with = nullptr;
    if (p[0] == '%' && p[1] == 'h') {
      with = host;
    } else if (p[0] == '%' && p[1] == 'j' && job) {
      with = job;
    } else if (p[0] == '%' && (p[1] == 'p' || p[1] == 'r')) {
      snprintf(number, sizeof number, "%d", p[1] == 'p' ? int(getpid()) : rank);
      with = number;
    }
    if (with) {
      append(with);
      ++p;
    } else {
      const char one[2] = {*p, '\0'};
      append(one);
    }
  }
  if (outLen) out[len] = '\0';
  return full;
}

namespace {

struct LogState {
  std::once_flag once;
  LogLevel level = LogLevel::Warn;
  unsigned subsysMask = kSubsysAll;
  // Replaced once, when a CHORUS_DEBUG_FILE with %r is opened at logSetRank,
  // while other threads may be printing.
  std::atomic<FILE *> out{stderr};
  std::atomic<FILE *> headerDoneFor{nullptr};  // the output whose first INFO line was the header
  const char *pendingFile = nullptr;           // CHORUS_DEBUG_FILE waiting for the rank (%r)
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
    {"CUDA", kSubsysCuda}, {"STATS", kSubsysStats}, {"ALL", kSubsysAll},
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

FILE *openLogFile(const char *pattern, const char *host, int rank) {
  std::string path(expandFilePattern(pattern, host, rank, nullptr, nullptr, 0) + 1, '\0');
  expandFilePattern(pattern, host, rank, nullptr, &path[0], path.size());
  path.pop_back();
  // Appended to, as several processes may share one file; but never
  // through a link nor into a file of another user (see openOwnFile).
  const int fd = openOwnFile(path.c_str(), true);
  FILE *f = fd >= 0 ? fdopen(fd, "a") : nullptr;
  if (f) return f;
  const int err = errno;
  if (fd >= 0) close(fd);
  // Not CHORUS_WARN: the logger is being set up.
  fprintf(stderr, "%s:%d [rank %d] CHORUS WARN log.cc:%d openLogFile(): CHORUS_DEBUG_FILE = %s: cannot write %s: %s; "
                  "logging to standard error\n", host, int(getpid()), rank, __LINE__, pattern, path.c_str(),
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
    gethostname(s.host, sizeof s.host);
    s.host[sizeof s.host - 1] = 0;
    const char *file = paramString(ParamId::DebugFile);
    if (file && *file && strstr(file, "%r") && s.rank < 0) s.pendingFile = file;
    else if (file && *file) s.out.store(openLogFile(file, s.host, s.rank));
    g_ready.store(true, std::memory_order_release);
  });
}

// Which build wrote a log, and from which file: a job may load another
// libchorus than the one its user thinks (LD_LIBRARY_PATH, rpath, a preload).
void printHeaderOnce(FILE *out) {
  LogState &s = state();
  FILE *expected = s.headerDoneFor.load();
  if (expected == out || !s.headerDoneFor.compare_exchange_strong(expected, out)) return;
  Dl_info where;
  const bool found = dladdr(reinterpret_cast<void *>(&expandFilePattern), &where) != 0 && where.dli_fname;
  fprintf(out, "%s:%d [rank %d] CHORUS INFO Chorus %s (%s), library %s; CHORUS_DEBUG=%s, CHORUS_DEBUG_SUBSYS=%s\n",
          s.host, getpid(), s.rank,
#ifdef PACKAGE_VERSION
          PACKAGE_VERSION,
#else
          "(unknown version)",
#endif
#ifdef CHORUS_HAVE_CUDA
          "CUDA",
#else
          "host only",
#endif
          found ? where.dli_fname : "(not found)", paramString(ParamId::Debug), paramString(ParamId::DebugSubsys));
}

}  // namespace

void logSetRank(int worldRank) {
  LogState &s = state();
  s.rank = worldRank;
  initOnce();
  if (const char *file = s.pendingFile) {
    s.pendingFile = nullptr;
    s.out.store(openLogFile(file, s.host, worldRank));
  }
}

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
  FILE *out = s.out.load();
  if (level != LogLevel::Warn) printHeaderOnce(out);
  // One fprintf per line so that lines of different ranks do not interleave.
  if (level == LogLevel::Warn)
    fprintf(out, "%s:%d [rank %d] CHORUS %s %s:%d %s(): %s\n", s.host, getpid(), s.rank, tag,
            base ? base + 1 : file, line, func, msg);
  else
    fprintf(out, "%s:%d [rank %d] CHORUS %s %s\n", s.host, getpid(), s.rank, tag, msg);
  fflush(out);
}

void logCheckFailure(const char *file, int line, const char *func, const char *call, const char *detail) {
  int err = errno;
  if (detail)
    logPrint(LogLevel::Info, kSubsysAll, file, line, func, "%s:%d %s failed: %s", file, line, call, detail);
  else
    CHORUS_WARN("%s failed: %s", call, strerror(err));
}

}  // namespace chorus
