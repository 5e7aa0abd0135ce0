// The device primitives: the verbs of HostPrims (prims_host.h), with the same
// names and semantics, so the shared algorithm templates (src/coll/*.h) run
// unchanged in a kernel.  One block runs one channel; every thread of the
// block calls every primitive (the algorithms' control flow is uniform).
//
// Each call is one step:
//   1. thread 0 waits: Simple waits for the receive peers' tail counters and
//      the send peers' credits (head); LL waits for credits only.
//   2. barrier; all threads move the data: fold the inputs in the same order
//      as the host (bitwise-identical results) and store to every output.
//      Simple uses 16-byte vector loads/stores when every pointer allows.
//      LL packs 4 data bytes with a 4-byte flag (the message number) in each
//      8-byte store; receivers poll the flags per line.
//   3. barrier; thread 0 posts: head to the receive peers (credits back),
//      tail to the send peers (after __threadfence_system for Simple).
// Every wait is bounded by timeoutCycles of clock64(); on expiry the block
// records the peer and message in the host-mapped DevError, raises its abort
// flag (which stops every other block too) and the primitives become no-ops.
#pragma once

#include <cuda_runtime.h>

#include "coll/functors.h"
#include "coll/prims_host.h"  // kMaxPrimPeers
#include "cuda/device_channel.h"
#include "cuda/reduce_copy.cuh"

namespace chorus {

namespace devprims {

__device__ __forceinline__ uint64_t loadVolatile64(const uint64_t *p) {
  return *reinterpret_cast<const volatile uint64_t *>(p);
}
__device__ __forceinline__ void storeVolatile64(uint64_t *p, uint64_t v) {
  *reinterpret_cast<volatile uint64_t *>(p) = v;
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
    for (int i = 0; i < nrecv; ++i) recv_[i] = &ch_.recvFrom[recvPeers[i]];
    for (int i = 0; i < nsend; ++i) send_[i] = &ch_.sendTo[sendPeers[i]];
    srcPosition_ = srcPosition;
  }
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
    // winner then fills the host-mapped record with plain stores.
    if (atomicCAS(args_.abortFlag, 0, 1) == 0) {
      volatile DevError *err = args_.error;
      err->status = int32_t(s);
      err->channel = int32_t(blockIdx.x);
      err->peer = peer;
      err->forData = forData ? 1 : 0;
      err->target = target;
      __threadfence_system();
      err->aborted = 1;
      __threadfence_system();
    }
  }

  __device__ bool aborted() const { return *reinterpret_cast<volatile int *>(args_.abortFlag) != 0; }

