#include "coll/host_channel.h"

#include <sched.h>
#include <time.h>

#include <cstdio>

#include "core/log.h"

namespace chorus {

namespace {

int64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// After this many yields without progress the peer is probably descheduled
// for long (oversubscribed node): sleeping frees the core for it.
constexpr int kYieldsBeforeSleep = 200;
constexpr long kSleepNs = 20000;

// Run the network transport once (FIFOs to other nodes are filled by it).
inline Status progressNet(HostChannel &ch, int peer) {
  if (!ch.net) return Status::Ok;
  const Status s = ch.netOps->progress(ch.net, peer, ch.errorText, sizeof ch.errorText);
  if (s != Status::Ok) CHORUS_WARN("%s (in %s, %s algorithm)", ch.errorText, ch.coll, ch.algo);
  return s;
}

}  // namespace

Status hostWaitCounter(HostChannel &ch, const uint64_t *counter, uint64_t target, int peer, bool waitingForData) {
  for (int i = 0; i < ch.spinCount; ++i) {
    if (loadAcquire(counter) >= target) return Status::Ok;
    if (ch.net) progressNet(ch, -1);  // a failure shows below, after everything that arrived
    cpuRelax();
  }
  const int64_t start = nowNs();
  for (uint64_t round = 0;; ++round) {
    const Status net = progressNet(ch, peer);
    if (loadAcquire(counter) >= target) return Status::Ok;
    if (net != Status::Ok) return net;
    if (round < kYieldsBeforeSleep) {
      sched_yield();
    } else {
      timespec ts = {0, kSleepNs};
      nanosleep(&ts, nullptr);
    }
    if ((round & 63) == 63 && ch.timeoutNs > 0 && nowNs() - start > ch.timeoutNs) {
      snprintf(ch.errorText, sizeof ch.errorText,
               "%s (%s algorithm): rank %d timed out after %.0f s (CHORUS_TIMEOUT) waiting for rank %d %s (message %llu of "
               "that FIFO)",
               ch.coll, ch.algo, ch.rank, ch.timeoutNs / 1e9, peer, waitingForData ? "to send data" : "to free a FIFO slot",
               (unsigned long long)target);
      CHORUS_WARN("%s", ch.errorText);
      return Status::Timeout;
    }
  }
}

}  // namespace chorus
