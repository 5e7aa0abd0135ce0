// The device proxy (transport/ucx/ucx_proxy.h) without a GPU: this program
// plays the kernels in host memory, on every rank each its own node (UCX
// tcp).  Each rank streams messages around a ring on two channels of 4
// slots of 4 KiB (small: hundreds of credit cycles per channel), writing a
// slot, its size (line 1 of its inline slot) and the tail as a kernel
// does, and reading its predecessor's messages from its receive FIFO as
// the proxies deliver them.  Every message's bytes are checked against the
// sender's pattern, the bytes sent and received are summed over the ranks
// with MPI_Allreduce, and each proxy must have posted every message.
// Then a broken contract: rank 0's proxy sends one message twice
// (kNetFaultDuplicate); its successor's proxy must fail with an error
// naming it ("arrived twice") and raise the word the kernels poll.
// Run by proxy-np3-each.test (and with UCX reordering every data message
// under CHORUS_TEST_NET_FAULTS=reorder by proxy-np3-each-reorder.test).
// CHORUS_TEST_PROXY_SLOTS_APART=1 (proxy-np3-each-apart.test): the slots in
// an allocation of their own, as GPUDirect RDMA lays them out (here host
// memory), which only puts may fill.
#include <mpi.h>
#include <sched.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "chorus.h"
#include "comm/context.h"
#include "rank_test.h"
#include "transport/ucx/ucx.h"
#include "transport/ucx/ucx_proxy.h"

namespace {

int rank = 0, size = 1;
std::string failure;

void fail(const std::string &why) {
  if (failure.empty()) failure = why;
}

constexpr int kChannels = 2;
constexpr size_t kSlotBytes = 4096;
constexpr int kSlots = 4;
constexpr uint64_t kMessages = 400;

void *takeAligned(size_t bytes) { return aligned_alloc(chorus::kFifoAlign, (bytes + 127) & ~size_t(127)); }

unsigned char patternByte(int sender, int channel, uint64_t m, size_t i) {
  return static_cast<unsigned char>(sender * 31 + channel * 7 + int(m) * 13 + int(i));
}
// Every seventh message is empty (a ring's short blocks send such), which
// goes as a header even where full slots go by put only.
size_t messageBytes(int channel, uint64_t m) {
  return m % 7 == 3 ? 0 : 1 + (size_t(m) * 977 + size_t(channel) * 131) % kSlotBytes;
}

// Waits as a kernel's thread 0 does, for *counter >= target; false once
// the proxy raised `abortWord` or after `seconds`.
bool waitCounter(const uint64_t *counter, uint64_t target, const int *abortWord, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) < target) {
    if (__atomic_load_n(abortWord, __ATOMIC_ACQUIRE)) return false;
    if (std::chrono::steady_clock::now() > until) return false;
    sched_yield();
  }
  return true;
}

struct Played {
  chorus::NetProxy *proxy = nullptr;
  int abortWord = 0;
};

// Set up a proxy on `c`'s context (every rank), started.
bool startProxy(MPI_Comm c, Played &p) {
  int one = 1, sum = 0;
  if (MPIX_Allreduce_gpu(&one, &sum, 1, MPI_INT, MPI_SUM, c) != MPI_SUCCESS || sum != size) {
    fail("the host allreduce that sets up the context failed");
    return false;
  }
  chorus::Context *ctx = chorus::contextFind(c);
  if (!ctx) {
    fail("no Chorus context on the communicator");
    return false;
  }
  chorus::NetProxyConfig config;
  config.nchannels = kChannels;
  config.slotBytes = kSlotBytes;
  config.nslots = kSlots;
  config.memory.alloc = takeAligned;
  config.memory.release = free;
  if (getenv("CHORUS_TEST_PROXY_SLOTS_APART")) {
    config.memory.slotAlloc = takeAligned;
    config.memory.slotFree = free;
    config.memory.slotsMemoryType = 0;  // UCS_MEMORY_TYPE_HOST
  }
  if (chorus::netProxyCreate(*ctx, config, &p.proxy) != chorus::Status::Ok) {
    fail("netProxyCreate failed");
    return false;
  }
  if (chorus::netProxyStart(*p.proxy, &p.abortWord) != chorus::Status::Ok) {
    fail("netProxyStart failed");
    return false;
  }
  return true;
}