  // Spin until *counter >= target.  false (and a recorded failure) on
  // timeout or when another block already failed.
  __device__ bool waitCounter(const FifoCounter *counter, uint64_t target, int peer, bool forData) {
    if (static_cast<int64_t>(target) <= 0) return true;
    const volatile uint64_t *v = &counter->value;
    const long long start = clock64();
    for (unsigned spins = 0;; ++spins) {
      if (*v >= target) return true;
      if ((spins & 1023) == 1023) {
        if (aborted()) return false;
        if (args_.timeoutCycles && uint64_t(clock64() - start) > args_.timeoutCycles) {
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
      w.elem[k] = devprims::loadElem(reinterpret_cast<const T *>(c) + k);
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
    for (int k = 0; k < kPer && u * 8 + k * sizeof(T) < nbytes; ++k) reinterpret_cast<T *>(c)[k] = w.elem[k];
  }

  // Wait for LL unit `u` (two 8-byte lines) of a receive slot to carry `flag`.
  __device__ bool readLLUnit(const uint64_t *lines, size_t u, uint32_t flag, int peer, uint64_t target,
                             uint64_t *raw) {
    uint32_t half[2];
    const long long start = clock64();
    for (int h = 0; h < 2; ++h) {
      for (unsigned spins = 0;; ++spins) {
        const uint64_t line = devprims::loadVolatile64(lines + 2 * u + h);
        if (uint32_t(line >> 32) == flag) {
          half[h] = uint32_t(line);
          break;
        }
        if ((spins & 1023) == 1023) {
          if (*reinterpret_cast<volatile int *>(sPending_)) return false;
          if (aborted()) {
            *sPending_ = 1;
            return false;
          }
          if (args_.timeoutCycles && uint64_t(clock64() - start) > args_.timeoutCycles) {
            recordFailure(Status::Timeout, peer, target, true);
            *sPending_ = 1;
            return false;
          }
        }
      }
    }
    *raw = uint64_t(half[0]) | (uint64_t(half[1]) << 32);
    return true;
  }

  __device__ void moveLL(const T *src, T *dst, size_t n, unsigned flags, bool doRecv, bool doSend) {
    Func func;
    const size_t nbytes = n * sizeof(T);
    const size_t nunits = nbytes == 0 ? 1 : (nbytes + 7) / 8;  // one unit carries even an empty message
    constexpr int kPer = 8 / sizeof(T);
    const bool doFinal = Func::kNeedsFinalize && (flags & kFinal);
    for (size_t u = threadIdx.x; u < nunits; u += blockDim.x) {
      devprims::Vec8<T> acc, x;
      bool have = false;
      const int nrecv = doRecv ? nrecv_ : 0;
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
        const FifoEnd &e = *recv_[i];
        const uint64_t *lines = reinterpret_cast<const uint64_t *>(e.slot(e.step));
        if (!readLLUnit(lines, u, uint32_t(e.step + 1), e.peer, e.step + 1, &x.raw)) return;
        if (!have) acc = x;
        else
          for (int k = 0; k < kPer; ++k) acc.elem[k] = func(acc.elem[k], x.elem[k]);
        have = true;
      }
      if (doFinal)
        for (int k = 0; k < kPer; ++k) acc.elem[k] = Func::finalize(acc.elem[k], args_.nranks);
      if ((flags & kDst) && nbytes > 0) storeUnit(dst, u, nbytes, acc.raw);
      for (int i = 0; doSend && i < nsend_; ++i) {
        const FifoEnd &e = *send_[i];
        uint64_t *lines = reinterpret_cast<uint64_t *>(e.slot(e.step));
        const uint64_t flag = uint64_t(uint32_t(e.step + 1)) << 32;
        devprims::storeVolatile64(lines + 2 * u, flag | uint32_t(acc.raw));
        devprims::storeVolatile64(lines + 2 * u + 1, flag | uint32_t(acc.raw >> 32));
      }
    }
  }

  // --- one step --------------------------------------------------------------

  __device__ __noinline__ void step(const T *src, T *dst, size_t n, unsigned flags) {
    if (!ok()) return;
    const bool doRecv = (flags & kRecv) && nrecv_ > 0;
    const bool doSend = (flags & kSend) && nsend_ > 0;
    const bool ll = kProto == int(Proto::LL) && (doRecv || doSend);

    if (threadIdx.x == 0) {
      bool good = true;
      for (int i = 0; good && doRecv && !ll && i < nrecv_; ++i) {
        const FifoEnd &e = *recv_[i];
        good = waitCounter(&e.header->tail, e.step + 1, e.peer, true);
      }
      for (int i = 0; good && doSend && i < nsend_; ++i) {
        const FifoEnd &e = *send_[i];
        good = waitCounter(&e.header->head, e.step + 1 - e.nslots, e.peer, false);
      }
      __threadfence();  // acquire: slot contents after the counters
      *sPending_ = good ? 0 : 1;
    }
    __syncthreads();
    if (*reinterpret_cast<volatile int *>(sPending_)) return fail();

    if constexpr (sizeof(T) > 8) {
      // No LL kernel is built for elements wider than an LL line's 8 data
      // bytes (kernel_table.h), so `ll` is false here.
    } else if (ll) {
      moveLL(src, dst, n, flags, doRecv, doSend);
      __syncthreads();
      if (*reinterpret_cast<volatile int *>(sPending_)) return fail();
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
      if (doSend) __threadfence_system();  // release: every thread's slot writes before the tail
      __syncthreads();
    }

    if (threadIdx.x == 0) {
      for (int i = 0; doRecv && i < nrecv_; ++i) {
        FifoEnd &e = *recv_[i];
        ++e.step;
        *reinterpret_cast<volatile uint64_t *>(&e.header->head.value) = e.step;
      }
      for (int i = 0; doSend && i < nsend_; ++i) {
        FifoEnd &e = *send_[i];
        ++e.step;
        if (!ll) __threadfence_system();
        *reinterpret_cast<volatile uint64_t *>(&e.header->tail.value) = e.step;
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
  int nrecv_ = 0, nsend_ = 0, srcPosition_ = 0;
};

}  // namespace chorus
