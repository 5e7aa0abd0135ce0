// The table and the JSON report.
#include "report.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cmath>
#include <ctime>
#include <fstream>

namespace perf {
namespace {

const char *memName(MemKind m) { return m == MemKind::Host ? "host" : "device"; }

// Times print with two decimals while short, fewer digits when long.
std::string fmtTime(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, us < 1e4 ? "%.2f" : us < 1e6 ? "%.1f" : "%.0f", us);
  return buf;
}

std::string fmtWrong(long long wrong) { return wrong < 0 ? "N/A" : std::to_string(wrong); }

// The spread of the per-call time over the batches: fastest-slowest.
std::string fmtSpread(const Timing &t) { return fmtTime(t.minUs) + "-" + fmtTime(t.maxUs); }

// What the header says of the timed calls: the count itself only when -n
// fixed it; otherwise each row's iters column gives the count that ran.
std::string itersSetting(const Options &o) {
  if (o.itersGiven) return std::to_string(o.iters);
  return "auto (" + std::to_string(o.iters) + "-" + std::to_string(kMaxAutoIters) + " per size, see the iters column)";
}

bool hasInPlaceColumn(const RunInfo &run) { return run.opt.inPlace && run.hasInPlace; }

// Mean of busbw over the sizes (nccl-tests' "Avg bus bandwidth").
double meanBusBw(const std::vector<SizeResult> &results, bool mpi) {
  double sum = 0;
  int n = 0;
  for (const SizeResult &r : results) {
    if (mpi && !r.mpiRan) continue;
    sum += mpi ? r.mpiBusBw : r.busBw;
    ++n;
  }
  return n ? sum / n : 0;
}

std::string jsonString(const std::string &s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += char(c);
        }
    }
  }
  return o + "\"";
}

// JSON has no NaN or infinity: those become null.
std::string jsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A Timing as a JSON object, left open for more fields.
std::string jsonTiming(const Timing &t) {
  return "{\"iters\": " + std::to_string(t.iters) + ", \"warmup_calls\": " + std::to_string(t.warmupCalls) +
         ", \"time_us\": " + jsonNumber(t.meanUs) + ", \"min_us\": " + jsonNumber(t.minUs) +
         ", \"max_us\": " + jsonNumber(t.maxUs);
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 10, "model name") == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

std::string nowUtc() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

std::string commandLine(const std::vector<std::string> &argv) {
  std::string s;
  for (const std::string &a : argv) {
    if (!s.empty()) s += ' ';
    const bool quote = a.empty() || a.find_first_of(" \t'\"\\$") != std::string::npos;
    s += quote ? "'" + a + "'" : a;
  }
  return s;
}

void printHeader(FILE *out, const RunInfo &run) {
  const Options &o = run.opt;
  std::fprintf(out, "# Chorus %s perf: %s\n", run.collective.c_str(), commandLine(run.argv).c_str());
  std::fprintf(out, "# library: %s\n# MPI:     %s\n", run.chorusVersion.c_str(), run.mpiVersion.c_str());
  std::fprintf(out, "# nranks %d  memory %s  timing %s  iters %s  warmup %d  check %d  datatype %s  op %s  root %s\n",
               run.nranks, memName(o.mem), o.sync ? "sync" : "back-to-back", itersSetting(o).c_str(), o.warmup,
               int(o.check),
               typeInfo(o.type).name,
               run.usesOp ? opName(o.op) : "none", run.usesRoot ? std::to_string(o.root).c_str() : "none");
  for (int r = 0; r < run.nranks; ++r) {
    std::fprintf(out, "#   rank %3d  pid %7ld  on %s  buffers in %s\n", r, run.rankPids[r], run.rankHosts[r].c_str(),
                 run.rankWhere[r].c_str());
  }
  if (o.mpi && !run.mpiNote.empty()) std::fprintf(out, "# --mpi: MPI not timed: %s\n", run.mpiNote.c_str());
  if (o.nullRun) std::fprintf(out, "# --null: the Chorus columns time MPI's collective too (an A/A run)\n");
  const bool mpiCols = o.mpi && run.mpiNote.empty();
  // time is the mean per call over all `iters` calls of the slowest rank;
  // min-max, the mean per call of its fastest and slowest batch (of up to 4).
  std::fprintf(out, "#\n#%12s %12s %9s %6s %5s %6s %10s %19s %8s %8s %7s", "size", "count", "type", "redop", "root",
               "iters", "time", "min-max", "algbw", "busbw", "#wrong");
  if (hasInPlaceColumn(run)) std::fprintf(out, " %10s", "in-place");
  if (mpiCols) std::fprintf(out, " %10s %9s %7s", "mpi_time", "mpi_busbw", "ratio");
  std::fprintf(out, "\n#%12s %12s %9s %6s %5s %6s %10s %19s %8s %8s %7s", "(B)", "(elements)", "", "", "", "",
               "(us)", "(us)", "(GB/s)", "(GB/s)", "");
  if (hasInPlaceColumn(run)) std::fprintf(out, " %10s", "(us)");
  if (mpiCols) std::fprintf(out, " %10s %9s %7s", "(us)", "(GB/s)", "MPI/Ch");
  std::fprintf(out, "\n");
  std::fflush(out);
}

