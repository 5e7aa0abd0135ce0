// The device primitives: the verbs of HostPrims (prims_host.h), with the same
// names and semantics, so the shared algorithm templates (src/coll/*.h) run
// unchanged in a kernel.  One block runs one channel; every thread of the
// block calls every primitive (the algorithms' control flow is uniform).
//
// Each call is one step:
//   1. thread 0 waits: Simple waits for the receive peers' tail counters and
//      the send peers' credits (head); LL waits for credits only.  Counters
//      read earlier are cached (FifoEnd::seen): a peer's line is read again
//      only when the cached value does not cover this step.
//   2. barrier; all threads move the data: fold the inputs in the same order
//      as the host (bitwise-identical results) and store to every output.
//      LL packs 4 data bytes with a 4-byte flag (the message number, see
//      llFlag) in each 8-byte store; receivers poll the flags per line.
//   3. barrier; thread 0 fences once and posts: head to the receive peers
//      (credits back), tail to the send peers (Simple only: LL receivers
//      poll the lines).
// Every wait is bounded by timeoutNs of the global timer; on expiry the block
// records the peer and message in the host-mapped DevError, raises its abort
// flag (which stops every other block too) and the primitives become no-ops.
//
// Memory ordering (PTX ISA, "Memory Consistency Model"; the scoped
// operations are the chorus*Sys helpers of device_lang.h).  The peer is
// another GPU, so every synchronising operation is system-scoped:
//  - acquire: thread 0 polls a counter with strong relaxed.sys loads and,
//    once one shows enough, reads it again with ld.acquire.sys, which
//    synchronizes with the peer's release pattern that wrote the value it
//    reads (the counter only grows, so it reads that value or a later
//    one, each written by such a release).  One acquire load per counter
//    waited for, where a fence.acq_rel.sys after the polls would also have
//    waited for this block's own outstanding stores (the previous step's
//    remote tail among them).  The barrier after it (bar.sync: release and
//    acquire at CTA scope) extends the order to every thread's slot
//    accesses: base causality order is transitive.
//  - release: every thread's slot accesses precede the barrier, which
//    orders them before thread 0's fence.acq_rel.sys at CTA scope; the
//    fence followed by thread 0's strong store of head or tail is a release
//    pattern, and causality order is cumulative, so the peer that acquires
//    the counter sees the whole block's writes (and the block's reads of a
//    slot are done before the peer's next writes to it).  Hence one fence
//    per step, by the posting thread only.
//  - LL lines are 8-byte aligned strong (relaxed.sys) stores and loads:
//    morally strong, so single-copy atomic; the flag and the data of a line
//    come from one write and need no fence between them.  A unit's two
//    lines go in one 16-byte vector store and come back in one vector load
//    (one instruction, two polls' worth): a vector access is atomic per
//    element only, which is all the lines need, each with its own flag.
#pragma once

#include <cuda_runtime.h>

#include "coll/functors.h"
#include "coll/prims_limits.h"
#include "cuda/device_channel.h"
#include "cuda/device_lang.h"
#include "cuda/reduce_copy.cuh"

namespace chorus {

namespace devprims {

// LL flags.  The flag of message m is (m + 1) mod 2^W (W = 32; fewer with
// CHORUS_LL_FLAG_BITS, so that tests wrap it: llFlagMask = 2^W - 1).  A
// receiver waiting for message m must never find that flag in a line
// written by another message.  The sender therefore re-flags its whole slot
// (every line: the message's own, the rest with no data) when it sends a
// message m >= C with m mod C < nslots, C = 2^(W-1): each slot once per C
// messages from the C-th on.  nslots divides C, so when a message m >= C is
// sent, slot m % nslots was last re-flagged by message
// m' = C*floor(m/C) + m % nslots, and m - m' < C.  Every line of the slot
// then holds the flag of a message in [m', m] (writes to a line follow
// message order: the sender overwrites a slot only after the receiver's
// release of its credit, which orders the reads of the previous message
// before); and no two messages less than 2^W apart share a flag, so a line
// matches only when message m wrote it.  Before message C a line holds 0
// (the FIFO is zeroed at set-up) or the flag of an earlier message, and
// flags 1..C of messages 0..C-1 are distinct and never 0: a slot's first
// use needs no re-flag (at W = 32 no slot is ever re-flagged in practice:
// C is 2^31 messages).
__device__ __forceinline__ uint32_t llFlag(uint64_t message, uint32_t mask) { return uint32_t(message + 1) & mask; }
__device__ __forceinline__ bool llReflag(uint64_t message, uint32_t mask, int nslots) {
  const uint64_t c = uint64_t(mask >> 1) + 1;
  return message >= c && (message & (c - 1)) < uint64_t(nslots);
}

}  // namespace devprims

template <typename T, typename Func, int kProto>
class DevicePrims {
 public:
  // sPending/sError: block-shared flags owned by the kernel (see step()).
  __device__ DevicePrims(const DevCollArgs &args, const DevChannel &ch, int *sPending, int *sError)
      : args_(args), ch_(ch), sPending_(sPending), sError_(sError) {}

