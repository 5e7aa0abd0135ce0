// ucx transport: FIFOs to ranks on other nodes (see ucx.cc).
#pragma once

#include <cstdint>

#include "transport/net.h"
#include "transport/transport.h"

namespace chorus {

extern const TransportOps kUcxTransport;
// The hooks the host primitives call for its FIFOs.
const NetOps &ucxNetOps();

// What a communicator's ucx transport has seen, for tests and the teardown
// warning: messages dropped for a wrong token (those with no token of the
// process's communicators count for every communicator alive when they
// came: the worker they arrive on is shared), the faults injected, and how
// many full slots went by put.
struct UcxCounters {
  uint64_t forgedDropped = 0;
  uint64_t workerUsers = 0;  // communicator contexts sharing the process's UCX worker now
  uint64_t reordered = 0, duplicated = 0, corrupted = 0, forgedSent = 0;
  uint64_t puts = 0;  // full slots sent by put (CHORUS_NET_PROTO)
  // Connect on first use (CHORUS_NET_CONNECT): the peers on other nodes
  // linked so far (FIFO copies made) and the bytes of those copies.
  uint64_t linkedPeers = 0, linkedBytes = 0;
  // The bytes its by-rank tables hold, measured from them (kUcxBytesPerPeer
  // counts them for the footprint).
  uint64_t tableBytes = 0;
};
UcxCounters ucxCounters(const PeerLinks &links);

// Test-only faults on the messages this rank sends (CHORUS_TEST_NET_FAULTS,
// a comma-separated list of the names below, or ucxSetTestFaults):
//   reorder         a data message to a peer is held back and sent after the next one
//   duplicate       one data message (the next but two) is sent twice
//   corrupt-header  one data message's header claims 4096 inline lines
//   out-of-window   one data message's number is 1000 past its FIFO's window
//   forge           every third data message is preceded by a copy without the token
enum : unsigned {
  kNetFaultReorder = 1u << 0,
  kNetFaultDuplicate = 1u << 1,
  kNetFaultCorruptHeader = 1u << 2,
  kNetFaultOutOfWindow = 1u << 3,
  kNetFaultForge = 1u << 4,
};
void ucxSetTestFaults(PeerLinks &links, unsigned faults);

}  // namespace chorus