void printRow(FILE *out, const RunInfo &run, const SizeResult &r) {
  const Options &o = run.opt;
  std::fprintf(out, " %12zu %12zu %9s %6s %5d %6d %10s %19s %8.2f %8.2f %7s", r.bytes, r.count, typeInfo(o.type).name,
               run.usesOp ? opName(o.op) : "none", run.usesRoot ? o.root : -1, r.iters, fmtTime(r.timeUs).c_str(),
               fmtSpread(r.chorus).c_str(), r.algBw, r.busBw, fmtWrong(r.wrong).c_str());
  if (hasInPlaceColumn(run)) std::fprintf(out, " %10s", r.inPlaceRan ? fmtTime(r.inPlace.meanUs).c_str() : "-");
  if (o.mpi && run.mpiNote.empty()) {
    if (r.mpiRan) {
      std::fprintf(out, " %10s %9.2f %7.2f", fmtTime(r.mpiTimeUs).c_str(), r.mpiBusBw,
                   r.timeUs > 0 ? r.mpiTimeUs / r.timeUs : 0.0);
    } else {
      std::fprintf(out, " %10s %9s %7s  (%s)", "-", "-", "-", r.mpiNote ? r.mpiNote : "skipped");
    }
  }
  std::fprintf(out, "\n");
  std::fflush(out);
}

void printFooter(FILE *out, const RunInfo &run, const std::vector<SizeResult> &results) {
  long long wrong = 0;
  bool checked = false;
  for (const SizeResult &r : results) {
    if (r.wrong >= 0) {
      wrong += r.wrong;
      checked = true;
    }
  }
  std::fprintf(out, "# Wrong elements: %s\n",
               !checked ? "not checked (-c 0)" : wrong == 0 ? "0 (OK)" : (std::to_string(wrong) + " (FAILED)").c_str());
  std::fprintf(out, "# Avg bus bandwidth: %.3f GB/s (Chorus)", meanBusBw(results, false));
  if (run.opt.mpi && run.mpiNote.empty()) std::fprintf(out, ", %.3f GB/s (MPI)", meanBusBw(results, true));
  std::fprintf(out, "\n# Memory per rank (max over ranks): peak resident %.1f MiB, of which the tool's buffers %.1f MiB; "
               "resident shared memory %.1f MiB\n#\n",
               run.peakRss / 1048576.0, run.toolBytes / 1048576.0, run.shmRss / 1048576.0);
  std::fflush(out);
}