  __device__ size_t maxElems() const { return args_.sliceElems; }
  __device__ bool ok() const { return *reinterpret_cast<volatile int *>(sError_) == 0; }
  __device__ int rank() const { return args_.rank; }
  __device__ int nranks() const { return args_.nranks; }

  __device__ void connect(const int *recvPeers, int nrecv, const int *sendPeers, int nsend, int srcPosition = 0) {
    nrecv_ = nrecv;
    nsend_ = nsend;
    for (int i = 0; i < nrecv; ++i) recv_[i] = &ch_.recvFrom[peerMap_ ? peerMap_[recvPeers[i]] : recvPeers[i]];
    for (int i = 0; i < nsend; ++i) send_[i] = &ch_.sendTo[peerMap_ ? peerMap_[sendPeers[i]] : sendPeers[i]];
    srcPosition_ = srcPosition;
  }
  // Until reset (null), the peers connect() names are indices into `map`
  // (an algorithm run over ring positions: kernels_impl.cuh).
  __device__ void mapPeers(const int *map) { peerMap_ = map; }
  __device__ void connect1(int recvPeer, int sendPeer) {
    const int r[1] = {recvPeer}, s[1] = {sendPeer};
    connect(r, recvPeer < 0 ? 0 : 1, s, sendPeer < 0 ? 0 : 1);
  }

  __device__ void send(const T *src, size_t n) { step(src, nullptr, n, kSrc | kSend); }
  __device__ void recv(T *dst, size_t n) { step(nullptr, dst, n, kRecv | kDst); }
  __device__ void recvReduceSend(const T *src, size_t n) { step(src, nullptr, n, kRecv | kSrc | kSend); }
  __device__ void recvReduceCopy(const T *src, T *dst, size_t n) { step(src, dst, n, kRecv | kSrc | kDst | kFinal); }
  __device__ void recvReduceCopySend(const T *src, T *dst, size_t n) {
    step(src, dst, n, kRecv | kSrc | kDst | kSend | kFinal);
  }
  __device__ void recvCopySend(T *dst, size_t n) { step(nullptr, dst, n, kRecv | kDst | kSend); }
  __device__ void copySend(const T *src, T *dst, size_t n) { step(src, dst, n, kSrc | kDst | kSend); }
  __device__ void recvReduceLocal(const T *src, T *dst, size_t n) { step(src, dst, n, kRecv | kSrc | kDst); }
  __device__ void localCopy(const T *src, T *dst, size_t n) { step(src, dst, n, kSrc | kDst | kFinal); }

 private:
  enum : unsigned { kRecv = 1, kSend = 2, kSrc = 4, kDst = 8, kFinal = 16 };
  static constexpr int kMaxIn = kMaxPrimPeers + 1;

  // --- waiting -------------------------------------------------------------

  // Record the first failure of the whole kernel in the host-mapped record.
  __device__ void recordFailure(Status s, int peer, uint64_t target, bool forData) {
    // The race between blocks is settled in device memory (system-scope
    // atomics on host memory need hardware support we cannot assume); the
    // winner then fills the host-mapped record.  Its fields, then the fence
    // and the strong store of `aborted`: a release pattern at system scope,
    // paired with the host's acquire load of `aborted` (cuda_executor.cc).
    if (atomicCAS(args_.abortFlag, 0, 1) == 0) {
      volatile DevError *err = args_.error;
      err->status = int32_t(s);
      err->channel = int32_t(blockIdx.x);
      err->peer = peer;
      err->forData = forData ? 1 : 0;
      err->target = target;
      chorusFenceAcqRelSys();
      err->aborted = 1;  // volatile: a strong (relaxed.sys) store
    }
  }

