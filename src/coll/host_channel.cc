#include "coll/host_channel.h"

#include <sched.h>
#include <time.h>

#include <cstdio>

#include "transport/fault.h"
#include "core/log.h"
#include "core/trace.h"

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
// How often a long wait checks that the peers on this machine still live:
// a dead one is then named within about this, not after CHORUS_TIMEOUT.
constexpr int64_t kLivenessPeriodNs = 500000000;

// Whether every watched peer still lives; otherwise names the first dead one.
Status checkPeersAlive(HostChannel &ch, int peer, uint64_t target, bool waitingForData) {
  for (int p = 0; p < ch.nranks; ++p) {
    const int32_t pid = ch.watchedPids[p];
    if (pid <= 0 || !processDead(pid)) continue;
    snprintf(ch.errorText, sizeof ch.errorText,
             "rank %d (pid %d) died; rank %d noticed it in %s (%s algorithm) waiting for rank %d %s (message %llu)", p,
             int(pid), ch.rank, collName(ch.coll), algoName(ch.algo), peer,
             waitingForData ? "to send data" : "to free a FIFO slot", (unsigned long long)target);
    return Status::PeerFailed;
  }
  return Status::Ok;
}

// How long a sender waits for a credit from another node before asking for
// it: long against a credit's round trip when the receiver keeps up, so that
// streams do not pay a request per slot; short against a collective.
constexpr int64_t kCreditAskAfterNs = 50000;

// Waiting for the head of a FIFO to another node: credits for inline
// messages go lazily (prims_host.h, creditEvery), so after
// kCreditAskAfterNs ask the receiver once for this head.  (A wait on any
// other counter: nothing to ask.)
inline void askForCredit(HostChannel &ch, const uint64_t *counter, uint64_t target, int peer) {
  if (peer < 0 || peer >= ch.nranks) return;
  FifoEnd &e = ch.sendTo[peer];
  if (!e.remote || counter != &e.header->head.value || e.creditAsked >= target) return;
  e.creditAsked = target;
  ch.netOps->postCreditRequest(ch.net, e, target);
}

// Run the network transport once (FIFOs to other nodes are filled by it).
inline Status progressNet(HostChannel &ch, int peer) {
  if (!ch.net) return Status::Ok;
  const Status s = ch.netOps->progress(ch.net, peer, ch.errorText, sizeof ch.errorText);
  if (s != Status::Ok) CHORUS_WARN("%s (in %s, %s algorithm)", ch.errorText, collName(ch.coll), algoName(ch.algo));
  return s;
}

}  // namespace

Status hostWaitCounter(HostChannel &ch, const uint64_t *counter, uint64_t target, int peer, bool waitingForData) {
  const bool mayAsk = ch.net && !waitingForData;
  const int64_t waitStart = mayAsk ? nowNs() : 0;
  bool asked = !mayAsk;
  for (int i = 0; i < ch.spinCount; ++i) {
    if (loadAcquire(counter) >= target) return Status::Ok;
    if (ch.net) progressNet(ch, -1);  // a failure shows below, after everything that arrived
    if (!asked && (i & 15) == 15 && nowNs() - waitStart > kCreditAskAfterNs) {
      asked = true;
      askForCredit(ch, counter, target, peer);
    }
    cpuRelax();
  }
  // Past the spin phase: cheap enough now to note who we wait for.
  if (TraceEntry *e = ch.tracing) {
    e->waitPeer = peer;
    e->waitMessage = target;
    e->waitForData = waitingForData;
  }
  const int64_t start = nowNs();
  int64_t livenessChecked = start;
  for (uint64_t round = 0;; ++round) {
    const Status net = progressNet(ch, peer);
    if (loadAcquire(counter) >= target) return Status::Ok;
    if (net != Status::Ok) return net;
    if (!asked && nowNs() - waitStart > kCreditAskAfterNs) {
      asked = true;
      askForCredit(ch, counter, target, peer);
    }
    if (round < kYieldsBeforeSleep) {
      sched_yield();
    } else {
      timespec ts = {0, kSleepNs};
      nanosleep(&ts, nullptr);
    }
    if ((round & 63) != 63) continue;
    const int64_t now = nowNs();
    if (ch.watchedPids && now - livenessChecked > kLivenessPeriodNs) {
      livenessChecked = now;
      const Status alive = checkPeersAlive(ch, peer, target, waitingForData);
      if (alive != Status::Ok) {
        CHORUS_WARN("%s", ch.errorText);
        return alive;
      }
    }
    if (ch.timeoutNs > 0 && now - start > ch.timeoutNs) {
      snprintf(ch.errorText, sizeof ch.errorText,
               "%s (%s algorithm): rank %d timed out after %.0f s (CHORUS_TIMEOUT) waiting for rank %d %s (message %llu of "
               "that FIFO)",
               collName(ch.coll), algoName(ch.algo), ch.rank, ch.timeoutNs / 1e9, peer,
               waitingForData ? "to send data" : "to free a FIFO slot", (unsigned long long)target);
      CHORUS_WARN("%s", ch.errorText);
      return Status::Timeout;
    }
  }
}

}  // namespace chorus
