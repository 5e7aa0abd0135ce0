#include "core/abandoned_barriers.h"

#include <algorithm>
#include <mutex>
#include <vector>

namespace chorus {
namespace {

struct Kept {
  MPI_Request request;
  MPI_Comm comm;
};

std::mutex g_mutex;
std::vector<Kept> g_kept;              // under g_mutex
std::vector<MPI_Comm> g_orphanComms;  // released by their owners, a kept barrier still on them

bool runsOn(MPI_Comm comm) {
  return std::any_of(g_kept.begin(), g_kept.end(), [&](const Kept &k) { return k.comm == comm; });
}

void freeIdleOrphans() {
  size_t kept = 0;
  for (MPI_Comm &c : g_orphanComms) {
    if (runsOn(c)) {
      g_orphanComms[kept++] = c;
      continue;
    }
    PMPI_Comm_free(&c);
  }
  g_orphanComms.resize(kept);
}

}  // namespace

void keepAbandonedBarrier(MPI_Request request, MPI_Comm comm) {
  if (request == MPI_REQUEST_NULL) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_kept.push_back({request, comm});
}

void releaseBarrierComm(MPI_Comm *comm) {
  if (*comm == MPI_COMM_NULL) return;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (runsOn(*comm))
      g_orphanComms.push_back(*comm);
    else
      PMPI_Comm_free(comm);
  }
  *comm = MPI_COMM_NULL;
  reapAbandonedBarriers();
}

void reapAbandonedBarriers() {
  std::lock_guard<std::mutex> lock(g_mutex);
  size_t kept = 0;
  for (Kept &k : g_kept) {
    int done = 0;
    if (PMPI_Test(&k.request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done) continue;
    g_kept[kept++] = k;
  }
  g_kept.resize(kept);
  freeIdleOrphans();
}

}  // namespace chorus