  __device__ bool aborted() const {
    return *reinterpret_cast<volatile int *>(args_.abortFlag) != 0 ||
           (args_.netAbort && *reinterpret_cast<const volatile int *>(args_.netAbort) != 0);
  }

  // true once `start` (0: not yet read) is more than the timeout ago.  The
  // global timer, not clock64: the per-SM cycle counters are not
  // synchronised, and a block moved to another SM would see a jump.
  __device__ bool timedOut(uint64_t *start) const {
    if (!args_.timeoutNs) return false;
    const uint64_t now = chorusGlobalTimerNs();
    if (*start == 0) *start = now;
    return now - *start > args_.timeoutNs;
  }

  // Spin until *counter >= target, reading the counter only when the cached
  // value `*seen` falls short.  false (and a recorded failure) on timeout or
  // when another block already failed.  Relaxed polls, then one acquire
  // load once a poll shows enough (the top of this file).
  __device__ bool waitCounter(const FifoCounter *counter, uint64_t target, uint64_t *seen, int peer, bool forData) {
    if (static_cast<int64_t>(target) <= 0 || *seen >= target) return true;
    uint64_t start = 0;
    for (unsigned spins = 0;; ++spins) {
      if (chorusLoadRelaxedSys(&counter->value) >= target) {
        *seen = chorusLoadAcquireSys(&counter->value);
        return true;
      }
      if ((spins & 1023) == 1023) {
        if (aborted()) return false;
        if (timedOut(&start)) {
          recordFailure(Status::Timeout, peer, target, forData);
          return false;
        }
      }
    }
  }

  // --- data movement -------------------------------------------------------

  // Load the 8-byte unit `u` of a local buffer of `nbytes` (partial at the end).
  __device__ static uint64_t loadUnit(const T *p, size_t u, size_t nbytes) {
    const char *c = reinterpret_cast<const char *>(p) + u * 8;
    if (u * 8 + 8 <= nbytes && (reinterpret_cast<uintptr_t>(c) & 7) == 0)
      return __ldcv(reinterpret_cast<const unsigned long long *>(c));
    devprims::Vec8<T> w;
    w.raw = 0;
    constexpr int kPer = 8 / sizeof(T);
    for (int k = 0; k < kPer && u * 8 + k * sizeof(T) < nbytes; ++k)
      w.elem[k] = devprims::loadElemAny(reinterpret_cast<const T *>(c) + k);  // p may be misaligned for T
    return w.raw;
  }

  __device__ static void storeUnit(T *p, size_t u, size_t nbytes, uint64_t raw) {
    char *c = reinterpret_cast<char *>(p) + u * 8;
    if (u * 8 + 8 <= nbytes && (reinterpret_cast<uintptr_t>(c) & 7) == 0) {
      *reinterpret_cast<uint64_t *>(c) = raw;
      return;
    }
    devprims::Vec8<T> w;
    w.raw = raw;
    constexpr int kPer = 8 / sizeof(T);
    for (int k = 0; k < kPer && u * 8 + k * sizeof(T) < nbytes; ++k)
      devprims::storeElemAny(reinterpret_cast<T *>(c) + k, w.elem[k]);
  }

  // Wait for LL unit `u` (two 8-byte lines, read together by one 16-byte
  // load) of a receive slot to carry `flag` in both.  On failure it raises
  // the block's give-up hint (sPending_) so the other threads stop polling;
  // the hint is never lowered: a failed block stays failed (fail()).
  __device__ bool readLLUnit(const uint64_t *lines, size_t u, uint32_t flag, const FifoEnd &e, uint64_t *raw) {
    uint64_t start = 0;
    for (unsigned spins = 0;; ++spins) {
      uint64_t lo, hi;
      chorusLoadRelaxedSys2(lines + 2 * u, &lo, &hi);
      if (uint32_t(lo >> 32) == flag && uint32_t(hi >> 32) == flag) {
        *raw = uint64_t(uint32_t(lo)) | (uint64_t(uint32_t(hi)) << 32);
        return true;
      }
      if ((spins & 1023) == 1023) {
        if (*reinterpret_cast<volatile int *>(sPending_)) return false;
        if (aborted() || timedOut(&start)) {
          if (!aborted()) recordFailure(Status::Timeout, e.peer, e.step + 1, true);
          *reinterpret_cast<volatile int *>(sPending_) = 1;
          return false;
        }
      }
    }
  }

