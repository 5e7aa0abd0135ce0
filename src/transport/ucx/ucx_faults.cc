// ucx transport, tests only: faults injected into the messages this rank
// sends (CHORUS_TEST_NET_FAULTS, ucx.h), so that CI proves the receiver's
// checks (ucx_arrival.cc) on a transport, tcp on one machine, that never
// reorders, duplicates or corrupts by itself.  Off (faults == 0), data
// messages go straight to ucxSend.
#include <cstring>
#include <string>

#include "core/log.h"
#include "transport/ucx/ucx_state.h"

namespace chorus {

namespace {

// One-shot faults (duplicate, corrupt-header, out-of-window) hit the
// third data message after they are armed: past the first exchanges, so
// that the FIFOs have state to break.
constexpr uint64_t kOneShotAfter = 3;
constexpr uint64_t kForgeEvery = 3;
constexpr unsigned kOneShot = kNetFaultDuplicate | kNetFaultCorruptHeader | kNetFaultOutOfWindow;

}  // namespace

unsigned ucxParseFaults(const char *text) {
  unsigned faults = 0;
  if (!text) return 0;
  std::string list(text);
  size_t at = 0;
  while (at <= list.size()) {
    size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    const std::string name = list.substr(at, end - at);
    if (name == "reorder") faults |= kNetFaultReorder;
    else if (name == "duplicate") faults |= kNetFaultDuplicate;
    else if (name == "corrupt-header") faults |= kNetFaultCorruptHeader;
    else if (name == "out-of-window") faults |= kNetFaultOutOfWindow;
    else if (name == "forge") faults |= kNetFaultForge;
    else if (!name.empty())
      CHORUS_WARN("CHORUS_TEST_NET_FAULTS: unknown fault '%s' (reorder, duplicate, corrupt-header, out-of-window, "
                  "forge)", name.c_str());
    at = end + 1;
  }
  return faults;
}

void ucxSetTestFaults(PeerLinks &links, unsigned faults) {
  auto *st = static_cast<UcxState *>(links.netState);
  if (!st) return;
  std::lock_guard<std::recursive_mutex> lock(ucxWorkerLock());  // another thread may be running the worker
  st->faults = faults;
  st->faultCountdown = kOneShotAfter;
  if (!(faults & kNetFaultReorder)) ucxReleaseHeld(*st);
}

UcxCounters ucxCounters(const PeerLinks &links) {
  auto *st = static_cast<UcxState *>(links.netState);
  if (!st) return UcxCounters{};
  std::lock_guard<std::recursive_mutex> lock(ucxWorkerLock());
  UcxCounters counters = st->counters;
  // A message without a known token cannot be told apart by communicator
  // on the shared worker: each counts those dropped while it lives.
  if (st->registered) counters.forgedDropped += ucxUnknownDropped() - st->droppedAtStart;
  counters.workerUsers = uint64_t(ucxWorkerUsers());
  auto bytesOf = [](const auto &v) { return uint64_t(v.size() * sizeof(v[0])); };
  counters.tableBytes = bytesOf(st->eps) + bytesOf(st->isRemote) + bytesOf(st->sendCopy) + bytesOf(st->recvCopy) +
                        bytesOf(st->linkMemh) + bytesOf(st->rkeyOut) + bytesOf(st->putTo) + bytesOf(st->failed) +
                        bytesOf(st->arrivals) + bytesOf(st->held);
  return counters;
}

void ucxReleaseHeld(UcxState &st) {
  for (size_t p = 0; p < st.held.size(); ++p) {
    HeldMessage &m = st.held[p];
    if (!m.held) continue;
    m.held = false;
    ucxSend(st, int(p), m.id, m.header, m.data, m.bytes);
  }
}

void ucxSendData(UcxState &st, int peer, unsigned id, const NetHeader &h, const void *data, size_t bytes) {
  if (__builtin_expect(st.faults == 0, 1)) return ucxSend(st, peer, id, h, data, bytes);
  if (st.faults & kNetFaultForge) {
    if (++st.forgeTick % kForgeEvery == 0) {
      NetHeader forged = h;
      forged.token ^= 0x5eed;
      ++st.counters.forgedSent;
      ucxSend(st, peer, id, forged, data, bytes);
    }
  }
  if ((st.faults & kOneShot) && st.faultCountdown > 0 && --st.faultCountdown == 0) {
    const unsigned fault = st.faults & kOneShot;
    st.faults &= ~kOneShot;
    if (fault & kNetFaultDuplicate) {
      ++st.counters.duplicated;
      ucxSend(st, peer, id, h, data, bytes);
      ucxSend(st, peer, id, h, data, bytes);
    } else {
      ++st.counters.corrupted;
      NetHeader bad = h;
      if (fault & kNetFaultCorruptHeader) bad.lines = 4096;
      else bad.value += 1000;
      ucxSend(st, peer, id, bad, data, bytes);
    }
    return;
  }
  if (st.faults & kNetFaultReorder) {
    HeldMessage &m = st.held[size_t(peer)];
    if (!m.held) {
      m = HeldMessage{true, id, h, data, bytes};
      return;
    }
    // The later message overtakes the held one.
    ucxSend(st, peer, id, h, data, bytes);
    m.held = false;
    ++st.counters.reordered;
    ucxSend(st, peer, m.id, m.header, m.data, m.bytes);
    return;
  }
  ucxSend(st, peer, id, h, data, bytes);
}

}  // namespace chorus
