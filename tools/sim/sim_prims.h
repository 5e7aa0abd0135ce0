// The simulator's primitives: every verb the algorithm templates speak
// (coll/prims_host.h has the same interface), recorded instead of run.  An
// algorithm template instantiated with SimPrims for one rank writes down
// that rank's schedule: for each primitive call, whom it receives from and
// sends to, and how many bytes each message carries.  No data moves and no
// buffer is touched (the buffers are addresses that are never read), so
// the schedule of 16,384 ranks costs what its distinct steps cost to list
// (a step repeated with the same peers and bytes is one entry, counted).
//
// The event model (sim_model.cc) then replays every rank's schedule at
// once: a step waits for its messages and for free slots at its receivers,
// as the FIFOs make the real primitives wait.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chorus {
namespace sim {

// One primitive call of one rank.
struct SimOp {
  enum Kind : uint8_t {
    Step,           // receive from every receive peer, fold or copy, send to every send peer
    Publish,        // write a slice to this rank's publish ring (read by every other rank)
    ReadPublished,  // read the next slice `peer` published
    ReadPeer,       // read `bytes` from `peer`'s memory (cross-memory attach)
  };
  Kind kind = Step;
  bool reduce = false;  // the step folds what it received with a local source
  uint16_t nrecv = 0, nsend = 0;
  uint32_t peerAt = 0;  // receive peers, then send peers, at RankSchedule::peers[peerAt...]
  int32_t peer = -1;    // ReadPublished, ReadPeer
  // The same step this many times in a row: a ring's rank repeats one step
  // (same peers, same slice) 2(n - 1) times, so a schedule of 16,384 ranks
  // is kept in what its distinct steps cost, not its half a billion calls.
  uint32_t repeat = 1;
  uint64_t bytes = 0;   // of each message, or of the local work
};

struct RankSchedule {
  std::vector<SimOp> ops;
  std::vector<int32_t> peers;
  uint64_t messages = 0, bytesSent = 0;
  // Primitive calls: the ops' repeats together (or those of the first
  // `entries` ops).
  uint64_t calls(size_t entries = SIZE_MAX) const {
    uint64_t n = 0;
    for (size_t i = 0; i < ops.size() && i < entries; ++i) n += ops[i].repeat;
    return n;
  }
};

// What the recorded rank's channel offers, as HostChannel says it for real.
struct SimChannel {
  bool publish = false;     // publish rings (one node)
  bool readPeers = false;   // cross-memory attach (one machine)
  const int *group = nullptr;  // while a hierarchical phase runs: group index -> rank
};

template <typename T>
class SimPrims {
 public:
  SimPrims(RankSchedule &out, const SimChannel &ch) : out_(out), ch_(ch) {}

  bool ok() const { return true; }

  void connect(const int *recvPeers, int nrecv, const int *sendPeers, int nsend, int = 0) {
    recv_.clear();
    send_.clear();
    for (int i = 0; i < nrecv; ++i) recv_.push_back(rankOf(recvPeers[i]));
    for (int i = 0; i < nsend; ++i) send_.push_back(rankOf(sendPeers[i]));
  }
  void connect1(int recvPeer, int sendPeer) {
    const int r[1] = {recvPeer}, s[1] = {sendPeer};
    connect(r, recvPeer < 0 ? 0 : 1, s, sendPeer < 0 ? 0 : 1);
  }

  void send(const T *, size_t n) { step(n, false, true, false); }
  void recv(T *, size_t n) { step(n, true, false, false); }
  void recvReduceSend(const T *, size_t n) { step(n, true, true, true); }
  void recvReduceCopy(const T *, T *, size_t n) { step(n, true, false, true); }
  void recvReduceCopySend(const T *, T *, size_t n) { step(n, true, true, true); }
  void recvCopySend(T *, size_t n) { step(n, true, true, false); }
  void copySend(const T *, T *, size_t n) { step(n, false, true, false); }
  void recvReduceLocal(const T *, T *, size_t n) { step(n, true, false, true); }
  void recvReduceLocalSend(const T *, T *, size_t n) { step(n, true, true, true); }
  void localCopy(const T *, T *, size_t n) { step(n, false, false, false); }

  bool canPublish() const { return ch_.publish; }
  void publish(const T *, T *, size_t n) { local(SimOp::Publish, -1, n); }
  void readPublished(int peer, T *, size_t n) { local(SimOp::ReadPublished, rankOf(peer), n); }
  // The schedule is replayed in program order: what arrives first is
  // taken first, which for the replay is the order the template asks in.
  bool arrived(int, size_t) const { return true; }
  bool canReadPeers() const { return ch_.readPeers; }
  void readPeer(int peer, const T *, T *, size_t n) { local(SimOp::ReadPeer, rankOf(peer), n); }

 private:
  int rankOf(int peer) const { return ch_.group && peer >= 0 ? ch_.group[peer] : peer; }

  void step(size_t n, bool doRecv, bool doSend, bool reduce) {
    SimOp op;
    op.kind = SimOp::Step;
    op.reduce = reduce && doRecv;
    op.bytes = uint64_t(n) * sizeof(T);
    op.nrecv = doRecv ? uint16_t(recv_.size()) : 0;
    op.nsend = doSend ? uint16_t(send_.size()) : 0;
    out_.messages += op.nsend;
    out_.bytesSent += op.bytes * op.nsend;
    if (repeatsLast(op, doRecv, doSend)) {
      ++out_.ops.back().repeat;
      return;
    }
    op.peerAt = uint32_t(out_.peers.size());
    if (doRecv) out_.peers.insert(out_.peers.end(), recv_.begin(), recv_.end());
    if (doSend) out_.peers.insert(out_.peers.end(), send_.begin(), send_.end());
    out_.ops.push_back(op);
  }
  // Whether `op` is the last recorded step again, peers included.
  bool repeatsLast(const SimOp &op, bool doRecv, bool doSend) const {
    if (out_.ops.empty()) return false;
    const SimOp &last = out_.ops.back();
    if (last.kind != SimOp::Step || last.reduce != op.reduce || last.bytes != op.bytes ||
        last.nrecv != op.nrecv || last.nsend != op.nsend || last.repeat == UINT32_MAX)
      return false;
    const int32_t *peers = out_.peers.data() + last.peerAt;
    if (doRecv)
      for (size_t i = 0; i < recv_.size(); ++i)
        if (peers[i] != recv_[i]) return false;
    if (doSend)
      for (size_t i = 0; i < send_.size(); ++i)
        if (peers[last.nrecv + i] != send_[i]) return false;
    return true;
  }
  void local(SimOp::Kind kind, int peer, size_t n) {
    SimOp op;
    op.kind = kind;
    op.peer = peer;
    op.bytes = uint64_t(n) * sizeof(T);
    out_.ops.push_back(op);
  }

  RankSchedule &out_;
  const SimChannel &ch_;
  std::vector<int32_t> recv_, send_;
};

}  // namespace sim
}  // namespace chorus