  // One step's LL slot and flag per peer, computed once per step instead of
  // a 64-bit modulo (and FifoEnd loads) per 8-byte unit.
  struct LLPeer {
    uint64_t *lines;
    uint32_t flag;
  };
  __device__ LLPeer llPeer(const FifoEnd &e) const {
    return LLPeer{reinterpret_cast<uint64_t *>(e.slot(e.step)), devprims::llFlag(e.step, args_.llFlagMask)};
  }

  // false when this thread gave up (timeout, abort, or another thread's).
  __device__ bool moveLL(const T *src, T *dst, size_t n, unsigned flags, bool doRecv, bool doSend) {
    Func func;
    const size_t nbytes = n * sizeof(T);
    const size_t nunits = nbytes == 0 ? 1 : (nbytes + 7) / 8;  // one unit carries even an empty message
    constexpr int kPer = 8 / sizeof(T);
    const bool doFinal = Func::kNeedsFinalize && (flags & kFinal);
    const int nrecv = doRecv ? nrecv_ : 0;
    const int nsend = doSend ? nsend_ : 0;
    LLPeer rp[kMaxPrimPeers], sp[kMaxPrimPeers];
    for (int i = 0; i < nrecv; ++i) rp[i] = llPeer(*recv_[i]);
    for (int i = 0; i < nsend; ++i) sp[i] = llPeer(*send_[i]);
    for (size_t u = threadIdx.x; u < nunits; u += blockDim.x) {
      devprims::Vec8<T> acc, x;
      bool have = false;
      for (int i = 0; i <= nrecv; ++i) {
        // Fold order as on the host: src sits before receive peer srcPosition.
        if ((flags & kSrc) && (i == srcPosition_ || (i == nrecv && srcPosition_ >= nrecv))) {
          x.raw = loadUnit(src, u, nbytes);
          if (!have) acc = x;
          else
            for (int k = 0; k < kPer; ++k) acc.elem[k] = func(acc.elem[k], x.elem[k]);
          have = true;
        }
        if (i == nrecv) break;
        if (!readLLUnit(rp[i].lines, u, rp[i].flag, *recv_[i], &x.raw)) return false;
        if (!have) acc = x;
        else
          for (int k = 0; k < kPer; ++k) acc.elem[k] = func(acc.elem[k], x.elem[k]);
        have = true;
      }
      if (doFinal)
        for (int k = 0; k < kPer; ++k) acc.elem[k] = Func::finalize(acc.elem[k], args_.nranks);
      if ((flags & kDst) && nbytes > 0) storeUnit(dst, u, nbytes, acc.raw);
      for (int i = 0; i < nsend; ++i) {
        const uint64_t flag = uint64_t(sp[i].flag) << 32;
        chorusStoreRelaxedSys2(sp[i].lines + 2 * u, flag | uint32_t(acc.raw), flag | uint32_t(acc.raw >> 32));
      }
    }
    // Re-flag the rest of the slot when this message's turn has come (llFlag).
    const size_t slotUnits = args_.slotBytes / 16;
    for (int i = 0; i < nsend; ++i) {
      if (!devprims::llReflag(send_[i]->step, args_.llFlagMask, send_[i]->nslots)) continue;
      const uint64_t line = uint64_t(sp[i].flag) << 32;
      for (size_t u = nunits + threadIdx.x; u < slotUnits; u += blockDim.x)
        chorusStoreRelaxedSys2(sp[i].lines + 2 * u, line, line);
    }
    return true;
  }

  // --- one step --------------------------------------------------------------

