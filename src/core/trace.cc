#include "core/trace.h"

#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "core/log.h"
#include "core/params.h"

namespace chorus {

namespace {

// Recorders of live contexts.  A fixed table of atomics, not a container,
// because the SIGUSR1 handler walks it.
constexpr int kMaxRecorders = 256;
std::atomic<FlightRecorder *> g_recorders[kMaxRecorders];

struct TraceConfig {
  uint32_t depth = 0;
  char path[512] = "";  // expanded once: the handler cannot call gethostname
  char host[64] = "";
  int worldRank = -1;
};
TraceConfig g_config;

// Appends text and numbers to a fixed buffer and hands it to write(2): the
// formatting of printf is not async-signal-safe.
class LineWriter {
 public:
  explicit LineWriter(int fd) : fd_(fd) {}
  ~LineWriter() { flush(); }
  LineWriter &text(const char *s) {
    while (s && *s) put(*s++);
    return *this;
  }
  LineWriter &num(uint64_t v) {
    char digits[24];
    int n = 0;
    do digits[n++] = char('0' + v % 10); while ((v /= 10) != 0);
    while (n > 0) put(digits[--n]);
    return *this;
  }
  LineWriter &num(int64_t v) {
    if (v < 0) {
      put('-');
      return num(uint64_t(-(v + 1)) + 1);
    }
    return num(uint64_t(v));
  }
  LineWriter &hex(uintptr_t v) {
    text("0x");
    char digits[20];
    int n = 0;
    do digits[n++] = "0123456789abcdef"[v & 15]; while ((v >>= 4) != 0);
    while (n > 0) put(digits[--n]);
    return *this;
  }
  template <typename T>
  LineWriter &field(const char *key, T value) {
    text(" ").text(key).text("=");
    if constexpr (std::is_pointer<T>::value) return text(value);
    else if constexpr (std::is_signed<T>::value) return num(int64_t(value));
    else return num(uint64_t(value));
  }
  void flush() {
    size_t done = 0;
    while (done < len_) {
      const ssize_t n = write(fd_, buf_ + done, len_ - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += size_t(n);
    }
    len_ = 0;
  }

 private:
  void put(char c) {
    if (len_ == sizeof buf_) flush();
    buf_[len_++] = c;
  }
  int fd_;
  size_t len_ = 0;
  char buf_[4096];
};

void writeEntry(LineWriter &w, const FlightRecorder &rec, const TraceEntry &e) {
  w.text("comm=").num(int64_t(rec.commId)).field("rank", rec.rank).field("seq", e.seq).field("coll", collName(e.coll));
  w.field("count", e.count).field("type", dataTypeName(e.type)).field("op", redOpName(e.op)).field("root", e.root);
  w.field("algo", algoName(e.algo)).field("proto", e.proto ? e.proto : "?").field("mem", e.onDevice ? "device" : "host");
  w.text(" stream=").hex(uintptr_t(e.stream));
  w.field("state", traceStateName(e.state)).field("start_us", e.startUs).field("end_us", e.endUs);
  if (e.waitPeer >= 0)
    w.field("wait_rank", e.waitPeer).field("wait_msg", e.waitMessage).field("wait_for", e.waitForData ? "data" : "slot");
  w.text("\n");
}

// Oldest first: the slot after the newest, wrapping; empty slots have seq 0.
void writeRecorder(LineWriter &w, const FlightRecorder &rec) {
  w.text("comm=").num(int64_t(rec.commId)).field("rank", rec.rank).field("nranks", rec.nranks).field("depth", rec.depth);
  w.text("\n");
  for (uint32_t i = 0; i < rec.depth; ++i) {
    const TraceEntry &e = rec.entries[(rec.next + i) % rec.depth];
    if (e.seq != 0) writeEntry(w, rec, e);
  }
}

void copyText(char *to, size_t size, const char *from) {
  size_t i = 0;
  for (; size > 0 && i + 1 < size && from[i]; ++i) to[i] = from[i];
  if (size > 0) to[i] = '\0';
}

void onSignal(int) {
  const int saved = errno;
  char path[sizeof g_config.path];
  traceDump("SIGUSR1", path, sizeof path);
  errno = saved;
}

// A program that handles SIGUSR1 itself keeps it.
void installSignalHandler() {
  struct sigaction old;
  if (sigaction(SIGUSR1, nullptr, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) {
    CHORUS_INFO(kSubsysInit, "SIGUSR1 has a handler already: the flight recorder is written on errors and requests only");
    return;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, nullptr);
}

}  // namespace

const char *traceStateName(TraceState s) {
  switch (s) {
    case TraceState::Queued: return "queued";
    case TraceState::Running: return "running";
    case TraceState::Done: return "done";
    case TraceState::Failed: return "failed";
  }
  return "?";
}

// The coarse clock: 3 ns a read here against 26 for CLOCK_REALTIME, which
// twice per call was most of the recorder's cost (47 ns against 10 on an 8 B
// allreduce).  Its resolution is the kernel tick (1-4 ms), plenty to tell
// which rank has waited for seconds; CHORUS_STATS times calls precisely.
int64_t traceNowUs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return int64_t(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

void traceInit(int worldRank) {
  const int64_t depth = paramInt(ParamId::TraceDepth);
  g_config.depth = depth > 0 ? uint32_t(depth) : 0;
  g_config.worldRank = worldRank;
  gethostname(g_config.host, sizeof g_config.host - 1);
  const char *pattern = paramString(ParamId::TraceFile);
  size_t len = 0;
  auto append = [&](const char *s) {
    while (*s && len + 1 < sizeof g_config.path) g_config.path[len++] = *s++;
  };
  char number[32];
  for (const char *p = pattern; *p; ++p) {
    if (p[0] == '%' && (p[1] == 'h' || p[1] == 'p' || p[1] == 'r')) {
      if (p[1] == 'h') {
        append(g_config.host);
      } else {
        snprintf(number, sizeof number, "%d", p[1] == 'p' ? int(getpid()) : worldRank);
        append(number);
      }
      ++p;
    } else {
      const char one[2] = {*p, '\0'};
      append(one);
    }
  }
  g_config.path[len] = '\0';
  if (g_config.depth > 0) installSignalHandler();
}

void traceAttach(FlightRecorder &rec, int commId, int rank, int nranks) {
  rec.commId = commId;
  rec.rank = rank;
  rec.nranks = nranks;
  if (g_config.depth == 0) return;
  rec.entries = new TraceEntry[g_config.depth]();
  rec.depth = g_config.depth;
  rec.next = 0;
  for (int i = 0; i < kMaxRecorders; ++i) {
    FlightRecorder *none = nullptr;
    if (g_recorders[i].compare_exchange_strong(none, &rec)) {
      rec.slot = i;
      return;
    }
  }
  CHORUS_INFO(kSubsysInit, "more than %d communicators: this one records but is left out of trace files", kMaxRecorders);
}

void traceDetach(FlightRecorder &rec) {
  if (rec.slot >= 0) g_recorders[rec.slot].store(nullptr);
  rec.slot = -1;
  delete[] rec.entries;
  rec.entries = nullptr;
  rec.depth = 0;
}

bool traceDump(const char *why, char *path, size_t pathBytes) {
  copyText(path, pathBytes, g_config.path);
  if (g_config.depth == 0 || !g_config.path[0]) return false;
  const int fd = open(g_config.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  {
    LineWriter w(fd);
    w.text("# chorus flight recorder v1").field("host", g_config.host).field("pid", int(getpid()));
    w.field("world_rank", g_config.worldRank).field("time_us", traceNowUs()).text(" reason: ").text(why).text("\n");
    for (int i = 0; i < kMaxRecorders; ++i)
      if (const FlightRecorder *rec = g_recorders[i].load()) writeRecorder(w, *rec);
  }
  close(fd);
  return true;
}

}  // namespace chorus