bool writeJson(FILE *out, const RunInfo &run, const std::vector<SizeResult> &results) {
  const Options &o = run.opt;
  struct utsname un;
  const bool haveUname = uname(&un) == 0;
  std::string s = "{\n";
  s += "  \"tool\": " + jsonString(run.tool) + ",\n";
  s += "  \"collective\": " + jsonString(run.collective) + ",\n";
  s += "  \"command_line\": " + jsonString(commandLine(run.argv)) + ",\n";
  s += "  \"argv\": [";
  for (size_t i = 0; i < run.argv.size(); ++i) s += (i ? ", " : "") + jsonString(run.argv[i]);
  s += "],\n";
  s += "  \"date\": " + jsonString(nowUtc()) + ",\n";
  s += "  \"chorus_version\": " + jsonString(run.chorusVersion) + ",\n";
  s += "  \"mpi_version\": " + jsonString(run.mpiVersion) + ",\n";
  s += "  \"machine\": {\n";
  s += "    \"hostname\": " + jsonString(run.rankHosts.empty() ? "" : run.rankHosts[0]) + ",\n";
  s += "    \"os\": " + jsonString(haveUname ? std::string(un.sysname) + " " + un.release : "unknown") + ",\n";
  s += "    \"arch\": " + jsonString(haveUname ? un.machine : "unknown") + ",\n";
  s += "    \"cpu\": " + jsonString(cpuModel()) + ",\n";
  s += "    \"cpus_online\": " + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + "\n";
  s += "  },\n";
  s += "  \"nranks\": " + std::to_string(run.nranks) + ",\n";
  s += "  \"ranks\": [\n";
  for (int r = 0; r < run.nranks; ++r) {
    s += "    {\"rank\": " + std::to_string(r) + ", \"host\": " + jsonString(run.rankHosts[r]) +
         ", \"pid\": " + std::to_string(run.rankPids[r]) + ", \"buffers\": " + jsonString(run.rankWhere[r]) + "}";
    s += r + 1 < run.nranks ? ",\n" : "\n";
  }
  s += "  ],\n";
  s += "  \"memory\": " + jsonString(memName(o.mem)) + ",\n";
  // The timed calls of each size are in its results ("iters"): -n fixes
  // them, otherwise they are at least iters_min and at most iters_max.
  s += "  \"iters_fixed\": " + std::string(o.itersGiven ? "true" : "false") + ",\n";
  s += "  \"iters_min\": " + std::to_string(o.iters) + ",\n";
  s += "  \"iters_max\": " + std::to_string(o.itersGiven ? o.iters : kMaxAutoIters) + ",\n";
  s += "  \"inplace\": " + std::string(o.inPlace ? "true" : "false") + ",\n";
  s += "  \"warmup_iters\": " + std::to_string(o.warmup) + ",\n";
  s += "  \"check\": " + std::string(o.check ? "true" : "false") + ",\n";
  s += "  \"mpi\": " + std::string(o.mpi ? "true" : "false") + ",\n";
  s += "  \"timing\": " + jsonString(o.sync ? "sync" : "back-to-back") + ",\n";
  s += "  \"null_run\": " + std::string(o.nullRun ? "true" : "false") + ",\n";
  s += "  \"mpi_note\": " + (run.mpiNote.empty() ? std::string("null") : jsonString(run.mpiNote)) + ",\n";
  s += "  \"results\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const SizeResult &r = results[i];
    s += "    {\"bytes\": " + std::to_string(r.bytes) + ", \"count\": " + std::to_string(r.count) +
         ", \"type\": " + jsonString(typeInfo(o.type).name) +
         ", \"op\": " + jsonString(run.usesOp ? opName(o.op) : "none") +
         ", \"root\": " + std::to_string(run.usesRoot ? o.root : -1) + ", \"iters\": " + std::to_string(r.iters) +
         ",\n";
    s += "     \"chorus\": " + jsonTiming(r.chorus) + ", \"algbw\": " + jsonNumber(r.algBw) +
         ", \"busbw\": " + jsonNumber(r.busBw) + "},\n";
    // null where the collective has no in-place form or -I 0 left it out.
    s += "     \"chorus_inplace\": ";
    if (r.inPlaceRan) {
      s += jsonTiming(r.inPlace) + ", \"algbw\": " + jsonNumber(r.inPlaceAlgBw) +
           ", \"busbw\": " + jsonNumber(r.inPlaceBusBw) + "},\n";
    } else {
      s += "null,\n";
    }
    s += "     \"wrong\": " + (r.wrong < 0 ? std::string("null") : std::to_string(r.wrong));
    if (o.mpi) {
      if (r.mpiRan) {
        s += ",\n     \"mpi\": " + jsonTiming(r.mpi) + ", \"algbw\": " + jsonNumber(r.mpiAlgBw) +
             ", \"busbw\": " + jsonNumber(r.mpiBusBw) +
             ", \"ratio\": " + jsonNumber(r.timeUs > 0 ? r.mpiTimeUs / r.timeUs : NAN) + "}";
      } else {
        const std::string note = r.mpiNote ? r.mpiNote : run.mpiNote;
        s += ",\n     \"mpi\": null, \"mpi_note\": " + jsonString(note);
      }
    }
    s += i + 1 < results.size() ? "},\n" : "}\n";
  }
  s += "  ],\n";
  s += "  \"memory_per_rank\": {\"peak_rss_bytes\": " + std::to_string(run.peakRss) +
       ", \"shm_rss_bytes\": " + std::to_string(run.shmRss) + ", \"tool_buffer_bytes\": " +
       std::to_string(run.toolBytes) + "},\n";
  s += "  \"avg_busbw\": " + jsonNumber(meanBusBw(results, false));
  if (o.mpi) s += ",\n  \"mpi_avg_busbw\": " + jsonNumber(meanBusBw(results, true));
  s += "\n}\n";
  return std::fwrite(s.data(), 1, s.size(), out) == s.size() && std::fflush(out) == 0;
}

}  // namespace perf
