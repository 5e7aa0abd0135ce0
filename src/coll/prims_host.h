// The primitives of the host executor: every verb the algorithms speak,
// over FIFOs in shared memory.  One generic step does it all: wait for the
// inputs (local source and/or messages from the receive peers) and for free
// slots at the send peers, fold the inputs with the reduction functor, write
// the result to the local destination and/or the send peers' slots, then
// post.  Algorithms never see a counter or a fence.
#pragma once

#include <cstring>

#include "coll/functors.h"
#include "coll/host_channel.h"

namespace chorus {

constexpr int kMaxPrimPeers = 16;

template <typename T, typename Func>
class HostPrims {
 public:
  explicit HostPrims(HostChannel &ch) : ch_(ch) {}

  // Elements that fit in one FIFO slot: the largest slice of one call.
  size_t maxElems() const { return ch_.slotBytes / sizeof(T); }
  bool ok() const { return ch_.error == Status::Ok; }
  int rank() const { return ch_.rank; }
  int nranks() const { return ch_.nranks; }

  // Choose the peers of the following calls.  `srcPosition` places the
  // local source in the fold: 0 folds it first, k after the k-th receive
  // peer (the direct algorithms fold in rank order so every rank computes
  // bitwise the same result).
  void connect(const int *recvPeers, int nrecv, const int *sendPeers, int nsend, int srcPosition = 0) {
    nrecv_ = nrecv;
    nsend_ = nsend;
    for (int i = 0; i < nrecv; ++i) recv_[i] = &ch_.recvFrom[recvPeers[i]];
    for (int i = 0; i < nsend; ++i) send_[i] = &ch_.sendTo[sendPeers[i]];
    srcPosition_ = srcPosition;
  }
  void connect1(int recvPeer, int sendPeer) {
    const int r[1] = {recvPeer}, s[1] = {sendPeer};
    connect(r, recvPeer < 0 ? 0 : 1, s, sendPeer < 0 ? 0 : 1);
  }

  void send(const T *src, size_t n) { step(src, nullptr, n, kSrc | kSend); }
  void recv(T *dst, size_t n) { step(nullptr, dst, n, kRecv | kDst); }
  void recvReduceSend(const T *src, size_t n) { step(src, nullptr, n, kRecv | kSrc | kSend); }
  void recvReduceCopy(const T *src, T *dst, size_t n) { step(src, dst, n, kRecv | kSrc | kDst | kFinal); }
  void recvReduceCopySend(const T *src, T *dst, size_t n) { step(src, dst, n, kRecv | kSrc | kDst | kSend | kFinal); }
  void recvCopySend(T *dst, size_t n) { step(nullptr, dst, n, kRecv | kDst | kSend); }
  // Send `src` and keep a copy in `dst` (a bcast root that is not in place).
  void copySend(const T *src, T *dst, size_t n) { step(src, dst, n, kSrc | kDst | kSend); }
  // Fold every receive peer's message with `src` into private scratch (no
  // send, no finalize); the direct algorithms then localCopy scratch out.
  void recvReduceLocal(const T *src, T *dst, size_t n) { step(src, dst, n, kRecv | kSrc | kDst); }

  // Purely local: dst = finalize(src) (e.g. a one-rank allreduce with AVG).
  void localCopy(const T *src, T *dst, size_t n) { step(src, dst, n, kSrc | kDst | kFinal); }

 private:
  enum : unsigned { kRecv = 1, kSend = 2, kSrc = 4, kDst = 8, kFinal = 16 };

  void step(const T *src, T *dst, size_t n, unsigned flags) {
    if (!ok()) return;
    const bool doRecv = (flags & kRecv) && nrecv_ > 0;
    const bool doSend = (flags & kSend) && nsend_ > 0;
    for (int i = 0; doRecv && i < nrecv_; ++i) {
      FifoEnd &e = *recv_[i];
      if (!wait(&e.header->tail, e.step + 1, e.peer, true)) return;
    }
    for (int i = 0; doSend && i < nsend_; ++i) {
      FifoEnd &e = *send_[i];
      const uint64_t need = e.step + 1 - e.nslots;
      if (static_cast<int64_t>(need) <= 0 || e.seen >= need) continue;
      if (!wait(&e.header->head, need, e.peer, false)) return;
      e.seen = loadAcquire(&e.header->head);
    }

    // Gather the inputs in fold order.
    const T *in[kMaxPrimPeers + 1];
    int nin = 0;
    for (int i = 0; doRecv && i < nrecv_; ++i) {
      if ((flags & kSrc) && i == srcPosition_) in[nin++] = src;
      in[nin++] = reinterpret_cast<const T *>(recv_[i]->slot(recv_[i]->step));
    }
    if ((flags & kSrc) && (!doRecv || srcPosition_ >= nrecv_)) in[nin++] = src;

    T *out[kMaxPrimPeers + 1];
    int nout = 0;
    if (flags & kDst) out[nout++] = dst;
    for (int i = 0; doSend && i < nsend_; ++i) out[nout++] = reinterpret_cast<T *>(send_[i]->slot(send_[i]->step));

    if (n > 0 && nout > 0 && nin > 0) {
      if (nin == 1) {
        if (out[0] != in[0]) memcpy(out[0], in[0], n * sizeof(T));
      } else {
        reduceInto<T, Func>(out[0], in[0], in[1], n);
        for (int i = 2; i < nin; ++i) reduceInto<T, Func>(out[0], out[0], in[i], n);
      }
      if (Func::kNeedsFinalize && (flags & kFinal))
        for (size_t k = 0; k < n; ++k) out[0][k] = Func::finalize(out[0][k], ch_.nranks);
      for (int i = 1; i < nout; ++i) memcpy(out[i], out[0], n * sizeof(T));
    }

    for (int i = 0; doRecv && i < nrecv_; ++i) {
      FifoEnd &e = *recv_[i];
      storeRelease(&e.header->head, ++e.step);
    }
    for (int i = 0; doSend && i < nsend_; ++i) {
      FifoEnd &e = *send_[i];
      e.header->bytes[e.step % e.nslots] = n * sizeof(T);
      storeRelease(&e.header->tail, ++e.step);
    }
  }

  bool wait(const FifoCounter *counter, uint64_t target, int peer, bool forData) {
    if (static_cast<int64_t>(target) <= 0 || loadAcquire(counter) >= target) return true;
    Status s = hostWaitCounter(ch_, counter, target, peer, forData);
    if (s != Status::Ok) ch_.error = s;
    return s == Status::Ok;
  }

  HostChannel &ch_;
  FifoEnd *recv_[kMaxPrimPeers] = {};
  FifoEnd *send_[kMaxPrimPeers] = {};
  int nrecv_ = 0, nsend_ = 0, srcPosition_ = 0;
};

}  // namespace chorus
