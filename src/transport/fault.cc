#include "transport/fault.h"

#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/trace.h"
#include "transport/transport.h"

namespace chorus {

bool processDead(int32_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  char path[64], stat[128] = "";
  snprintf(path, sizeof path, "/proc/%d/stat", int(pid));
  FILE *f = fopen(path, "r");
  if (!f) return false;
  const size_t n = fread(stat, 1, sizeof stat - 1, f);
  fclose(f);
  stat[n] = '\0';
  const char *close = strrchr(stat, ')');  // the command name may hold spaces and parentheses
  return close && close[1] == ' ' && close[2] == 'Z';
}

int peerFailedIn(const RankStatus *const *status, int nranks, int self, uint64_t seq) {
  for (int p = 0; status && p < nranks; ++p) {
    const RankStatus *st = status[p];
    if (p != self && st && __atomic_load_n(&st->state, __ATOMIC_ACQUIRE) == uint64_t(TraceState::Failed) &&
        __atomic_load_n(&st->seq, __ATOMIC_ACQUIRE) == seq)
      return p;
  }
  return -1;
}

void describeCause(const PeerLinks &ctx, uint64_t seq, char *out, size_t size) {
  std::string causes;
  char one[128];
  for (int p = 0; p < ctx.nranks; ++p) {
    if (p == ctx.rank) continue;
    const RankStatus *st = size_t(p) < ctx.peerStatus.size() ? ctx.peerStatus[size_t(p)] : nullptr;
    const unsigned long long at = st ? __atomic_load_n(&st->seq, __ATOMIC_ACQUIRE) : 0;
    const int32_t pid = size_t(p) < ctx.watchedPids.size() ? ctx.watchedPids[size_t(p)] : 0;
    one[0] = '\0';
    const bool released =
        st && at < seq && __atomic_load_n(&st->state, __ATOMIC_ACQUIRE) == uint64_t(TraceState::Released);
    if (released) {  // and may have exited since: not a death
      snprintf(one, sizeof one, "rank %d released the communicator before entering it (its last was #%llu; "
               "MPI_Comm_free or MPI_Finalize)", p, at);
    } else if (pid > 0 && processDead(pid)) {
      if (!st) snprintf(one, sizeof one, "rank %d died", p);
      else if (at < seq) snprintf(one, sizeof one, "rank %d died before entering it (its last was #%llu)", p, at);
      else snprintf(one, sizeof one, "rank %d died in it", p);
    } else if (st && at < seq) {
      snprintf(one, sizeof one, "rank %d never entered it (its last was #%llu)", p, at);
    }
    if (!one[0]) continue;
    if (!causes.empty()) causes += ", ";
    causes += one;
  }
  // Nobody died or lagged behind: a peer that failed in this very call
  // (e.g. a message to it arrived corrupted) is why the others wait for it.
  if (causes.empty() && ctx.peerStatus.size() == size_t(ctx.nranks)) {
    const int failed = peerFailedIn(ctx.peerStatus.data(), ctx.nranks, ctx.rank, seq);
    if (failed >= 0) {
      snprintf(one, sizeof one, "rank %d failed in it", failed);
      causes = one;
    }
  }
  if (causes.empty()) {
    if (size > 0) out[0] = '\0';
    return;
  }
  snprintf(out, size, "#%llu: %s; ", (unsigned long long)seq, causes.c_str());
}

}  // namespace chorus