// Plays kernels streaming `count` messages per channel around the ring, a
// window (kSlots messages) at a time: all its slots written, then one
// tail store, so that the proxy finds several messages at once (as behind
// a kernel that ran ahead of it) and the reorder fault has two to swap.
// Returns the bytes received, each checked against the sender's pattern.
uint64_t ringTraffic(Played &p, uint64_t count, double seconds, uint64_t *sent, std::string *why) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  uint64_t received = 0;
  for (uint64_t base = 0; base < count && why->empty(); base += kSlots) {
    const uint64_t end = base + kSlots < count ? base + kSlots : count;
    for (int c = 0; c < kChannels && why->empty(); ++c) {
      const chorus::FifoEnd &out = chorus::netProxySendEnd(*p.proxy, c, next);
      // The window is free: the receiver consumed the previous one.
      if (!waitCounter(&out.header->head.value, base, &p.abortWord, seconds)) {
        *why = "no credit for message " + std::to_string(base) + " to rank " + std::to_string(next);
        break;
      }
      for (uint64_t m = base; m < end; ++m) {
        const size_t bytes = messageBytes(c, m);
        unsigned char *slot = reinterpret_cast<unsigned char *>(out.slot(m));
        for (size_t i = 0; i < bytes; ++i) slot[i] = patternByte(rank, c, m, i);
        __atomic_store_n(&out.inlineSlot(m)[1].flag, uint64_t(bytes), __ATOMIC_RELAXED);
        *sent += bytes;
      }
      __atomic_store_n(&out.header->tail.value, end, __ATOMIC_RELEASE);
    }
    for (int c = 0; c < kChannels && why->empty(); ++c) {
      const chorus::FifoEnd &in = chorus::netProxyRecvEnd(*p.proxy, c, prev);
      for (uint64_t m = base; m < end && why->empty(); ++m) {
        const std::string which = "message " + std::to_string(m) + " of channel " + std::to_string(c) +
                                  " from rank " + std::to_string(prev);
        if (!waitCounter(&in.header->tail.value, m + 1, &p.abortWord, seconds)) {
          *why = which + " never arrived";
          break;
        }
        const size_t bytes = messageBytes(c, m);
        const unsigned char *slot = reinterpret_cast<const unsigned char *>(in.slot(m));
        for (size_t i = 0; i < bytes && why->empty(); ++i)
          if (slot[i] != patternByte(prev, c, m, i)) *why = which + " differs at byte " + std::to_string(i);
        received += bytes;
        __atomic_store_n(&in.header->head.value, m + 1, __ATOMIC_RELEASE);
      }
    }
  }
  return received;
}

void streamAroundTheRing() {
  MPI_Comm c = dupReturningErrors();
  Played p;
  if (!startProxy(c, p)) return;
  uint64_t sent = 0;
  std::string why;
  const uint64_t received = ringTraffic(p, kMessages, 20, &sent, &why);
  if (!why.empty()) fail("ring: " + why);
  uint64_t totals[2] = {sent, received}, sums[2] = {0, 0};
  MPI_Allreduce(totals, sums, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (sums[0] != sums[1])
    fail("ring: the ranks sent " + std::to_string(sums[0]) + " bytes and received " + std::to_string(sums[1]));
  if (why.empty() && chorus::netProxyMessages(*p.proxy) != kMessages * kChannels)
    fail("ring: the proxy posted " + std::to_string(chorus::netProxyMessages(*p.proxy)) + " messages, not " +
         std::to_string(kMessages * kChannels));
  chorus::Status s;
  char text[400];
  if (chorus::netProxyFailure(*p.proxy, &s, text, sizeof text)) fail(std::string("ring: the proxy failed: ") + text);
  // Slots apart: every message with bytes went by put, whatever
  // CHORUS_NET_PROTO says.
  uint64_t withBytes = 0;
  for (uint64_t m = 0; m < kMessages; ++m)
    for (int c = 0; c < kChannels; ++c) withBytes += messageBytes(c, m) > 0;
  const uint64_t puts = chorus::netProxyCounters(*p.proxy).puts;
  if (getenv("CHORUS_TEST_PROXY_SLOTS_APART") && why.empty() && puts != withBytes)
    fail("ring: the slots apart took " + std::to_string(puts) + " puts for " + std::to_string(withBytes) +
         " messages with bytes");
  // Under CHORUS_TEST_NET_FAULTS=reorder the transport must have swapped
  // messages (each rank's proxy meets whole windows at once).
  const char *faults = getenv("CHORUS_TEST_NET_FAULTS");
  if (faults && contains(faults, "reorder") && chorus::netProxyCounters(*p.proxy).reordered == 0)
    fail("ring: CHORUS_TEST_NET_FAULTS=reorder, but no message was reordered");
  MPI_Barrier(MPI_COMM_WORLD);  // (every rank has what it waits for before any proxy stops)
  chorus::netProxyFree(p.proxy);
  MPI_Comm_free(&c);
}

// Rank 0's proxy duplicates a data message to rank 1, whose proxy must
// fail naming it and raise the abort word.  The other ranks only must not
// hang (their waits are bounded).
void duplicateMessage() {
  MPI_Comm c = dupReturningErrors();
  Played p;
  if (!startProxy(c, p)) return;
  if (rank == 0) chorus::netProxySetTestFaults(*p.proxy, chorus::kNetFaultDuplicate);
  MPI_Barrier(MPI_COMM_WORLD);
  uint64_t sent = 0;
  std::string why;
  ringTraffic(p, 8, 3, &sent, &why);
  if (rank == 1) {
    chorus::Status s;
    char text[400] = "";
    // The duplicate may come after this rank's last wait: give it a moment.
    for (int i = 0; i < 200 && !chorus::netProxyFailure(*p.proxy, &s, text, sizeof text); ++i) sched_yield();
    const bool failed = chorus::netProxyFailure(*p.proxy, &s, text, sizeof text);
    if (!failed) fail("duplicate: rank 1's proxy did not fail on the duplicated message");
    else if (!contains(text, "arrived twice") || !contains(text, "rank 0"))
      fail(std::string("duplicate: the proxy's error does not name the duplicate from rank 0: ") + text);
    else if (!__atomic_load_n(&p.abortWord, __ATOMIC_ACQUIRE))
      fail("duplicate: the proxy failed without raising the kernels' abort word");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  chorus::netProxyFree(p.proxy);
  MPI_Comm_free(&c);
}

}  // namespace

int main(int argc, char **argv) {
  initRanks(&argc, &argv, &rank, &size);
  if (size < 3) {
    fail("run with 3 ranks or more, each its own node");
  } else {
    streamAroundTheRing();
    if (failure.empty()) duplicateMessage();
  }
  const int status = reportRank(rank, failure, "");
  MPI_Finalize();
  return status;
}
