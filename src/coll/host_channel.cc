#include "coll/host_channel.h"

#include <sched.h>
#include <time.h>

#include <cstdio>
#include <cstring>

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
  if (!e.remote || !e.header || counter != &e.header->head.value || e.creditAsked >= target) return;
  e.creditAsked = target;
  ch.netOps->postCreditRequest(ch.net, e, target);
}

// Run the network transport once (FIFOs to other nodes are filled by it).
inline Status progressNet(HostChannel &ch, int peer) {
  if (!ch.net) return Status::Ok;
  const Status s = ch.netOps->progress(ch.net, peer, ch.seq, ch.errorText, sizeof ch.errorText);
  if (s != Status::Ok) CHORUS_WARN("%s (in %s, %s algorithm)", ch.errorText, collName(ch.coll), algoName(ch.algo));
  return s;
}

// The sender's gave-up message (kAbortTag) among those `peer` posted to us
// and we have not consumed yet: Status::Mismatch, named, when there is one.
Status peerGaveUp(HostChannel &ch, int peer) {
  if (!ch.recvFrom || peer < 0 || peer >= ch.nranks || peer == ch.rank) return Status::Ok;
  const FifoEnd &e = ch.recvFrom[peer];
  if (!e.header) return Status::Ok;
  const uint64_t posted = loadAcquire(&e.header->tail);
  for (uint64_t m = e.step; m < posted && m < e.step + kInlineSlots; ++m) {
    const uint64_t h = loadAcquire(&e.inlineSlot(m)[0].flag);
    if (headerMessage(h) == m + 1 && headerTag(h) == kAbortTag) return hostMismatch(ch, e, h, 0, 0);
  }
  return Status::Ok;
}

// Whether the awaited message was posted in another shape: its first
// line's flag (which every message writes: an inline one with its first
// line, a full slot as its header word, fifo.h) carries the awaited
// message's number with another tag.  Read from the message itself, not
// inferred from the tail: messages from another node may land out of order
// (several UCX lanes), and a later message's tail says nothing of this one.
inline bool postedOtherwise(const AwaitedMessage *a) {
  if (!a) return false;
  const uint64_t first = loadAcquire(&a->fifo->inlineSlot(a->fifo->step)[0].flag);
  return headerMessage(first) == headerMessage(a->header) && first != a->header;
}

// A peer on this node that failed in this very call (its RankStatus says
// so): the collective cannot complete, so this rank stops waiting now
// rather than after CHORUS_TIMEOUT.  Peers on other nodes say so with an
// abort message (NetOps::abort).
Status peerFailedInCall(HostChannel &ch, int peer) {
  const int failed = peerFailedIn(ch.peerStatus, ch.nranks, ch.rank, ch.seq);
  if (failed < 0) return Status::Ok;
  snprintf(ch.errorText, sizeof ch.errorText,
           "%s #%llu (%s algorithm): rank %d failed in it; rank %d stopped waiting for rank %d", collName(ch.coll),
           (unsigned long long)ch.seq, algoName(ch.algo), failed, ch.rank, peer);
  CHORUS_WARN("%s", ch.errorText);
  return Status::PeerFailed;
}

const char *const kCheckHint = "; the ranks' calls differ (CHORUS_CHECK=1 compares them)";

}  // namespace

