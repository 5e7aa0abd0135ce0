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

}  // namespace

Status hostWaitCounter(HostChannel &ch, const uint64_t *counter, uint64_t target, int peer, bool waitingForData) {
  for (int i = 0; i < ch.spinCount; ++i) {
    if (loadAcquire(counter) >= target) return Status::Ok;
    cpuRelax();
  }
  const int64_t start = nowNs();
  for (uint64_t round = 0;; ++round) {
    if (loadAcquire(counter) >= target) return Status::Ok;
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
