#include "core/stats.h"

#include <time.h>

#include <cstdio>
#include <string>

namespace chorus {

int64_t statsNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void statsPrint(const CommStats &s, int commId, int rank, int nranks) {
  for (int c = 0; c < int(Coll::Count); ++c) {
    const CollStats &st = s.coll[c];
    if (st.calls == 0) continue;
    std::string algos;
    for (int a = 0; a < int(Algo::Count); ++a) {
      if (st.byAlgo[a] == 0) continue;
      algos += (algos.empty() ? "" : ",") + std::string(algoName(Algo(a))) + ":" + std::to_string(st.byAlgo[a]);
    }
    // One fprintf per line: the ranks share the terminal.
    fprintf(stderr,
            "CHORUS STATS comm %d rank %d/%d: %s calls=%llu bytes=%llu time=%.6f s failed=%llu algos=%s staged=%llu\n",
            commId, rank, nranks, collName(Coll(c)), (unsigned long long)st.calls, (unsigned long long)st.bytes,
            st.ns / 1e9, (unsigned long long)st.failed, algos.c_str(), (unsigned long long)st.staged);
  }
}

void statsPrintRouting(int rank, int nranks, const char *call, unsigned long long routed, unsigned long long mpi,
                       const char *why) {
  fprintf(stderr, "CHORUS STATS interpose rank %d/%d: %s routed=%llu mpi=%llu why=%s\n", rank, nranks, call, routed,
          mpi, why);
}

}  // namespace chorus
