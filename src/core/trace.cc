#include "core/trace.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "core/log.h"
#include "core/params.h"

namespace chorus {

namespace {

// Recorders of live contexts.  A fixed table of atomics, not a container,
// because the SIGUSR1 handler walks it.
constexpr int kMaxRecorders = 256;
std::atomic<FlightRecorder *> g_recorders[kMaxRecorders];

constexpr uint64_t kAgreedBit = uint64_t(1) << 63;

struct TraceConfig {
  uint32_t depth = 0;
  // Expanded at start, or once the job id is agreed: the handler cannot
  // call gethostname.  Empty until then; a name that does not fit is
  // refused (tooLong), never cut.
  char path[kTracePathMax + 1] = "";
  bool tooLong = false;
  size_t tooLongBytes = 0;     // what the name would have taken
  const char *pattern = "";
  char host[64] = "";
  char job[72] = "";           // letters, digits and ._-@+ only: it goes into file names
  const char *jobFrom = "";    // pmix, ompi, slurm or agreed
  uint64_t agreedJob = 0;      // kAgreedBit | the value, once agreed
  int worldRank = -1;
};
TraceConfig g_config;
std::mutex g_jobMutex;  // contexts may be set up in several threads at once

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
    if (error_ == 0) error_ = writeAll(fd_, buf_, len_);
    len_ = 0;
  }
  // The first write's errno (ENOSPC on a full disk), 0 when all went out.
  int error() const { return error_; }

 private:
  void put(char c) {
    if (len_ == sizeof buf_) flush();
    buf_[len_++] = c;
  }
  int fd_;
  int error_ = 0;
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

// Keeps what a file name may safely hold; the launcher's text is not ours.
void setJob(const char *id, const char *from) {
  size_t n = 0;
  for (; id[n] && n + 1 < sizeof g_config.job; ++n) {
    const char c = id[n];
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("._-@+", c);
    g_config.job[n] = safe ? c : '_';
  }
  g_config.job[n] = '\0';
  g_config.jobFrom = from;
}

// The launcher's job id, where it exports one that differs between two
// runs: PMIx (Open MPI 4 and 5, Slurm's --mpi=pmix, MPICH built with PMIx),
// Open MPI's own, Slurm's job and step (a job id alone is shared by every
// step of an allocation).  MPICH's hydra exports none: agreed then.
void readLauncherJob() {
  if (const char *ns = getenv("PMIX_NAMESPACE"); ns && *ns) return setJob(ns, "pmix");
  if (const char *id = getenv("OMPI_MCA_ess_base_jobid"); id && *id) return setJob(id, "ompi");
  const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
  if (job && *job && step && *step) {
    char both[72];
    snprintf(both, sizeof both, "slurm%s.%s", job, step);
    setJob(both, "slurm");
  }
}

// Expands the pattern into g_config.path; false (and no path) when it
// needs the job id and there is none yet.
bool expandPath() {
  const char *pattern = g_config.pattern;
  if (strstr(pattern, "%j") && !g_config.job[0]) return false;
  char out[sizeof g_config.path];
  const size_t full = expandFilePattern(pattern, g_config.host, g_config.worldRank, g_config.job, out, sizeof out);
  const bool tooLong = full >= sizeof out;
  g_config.tooLong = tooLong;
  g_config.tooLongBytes = full;
  if (tooLong) {
    CHORUS_WARN("CHORUS_TRACE_FILE expands to a name of %zu characters, longer than %zu: no flight recorder file "
                "will be written (set a shorter one); it starts %.60s", full, kTracePathMax, pattern);
    return true;
  }
  memcpy(g_config.path, out, full + 1);
  return true;
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
    case TraceState::Released: return "released";
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
  g_config.pattern = paramString(ParamId::TraceFile);
  readLauncherJob();
  if (g_config.depth > 0) {
    expandPath();
    installSignalHandler();
  }
}

uint64_t traceJobProposal() {
  std::lock_guard<std::mutex> lock(g_jobMutex);
  if (g_config.agreedJob) return g_config.agreedJob;
  if (g_config.job[0]) return 0;  // the launcher's: the value is not used
  // Unique enough among the jobs one machine keeps files of: host, pid, time.
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ull;
  };
  for (const char *c = g_config.host; *c; ++c) mix(uint64_t(uint8_t(*c)));
  mix(uint64_t(getpid()));
  mix(uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec));
  return h & ~kAgreedBit;
}

void traceJobAgreed(uint64_t agreed) {
  std::lock_guard<std::mutex> lock(g_jobMutex);
  if (g_config.agreedJob || g_config.job[0]) return;
  g_config.agreedJob = agreed | kAgreedBit;
  char id[24];
  snprintf(id, sizeof id, "%012llx", (unsigned long long)(agreed & 0xffffffffffffull));
  setJob(id, "agreed");
  if (g_config.depth > 0) expandPath();
}

const char *traceJobId() { return g_config.job; }

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
  copyText(path, pathBytes, g_config.path[0] ? g_config.path : g_config.pattern);
  if (g_config.tooLong && pathBytes > 64) {
    // Shown in an error message: its start and its length, not 511 characters of it.
    size_t n = 0;
    for (; n < 40 && g_config.pattern[n]; ++n) path[n] = g_config.pattern[n];
    char tail[48] = " ... (";
    size_t t = strlen(tail);
    char digits[24];
    int d = 0;
    size_t v = g_config.tooLongBytes;
    do digits[d++] = char('0' + v % 10); while ((v /= 10) != 0);
    while (d > 0) tail[t++] = digits[--d];
    copyText(tail + t, sizeof tail - t, " characters)");
    copyText(path + n, pathBytes - n, tail);
  }
  if (g_config.depth == 0 || !g_config.path[0]) {
    errno = g_config.tooLong ? ENAMETOOLONG : ENOENT;
    return false;
  }
  const int fd = openOwnFile(g_config.path, false);
  if (fd < 0) return false;
  int err = 0;
  {
    LineWriter w(fd);
    w.text("# chorus flight recorder v2").field("job", g_config.job).field("job_from", g_config.jobFrom);
    w.field("host", g_config.host).field("pid", int(getpid())).field("uid", uint32_t(geteuid()));
    w.field("world_rank", g_config.worldRank).field("time_us", traceNowUs()).text(" reason: ").text(why).text("\n");
    for (int i = 0; i < kMaxRecorders; ++i)
      if (const FlightRecorder *rec = g_recorders[i].load()) writeRecorder(w, *rec);
    w.text("# end\n");
    w.flush();
    err = w.error();
  }
  if (close(fd) != 0 && err == 0) err = errno;  // NFS reports a full disk here
  if (err) {
    errno = err;
    return false;
  }
  return true;
}

}  // namespace chorus
