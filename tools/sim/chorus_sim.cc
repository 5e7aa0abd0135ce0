// chorus_sim: the library's planner and its algorithms' own schedules, timed
// on a model of a machine that may not exist here (man/man1/chorus_sim.1).
// For each collective and size it prints every candidate algorithm's
// predicted time, the planner's choice and the best, flagging where the
// planner's choice is more than 10% slower than the best.  No MPI, no GPU:
// it runs anywhere the library builds.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/params.h"
#include "sim/sim_model.h"
#include "sim/sim_resources.h"
#include "sim/sim_topo.h"

using namespace chorus;
using namespace chorus::sim;

namespace {

constexpr double kPlannerSlack = 1.10;  // the bound: within 10% of the best candidate

void usage(FILE *to) {
  fprintf(to,
          "usage: chorus_sim [options]\n"
          "  -p, --preset NAME        machine preset (default 8xh100; --list-presets)\n"
          "  -t, --topo FILE          the node from an hwloc XML (.xml) or chorus_info --topo --json\n"
          "                           output: ranks, link and NIC bandwidths; the rest from the preset\n"
          "                           (default 8xh100, or 2socket for a node without GPUs)\n"
          "  -n, --nodes N[,N...]     node counts (default 1)\n"
          "  -r, --ranks-per-node M   ranks on each node (default: the preset's)\n"
          "  -c, --coll NAME          allreduce, reduce, bcast, allgather, reduce_scatter, alltoall,\n"
          "                           barrier, or all (default allreduce)\n"
          "  -b, --minbytes SIZE      smallest size (default 8); K, M, G suffixes\n"
          "  -e, --maxbytes SIZE      largest size (default 1G)\n"
          "  -f, --stepfactor F       size multiplier (default 8)\n"
          "  -d, --datatype TYPE      double or float (default double)\n"
          "      --fabric KIND        rail (rail-optimised, default) or fattree\n"
          "      --switch-levels L    fat tree levels (default 3)\n"
          "      --nics N             NICs per node (default: the preset's)\n"
          "      --net-gbps G         NIC bandwidth, Gb/s a direction (default: the preset's)\n"
          "      --net-latency-us U   NIC to NIC latency (default: the preset's)\n"
          "  -J, --json FILE          also write the results as JSON\n"
          "      --resources          instead of timing collectives: memory per rank and set-up time of a\n"
          "                           communicator over all the ranks, at each node count\n"
          "      --list-presets       the presets and what they model\n"
          "  -h, --help               this text\n"
          "Sizes are the planner's: the whole vector for allreduce, reduce and bcast, one rank's\n"
          "block for allgather, reduce_scatter and alltoall.\n");
}

bool parseSize(const char *text, size_t *out) {
  char *end = nullptr;
  errno = 0;
  const double v = strtod(text, &end);
  if (errno || end == text || v < 0) return false;
  double scale = 1;
  if (*end == 'K' || *end == 'k') scale = 1024.0, ++end;
  else if (*end == 'M' || *end == 'm') scale = 1024.0 * 1024, ++end;
  else if (*end == 'G' || *end == 'g') scale = 1024.0 * 1024 * 1024, ++end;
  if (*end) return false;
  *out = size_t(v * scale);
  return true;
}

bool parseInt(const char *text, int lo, int hi, int *out) {
  char *end = nullptr;
  errno = 0;
  const long v = strtol(text, &end, 10);
  if (errno || end == text || *end || v < lo || v > hi) return false;
  *out = int(v);
  return true;
}

bool parseDouble(const char *text, double *out) {
  char *end = nullptr;
  errno = 0;
  const double v = strtod(text, &end);
  if (errno || end == text || *end || !(v > 0) || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

struct CollName {
  const char *name;
  Coll coll;
};
constexpr CollName kColls[] = {{"allreduce", Coll::Allreduce}, {"reduce", Coll::Reduce},
                               {"bcast", Coll::Bcast},         {"allgather", Coll::Allgather},
                               {"reduce_scatter", Coll::ReduceScatter}, {"alltoall", Coll::Alltoall},
                               {"barrier", Coll::Barrier}};

struct Row {
  Coll coll;
  size_t bytes;
  std::vector<std::pair<Algo, SimResult>> candidates;
  Plan plan;
  int planned = -1, best = -1;  // indices into candidates
};

// The planner's choice, run by the dispatch as the executor would run it:
// a name the layout has no schedule for is timed as what it falls back to.
int indexOf(const Row &row, Algo algo) {
  for (size_t i = 0; i < row.candidates.size(); ++i)
    if (row.candidates[i].first == algo) return int(i);
  return -1;
}

Row simulateRow(const Machine &m, const Layout &l, Coll coll, size_t bytes, size_t elemSize) {
  Row row;
  row.coll = coll;
  row.bytes = bytes;
  const PlanShape shape = planShapeOf(m, l);
  row.plan = planCollective(coll, bytes, shape, engineOf(m, l, coll));
  std::vector<Algo> algos = candidatesFor(m, l, coll);
  bool plannedIn = false;
  for (Algo a : algos) plannedIn = plannedIn || a == row.plan.algo;
  if (!plannedIn) algos.push_back(row.plan.algo);
  for (Algo a : algos) {
    row.candidates.push_back({a, simulateCall(m, l, coll, a, bytes, elemSize)});
  }
  row.planned = indexOf(row, row.plan.algo);
  for (size_t i = 0; i < row.candidates.size(); ++i) {
    const SimResult &r = row.candidates[i].second;
    if (r.ok && (row.best < 0 || r.timeUs < row.candidates[size_t(row.best)].second.timeUs)) row.best = int(i);
  }
  return row;
}

double busBandwidth(const Row &row, const SimResult &r, int nranks) {
  if (!r.ok || r.timeUs <= 0 || row.coll == Coll::Barrier) return 0;
  return algorithmBytes(row.coll, row.bytes, nranks) / (r.timeUs * 1e3) * busFactor(row.coll, nranks);
}

void printRows(const Layout &l, Coll coll, const std::vector<Row> &rows) {
  if (rows.empty()) return;
  const int n = l.nranks();
  printf("# %s on %d node%s x %d rank%s = %d ranks; time in us of each candidate, the planner's choice (*), the "
         "best, bus bandwidth of the choice (GB/s)\n",
         collName(coll), l.nodes, l.nodes == 1 ? "" : "s", l.ranksPerNode, l.ranksPerNode == 1 ? "" : "s", n);
  printf("%14s", "bytes");
  for (const auto &c : rows[0].candidates) printf(" %18s", algoName(c.first));
  printf(" %18s %10s %8s\n", "best", "busbw", "planner");
  for (const Row &row : rows) {
    printf("%14zu", row.bytes);
    for (size_t i = 0; i < row.candidates.size(); ++i) {
      const SimResult &r = row.candidates[i].second;
      char cell[32];
      if (r.ok) snprintf(cell, sizeof cell, "%.2f%s", r.timeUs, int(i) == row.planned ? "*" : "");
      else snprintf(cell, sizeof cell, "-");
      printf(" %18s", cell);
    }
    const SimResult *planned = row.planned >= 0 ? &row.candidates[size_t(row.planned)].second : nullptr;
    const SimResult *best = row.best >= 0 ? &row.candidates[size_t(row.best)].second : nullptr;
    const bool off = planned && best && planned->ok && planned->timeUs > kPlannerSlack * best->timeUs;
    printf(" %18s %10.2f %8s\n", row.best >= 0 ? algoName(row.candidates[size_t(row.best)].first) : "-",
           planned ? busBandwidth(row, *planned, n) : 0.0,
           off ? "slower" : planned && planned->ok ? "ok" : "-");
  }
  for (const Row &row : rows)
    for (const auto &c : row.candidates)
      if (!c.second.ok) {
        printf("# %s, %zu bytes, %s: %s\n", collName(coll), row.bytes, algoName(c.first), c.second.why.c_str());
        break;
      }
}

void writeJson(FILE *f, const Machine &m, const std::vector<std::pair<Layout, std::vector<Row>>> &all) {
  fprintf(f, "{\n  \"preset\": \"%s\",\n  \"description\": \"%s\",\n  \"runs\": [", m.name.c_str(),
          m.description.c_str());
  bool firstRow = true;
  for (const auto &entry : all) {
    const Layout &l = entry.first;
    for (const Row &row : entry.second) {
      fprintf(f, "%s\n    {\"coll\": \"%s\", \"nodes\": %d, \"ranks_per_node\": %d, \"bytes\": %zu, \"candidates\": {",
              firstRow ? "" : ",", collName(row.coll), l.nodes, l.ranksPerNode, row.bytes);
      firstRow = false;
      bool first = true;
      for (const auto &c : row.candidates) {
        if (!c.second.ok) continue;
        fprintf(f, "%s\"%s\": %.3f", first ? "" : ", ", algoName(c.first), c.second.timeUs);
        first = false;
      }
      const SimResult *planned = row.planned >= 0 ? &row.candidates[size_t(row.planned)].second : nullptr;
      fprintf(f, "}, \"planner\": \"%s\", \"best\": \"%s\", \"planner_busbw_gbs\": %.3f}", algoName(row.plan.algo),
              row.best >= 0 ? algoName(row.candidates[size_t(row.best)].first) : "",
              planned ? busBandwidth(row, *planned, l.nranks()) : 0.0);
    }
  }
  fprintf(f, "\n  ]\n}\n");
}

// The goals for a rank at 16,384 ranks.
constexpr double kHostGoalMiB = 64, kDeviceGoalMiB = 256, kSetupGoalS = 10;

double mib(size_t bytes) { return double(bytes) / 1048576.0; }

// Memory per rank and set-up time of a communicator over the whole layout,
// from the library's wiring and sizing (sim_resources.h).
void printResources(const Machine &m, const std::vector<int> &nodeCounts) {
  printf("# resources per rank of a communicator over every rank (the most expensive rank of a sample);\n"
         "# host MiB: by-rank tables + this rank's shm segment + UCX FIFO copies of the linked peers (streaming\n"
         "# algorithms only / every remote peer: CHORUS_NET_CONNECT=eager / after an alltoall as planned, which\n"
         "# links every remote peer only while their copies fit in 32 MiB, else Bruck's), plus on GPU presets\n"
         "# the device links' pinned FIFO copies (pinMiB: on each of the ch channels, every remote peer within\n"
         "# 160 MiB, else the streaming algorithms' few within what the tables leave of 48 MiB:\n"
         "# CHORUS_NET_DEVICE_LINKS; the busiest rank's); devMiB: the CUDA executor's FIFO region (a FIFO\n"
         "# pair per peer on the node and channel) and its FIFO ends by rank; set-up: the bootstrap's\n"
         "# allgathers and agreements, plus endpoints under eager. Goals at\n"
         "# 16,384 ranks: host <= %.0f MiB, device <= %.0f MiB, set-up < %.0f s ('!' marks a miss).\n",
         kHostGoalMiB, kDeviceGoalMiB, kSetupGoalS);
  printf("%6s %7s %9s %9s %6s %9s %6s %9s %3s %9s %9s %9s %9s %9s %10s %10s\n", "nodes", "ranks", "tablesMiB",
         "shmMiB", "bulkP", "bulkMiB", "allP", "allMiB", "ch", "pinMiB", "hostMiB", "hostAll", "hostA2a", "devMiB",
         "setup_ms", "eager_ms");
  for (int nodes : nodeCounts) {
    Layout l;
    l.nodes = nodes;
    l.ranksPerNode = m.ranksPerNode;
    const CommFootprint f = footprintOf(l);
    const SetupTime lazy = setupTimeOf(m, l, f, false), eager = setupTimeOf(m, l, f, true);
    // CPU ranks have no device FIFOs; staged device buffers no device links.
    const bool kernels = engineOf(m, l) == Engine::Kernels;
    const double pinned = kernels ? mib(f.deviceLinkBytes) : 0, host = mib(f.hostBytes(false)) + pinned,
                 hostAll = mib(f.hostBytes(true)) + pinned, hostA2a = mib(f.hostBytesWithAlltoall()) + pinned,
                 device = m.gpu ? mib(f.deviceFifoBytes + f.deviceEndsBytes) : 0;
    printf("%6d %7d %9.2f %9.2f %6d %9.2f %6d %9.2f %3d %9.2f %8.2f%s %8.2f%s %8.2f%s %8.2f%s %10.2f%s %9.2f%s\n",
           nodes, l.nranks(), mib(f.tableBytes), mib(f.shmSegmentBytes), f.bulkNetPeers, mib(f.bulkNetBytes),
           f.remotePeers, mib(f.allNetBytes), m.gpu ? f.deviceChannels : 0, pinned, host, host > kHostGoalMiB ? "!" : " ",
           hostAll, hostAll > kHostGoalMiB ? "!" : " ", hostA2a, hostA2a > kHostGoalMiB ? "!" : " ", device,
           device > kDeviceGoalMiB ? "!" : " ", lazy.totalUs() / 1e3,
           lazy.totalUs() > kSetupGoalS * 1e6 ? "!" : " ", eager.totalUs() / 1e3,
           eager.totalUs() > kSetupGoalS * 1e6 ? "!" : " ");
  }
}

}  // namespace

int main(int argc, char **argv) {
  paramsInit();
  std::string preset = "8xh100", topoPath, collText = "allreduce", jsonPath, fabric = "rail";
  std::vector<int> nodeCounts{1};
  int ranksPerNode = 0, switchLevels = 3, nics = 0;
  size_t minBytes = 8, maxBytes = size_t(1) << 30;
  double factor = 8, netGbps = 0, netLatencyUs = 0;
  size_t elemSize = 8;
  bool resources = false, presetGiven = false;
  auto bad = [&](const char *option, const char *value) {
    fprintf(stderr, "chorus_sim: %s: invalid value '%s'\n", option, value ? value : "");
    usage(stderr);
    return 2;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string opt = argv[i];
    if (opt == "-h" || opt == "--help") {
      usage(stdout);
      return 0;
    }
    if (opt == "--list-presets") {
      for (const Machine &m : machinePresets()) printf("%-10s %s\n", m.name.c_str(), m.description.c_str());
      return 0;
    }
    if (opt == "--resources") {
      resources = true;
      continue;
    }
    if (i + 1 >= argc) return bad(opt.c_str(), nullptr);
    const char *value = argv[++i];
    if (opt == "-p" || opt == "--preset") {
      preset = value;
      presetGiven = true;
    } else if (opt == "-t" || opt == "--topo") {
      topoPath = value;
    } else if (opt == "-n" || opt == "--nodes") {
      nodeCounts.clear();
      for (const char *p = value; *p;) {
        const char *comma = strchr(p, ',');
        const std::string one(p, comma ? size_t(comma - p) : strlen(p));
        int v = 0;
        if (!parseInt(one.c_str(), 1, 1 << 20, &v)) return bad(opt.c_str(), value);
        nodeCounts.push_back(v);
        p = comma ? comma + 1 : p + one.size();
      }
      if (nodeCounts.empty()) return bad(opt.c_str(), value);
    } else if (opt == "-r" || opt == "--ranks-per-node") {
      if (!parseInt(value, 1, 4096, &ranksPerNode)) return bad(opt.c_str(), value);
    } else if (opt == "-c" || opt == "--coll") {
      collText = value;
    } else if (opt == "-b" || opt == "--minbytes") {
      if (!parseSize(value, &minBytes)) return bad(opt.c_str(), value);
    } else if (opt == "-e" || opt == "--maxbytes") {
      if (!parseSize(value, &maxBytes)) return bad(opt.c_str(), value);
    } else if (opt == "-f" || opt == "--stepfactor") {
      if (!parseDouble(value, &factor) || factor <= 1) return bad(opt.c_str(), value);
    } else if (opt == "-d" || opt == "--datatype") {
      if (!strcmp(value, "double")) elemSize = 8;
      else if (!strcmp(value, "float")) elemSize = 4;
      else return bad(opt.c_str(), value);
    } else if (opt == "--fabric") {
      if (strcmp(value, "rail") && strcmp(value, "fattree")) return bad(opt.c_str(), value);
      fabric = value;
    } else if (opt == "--switch-levels") {
      if (!parseInt(value, 1, 8, &switchLevels)) return bad(opt.c_str(), value);
    } else if (opt == "--nics") {
      if (!parseInt(value, 1, 64, &nics)) return bad(opt.c_str(), value);
    } else if (opt == "--net-gbps") {
      if (!parseDouble(value, &netGbps)) return bad(opt.c_str(), value);
    } else if (opt == "--net-latency-us") {
      if (!parseDouble(value, &netLatencyUs)) return bad(opt.c_str(), value);
    } else if (opt == "-J" || opt == "--json") {
      jsonPath = value;
    } else {
      fprintf(stderr, "chorus_sim: unknown option '%s'\n", opt.c_str());
      usage(stderr);
      return 2;
    }
  }
  const Machine *found = findPreset(preset);
  if (!found) {
    fprintf(stderr, "chorus_sim: --preset: no preset named '%s' (--list-presets)\n", preset.c_str());
    return 2;
  }
  Machine m = *found;
  if (!topoPath.empty()) {
    NodeShape shape;
    std::string why;
    if (!readNodeShape(topoPath, &shape, &why)) {
      fprintf(stderr, "chorus_sim: --topo: %s\n", why.c_str());
      return 2;
    }
    // A CPU node takes the CPU preset's constants unless a preset was named.
    m = machineWithNode(shape.gpus == 0 && !presetGiven ? *findPreset("2socket") : *found, shape, topoPath);
  }
  if (ranksPerNode > 0) m.ranksPerNode = ranksPerNode;
  if (nics > 0) m.fabric.nicsPerNode = nics;
  if (netGbps > 0) m.fabric.net.gbPerS = netGbps / 8;
  if (netLatencyUs > 0) m.fabric.net.latencyUs = netLatencyUs;
  m.fabric.railOptimised = fabric == "rail";
  m.fabric.switchLevels = switchLevels;
  std::vector<Coll> colls;
  for (const CollName &c : kColls)
    if (collText == "all" || collText == c.name) colls.push_back(c.coll);
  if (colls.empty()) {
    fprintf(stderr, "chorus_sim: --coll: no collective named '%s'\n", collText.c_str());
    return 2;
  }
  if (minBytes > maxBytes) {
    fprintf(stderr, "chorus_sim: --minbytes %zu is above --maxbytes %zu\n", minBytes, maxBytes);
    return 2;
  }
  printf("# chorus_sim: %s (%s); %s fabric, NICs of %.0f Gb/s, %.1f us\n", m.name.c_str(), m.description.c_str(),
         m.fabric.railOptimised ? "rail-optimised" : "fat-tree", m.fabric.net.gbPerS * 8, m.fabric.net.latencyUs);
  if (resources) {
    printResources(m, nodeCounts);
    return 0;
  }
  std::vector<std::pair<Layout, std::vector<Row>>> all;
  for (int nodes : nodeCounts) {
    Layout l;
    l.nodes = nodes;
    l.ranksPerNode = m.ranksPerNode;
    for (Coll coll : colls) {
      std::vector<Row> rows;
      if (coll == Coll::Barrier) {
        rows.push_back(simulateRow(m, l, coll, 0, 1));
      } else {
        for (double b = double(minBytes); b <= double(maxBytes) * 1.0000001; b *= factor) {
          const size_t step = coll == Coll::Allreduce || coll == Coll::Reduce || coll == Coll::ReduceScatter ? elemSize : 1;
          const size_t bytes = std::max(step, size_t(b) / step * step);
          rows.push_back(simulateRow(m, l, coll, bytes, elemSize));
        }
      }
      printRows(l, coll, rows);
      all.push_back({l, std::move(rows)});
    }
  }
  if (!jsonPath.empty()) {
    FILE *f = fopen(jsonPath.c_str(), "w");
    if (!f) {
      fprintf(stderr, "chorus_sim: --json: cannot write %s: %s\n", jsonPath.c_str(), strerror(errno));
      return 1;
    }
    writeJson(f, m, all);
    if (fclose(f) != 0) {
      fprintf(stderr, "chorus_sim: --json: cannot write %s: %s\n", jsonPath.c_str(), strerror(errno));
      return 1;
    }
  }
  return 0;
}