Status hostMismatch(HostChannel &ch, const FifoEnd &e, uint64_t got, uint64_t want, size_t bytes) {
  const uint32_t tag = headerTag(got), wanted = headerTag(want);
  const char *const coll = collName(ch.coll);
  const unsigned long long seq = ch.seq;
  const int n = snprintf(ch.errorText, sizeof ch.errorText, "%s #%llu (%s algorithm): rank %d ", coll, seq,
                         algoName(ch.algo), ch.rank);
  char *out = ch.errorText + n;
  const size_t room = sizeof ch.errorText - size_t(n);
  if (tag == kAbortTag) {
    uint64_t theirs = 0;
    memcpy(&theirs, e.inlineSlot(e.step)[0].payload, sizeof theirs);
    snprintf(out, room, "stopped: rank %d gave up after a mismatch in its call #%llu%s", e.peer,
             (unsigned long long)theirs, kCheckHint);
  } else if (headerMessage(got) != e.step + 1) {
    snprintf(out, room, "expected %zu B from rank %d, which posted a message of another size%s", bytes, e.peer,
             kCheckHint);
  } else if (tagColl(tag) != tagColl(wanted) || tagSeq(tag) != tagSeq(wanted)) {
    const uint32_t c = tagColl(tag);
    snprintf(out, room, "expected %zu B of %s #%llu from rank %d and got a message of %s #%u (mod 16)%s", bytes, coll,
             seq, e.peer, c < uint32_t(Coll::Count) ? collName(Coll(c)) : "?", tagSeq(tag), kCheckHint);
  } else {
    snprintf(out, room, "expected %zu B from rank %d and got a message of another size, count, type, op or root%s", bytes,
             e.peer, kCheckHint);
  }
  CHORUS_WARN("%s", ch.errorText);
  hostGiveUp(ch);
  return Status::Mismatch;
}

void hostGiveUp(HostChannel &ch) {
  if (!ch.sendTo) return;
  for (int p = 0; p < ch.nranks; ++p) {
    FifoEnd &e = ch.sendTo[p];
    if (p == ch.rank || !e.header) continue;
    // Free only if the message that last used the inline slot was consumed;
    // a peer that far behind finds out by CHORUS_TIMEOUT.
    const uint64_t need = e.step + 1 - uint64_t(kInlineSlots);
    if (static_cast<int64_t>(need) > 0 && loadAcquire(&e.header->head) < need) continue;
    InlineLine *lines = e.inlineSlot(e.step);
    memcpy(lines[0].payload, &ch.seq, sizeof ch.seq);
    const uint64_t header = messageHeader(e.step + 1, kAbortTag);
    for (int l = 0; l < kInlineLines; ++l) storeRelease(&lines[l].flag, header);
    storeRelease(&e.header->tail, ++e.step);
    if (e.remote) ch.netOps->postMessage(ch.net, e, e.step - 1, 0, kInlineLines);
  }
}

Status hostWaitCounter(HostChannel &ch, const uint64_t *counter, uint64_t target, int peer, bool waitingForData,
                       const AwaitedMessage *awaited) {
  // For errors: the awaited message's number (an inline flag's target is its header).
  const uint64_t message = awaited ? awaited->fifo->step + 1 : target;
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
    e->waitMessage = message;
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
    if (postedOtherwise(awaited))
      return hostMismatch(ch, *awaited->fifo, loadAcquire(&awaited->fifo->inlineSlot(awaited->fifo->step)[0].flag),
                          awaited->header, awaited->bytes);
    if ((round & 63) != 63) continue;
    if (const Status gaveUp = peerGaveUp(ch, peer); gaveUp != Status::Ok) return gaveUp;
    const int64_t now = nowNs();
    if (ch.watchedPids && now - livenessChecked > kLivenessPeriodNs) {
      livenessChecked = now;
      const Status alive = checkPeersAlive(ch, peer, message, waitingForData);
      if (alive != Status::Ok) {
        CHORUS_WARN("%s", ch.errorText);
        return alive;
      }
      if (const Status failed = peerFailedInCall(ch, peer); failed != Status::Ok) return failed;
    }
    if (ch.timeoutNs > 0 && now - start > ch.timeoutNs) {
      snprintf(ch.errorText, sizeof ch.errorText,
               "%s (%s algorithm): rank %d timed out after %.0f s (CHORUS_TIMEOUT) waiting for rank %d %s (message %llu of "
               "that FIFO); a rank in another collective waits so too: CHORUS_CHECK=1 compares the calls",
               collName(ch.coll), algoName(ch.algo), ch.rank, ch.timeoutNs / 1e9, peer,
               waitingForData ? "to send data" : "to free a FIFO slot",
               (unsigned long long)message);
      CHORUS_WARN("%s", ch.errorText);
      return Status::Timeout;
    }
  }
}

}  // namespace chorus
