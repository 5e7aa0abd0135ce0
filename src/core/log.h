// Leveled, subsystem-filtered logging (CHORUS_DEBUG, CHORUS_DEBUG_SUBSYS).
// WARN always prints, with file:line, function and rank.  INFO is for what
// happens once or a few times a job (set-up, a summary per communicator at
// its release, in STATS); anything that happens per call is TRACE, so that
// INFO stays readable on a long run.  The first INFO or TRACE line of each
// output names the version and the library's file.
#pragma once

#include <sys/stat.h>

#include <cstdarg>
#include <cstddef>

namespace chorus {

enum class LogLevel : int { None = 0, Warn = 1, Info = 2, Trace = 3 };
enum LogSubsys : unsigned {
  kSubsysInit = 1u << 0,
  kSubsysColl = 1u << 1,
  kSubsysTransport = 1u << 2,
  kSubsysTune = 1u << 3,
  kSubsysTopo = 1u << 4,
  kSubsysNet = 1u << 5,
  kSubsysCuda = 1u << 6,
  kSubsysStats = 1u << 7,  // the summary of each communicator at its release
  kSubsysAll = ~0u,
};

// Set once the world rank is known, so that every line names its rank and
// CHORUS_DEBUG_FILE's %r can be expanded (its file is opened then; lines
// before go to stderr).
void logSetRank(int worldRank);
bool logEnabled(LogLevel level, unsigned subsys);

// Open `path` for writing as this process's own file: created mode 0600
// if absent, never through a symbolic link (O_NOFOLLOW), never a FIFO or
// device (opened without blocking, then checked), never a file another user
// owns or one with a second hard link; an existing file of ours is reused
// (emptied unless `append`).  Returns the descriptor, or -1 with errno
// (ELOOP: a link; EPERM: not ours, not regular or linked twice; or open's).
// Async-signal-safe: the flight recorder's dump uses it in a handler.  The
// default names in /tmp are predictable, and ranks may run as root.
int openOwnFile(const char *path, bool append);
// The test openOwnFile applies to what it opened: a regular file of this
// user with one link.  For a caller that checks a path before replacing it
// (lstat: a link is refused before this).
bool isOwnPlainFile(const struct stat &st);
// Writes all `len` bytes to `fd`, through short writes and EINTR: 0, or the
// errno of the write that failed (ENOSPC on a full disk; EIO for a write
// that took nothing).  Async-signal-safe, as openOwnFile.
int writeAll(int fd, const void *buf, size_t len);
// Expands a file name pattern of CHORUS_TRACE_FILE or CHORUS_DEBUG_FILE:
// %h the host, %p the pid, %r `rank`, %j `job` (kept as "%j" when null).
// Writes at most outLen - 1 characters and a NUL; returns the length the
// whole name needs, so that a caller can refuse a name that does not fit
// rather than cut it.  No allocation: the trace code runs it on its own
// buffers.
size_t expandFilePattern(const char *pattern, const char *host, int rank, const char *job, char *out,
                         size_t outLen);
void logPrint(LogLevel level, unsigned subsys, const char *file, int line, const char *func,
              const char *fmt, ...) __attribute__((format(printf, 6, 7)));

}  // namespace chorus

#define CHORUS_WARN(...) \
  ::chorus::logPrint(::chorus::LogLevel::Warn, ::chorus::kSubsysAll, __FILE__, __LINE__, __func__, __VA_ARGS__)
#define CHORUS_INFO(subsys, ...)                                                               \
  do {                                                                                         \
    if (::chorus::logEnabled(::chorus::LogLevel::Info, subsys))                                \
      ::chorus::logPrint(::chorus::LogLevel::Info, subsys, __FILE__, __LINE__, __func__, __VA_ARGS__); \
  } while (0)
#define CHORUS_TRACE(subsys, ...)                                                               \
  do {                                                                                          \
    if (::chorus::logEnabled(::chorus::LogLevel::Trace, subsys))                                \
      ::chorus::logPrint(::chorus::LogLevel::Trace, subsys, __FILE__, __LINE__, __func__, __VA_ARGS__); \
  } while (0)