  __device__ __noinline__ void step(const T *src, T *dst, size_t n, unsigned flags) {
    if (!ok()) return;
    const bool doRecv = (flags & kRecv) && nrecv_ > 0;
    const bool doSend = (flags & kSend) && nsend_ > 0;
    const bool ll = kProto == int(Proto::LL) && (doRecv || doSend);

    bool good = true;
    if (threadIdx.x == 0) {
      // Acquire (see the top of this file): each wait's acquire load, then
      // the barrier, then every thread's slot accesses.  A wait served from
      // the cache needs none: the acquire load that filled it precedes this
      // step in program order (or, from an earlier kernel, in stream order).
      for (int i = 0; good && doRecv && !ll && i < nrecv_; ++i) {
        FifoEnd &e = *recv_[i];
        good = waitCounter(&e.header->tail, e.step + 1, &e.seen, e.peer, true);
      }
      for (int i = 0; good && doSend && i < nsend_; ++i) {
        FifoEnd &e = *send_[i];
        good = waitCounter(&e.header->head, e.step + 1 - e.nslots, &e.seen, e.peer, false);
      }
    }
    // Every thread gets the verdict from the barrier itself: a flag in
    // shared memory would be rewritten by thread 0 at the next step while a
    // slow warp may not have read it yet.
    if (__syncthreads_or(!good)) return fail();

    if constexpr (sizeof(T) > 8) {
      // No LL kernel is built for elements wider than an LL line's 8 data
      // bytes (kernel_table.h), so `ll` is false here.
    } else if (ll) {
      const bool gaveUp = !moveLL(src, dst, n, flags, doRecv, doSend);
      if (__syncthreads_or(gaveUp)) return fail();
    }
    if (!ll) {
      const T *in[kMaxIn];
      int nin = 0;
      for (int i = 0; doRecv && i < nrecv_; ++i) {
        if ((flags & kSrc) && i == srcPosition_) in[nin++] = src;
        in[nin++] = reinterpret_cast<const T *>(recv_[i]->slot(recv_[i]->step));
      }
      if ((flags & kSrc) && (!doRecv || srcPosition_ >= nrecv_)) in[nin++] = src;
      T *out[kMaxIn];
      int nout = 0;
      if (flags & kDst) out[nout++] = dst;
      for (int i = 0; doSend && i < nsend_; ++i) out[nout++] = reinterpret_cast<T *>(send_[i]->slot(send_[i]->step));
      if (n > 0 && nout > 0 && nin > 0 && !(nin == 1 && nout == 1 && out[0] == in[0] && !(flags & kFinal)))
        devprims::reduceCopy<T, Func>(in, nin, out, nout, n, (flags & kFinal) != 0, args_.nranks);
      __syncthreads();  // every thread's slot accesses before thread 0's release
    }

    if (threadIdx.x == 0) {
      // A link to another node (FifoEnd::remote) also tells the device
      // proxy the message's size (transport/ucx/ucx_proxy.h), released with
      // the slot by the fence below.
      for (int i = 0; doSend && !ll && i < nsend_; ++i)
        if (send_[i]->remote)
          chorusStoreRelaxedSys(&send_[i]->inlineSlot(send_[i]->step)[1].flag, uint64_t(n * sizeof(T)));
      // Release (see the top of this file): one fence for every counter
      // posted below.  An LL tail orders nothing (receivers poll the lines),
      // so an LL step that only sends needs none.
      if (doRecv || (doSend && !ll)) chorusFenceAcqRelSys();
      for (int i = 0; doRecv && i < nrecv_; ++i) {
        FifoEnd &e = *recv_[i];
        ++e.step;
        chorusStoreRelaxedSys(&e.header->head.value, e.step);
      }
      // LL receivers poll the lines, never the tail: an LL FIFO's tail
      // (its own, not Simple's) is not posted.
      for (int i = 0; doSend && i < nsend_; ++i) {
        FifoEnd &e = *send_[i];
        ++e.step;
        if (!ll) chorusStoreRelaxedSys(&e.header->tail.value, e.step);
      }
    }
    // No barrier needed here: the next step's barrier orders the step
    // updates before anyone reads them.
  }

  // Every thread arrives here together: make the failure sticky for ok().
  __device__ void fail() {
    if (threadIdx.x == 0) *sError_ = 1;
    __syncthreads();
  }

  const DevCollArgs &args_;
  const DevChannel &ch_;
  int *sPending_;
  int *sError_;
  FifoEnd *recv_[kMaxPrimPeers] = {};
  FifoEnd *send_[kMaxPrimPeers] = {};
  const int *peerMap_ = nullptr;
  int nrecv_ = 0, nsend_ = 0, srcPosition_ = 0;
};

}  // namespace chorus
