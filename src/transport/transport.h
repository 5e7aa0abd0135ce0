// A transport connects this rank to its peers: a small table of operations.
// Each peer is linked by the first transport whose canConnect accepts it:
// shm inside a node, ucx between nodes (cuda_ipc links device FIFOs).
#pragma once

#include <mpi.h>

#include <vector>

#include "core/common.h"
#include "transport/fifo.h"

namespace chorus {

struct PeerLinks;
struct TransportOps;

// The memory of a network transport's FIFO copies (PeerLinks::netMemory).
// Default: aligned_alloc and free.  The device proxy's links
// (transport/ucx/ucx_proxy.h) take pinned host memory the GPU maps, so that
// kernels write and read them (`alloc`: kFifoAlign-aligned; the transport
// zeroes it).  Under GPUDirect RDMA (CHORUS_NET_GDR) the slots of a link's
// two copies take an allocation of their own (`slotAlloc`): device memory
// that UCX registers as `slotsMemoryType` (a ucs_memory_type_t) and the
// NIC reads and writes, headers and inline slots staying in `alloc`'s.
// Full slots then travel only by put (no CPU copies into them), and
// `slotsFlush`, when set, runs after a put has landed and before the
// receive tail rises (GPUDirect writes the GPU may not see yet).
struct NetCopyMemory {
  void *(*alloc)(size_t bytes) = nullptr;
  void (*release)(void *memory) = nullptr;
  void *(*slotAlloc)(size_t bytes) = nullptr;
  void (*slotFree)(void *memory) = nullptr;
  int slotsMemoryType = 0;
  void (*slotsFlush)() = nullptr;
  // Set by the owner where a failure the transport cannot see (the device
  // proxy's) means a peer may still put into the copies: the transport
  // keeps them for the process's life, as after a failure of its own.
  bool keepOnFree = false;
};

// What each rank publishes in the bootstrap allgather: one POD per rank.
constexpr int kShmNameMax = 64;
constexpr int kIpcHandleBytes = 64;   // sizeof(cudaIpcMemHandle_t), checked in cuda_ipc.cc
constexpr int kBusIdMax = 16;
constexpr int kNetAddressMax = 512;  // a UCX worker's network address (ucx)
struct PeerInfo {
  uint64_t hostHash;   // identifies the node (CHORUS_HOSTID, or host name and boot id)
  int32_t pid;
  int32_t nodeRank;    // rank within the node communicator
  uint64_t cmaProbe;   // address of this process's cmaProbeWord (transport/shm/cma.h)
  char shmName[kShmNameMax];  // this rank's inbound FIFO segment (shm)
  // cuda_ipc: filled only when device buffers are first used on the
  // communicator (a second allgather then refreshes the table).
  int32_t cudaDevice;  // valid when hasIpc
  int32_t hasIpc;      // 1 once ipcHandle is valid
  char busId[kBusIdMax];                  // PCI bus id of the GPU, for logs
  unsigned char ipcHandle[kIpcHandleBytes];  // this rank's inbound device FIFOs
  // ucx: this rank's worker address, when some peer is on another node,
  // and its share of the communicator's token (ucx_wire.h, NetHeader).
  uint64_t netNonce;
  int32_t netAddrLen;
  char netAddr[kNetAddressMax];
};

// Each rank's progress through its collectives, at the start of its shm
// segment.  The owner writes it on every call (its own cache line, which
// nobody reads while things go well); a peer on its node reads it only
// after a collective failed, to name who never entered the call.
struct alignas(kFifoAlign) RankStatus {
  uint64_t seq;    // the last collective entered (TraceEntry::seq)
  uint64_t state;  // a TraceState
};
constexpr size_t kRankStatusBytes = sizeof(RankStatus);

// What a communicator's transports work on: who the ranks are, where they
// are, and the FIFO ends that link this rank to every peer.  The wiring
// (comm/context.cc, which extends it into the communicator's Context)
// fills the identity and layout and decides which links are full; each
// transport creates its memory, maps the peers' and fills the ends.
struct PeerLinks {
  MPI_Comm comm = MPI_COMM_NULL;  // the user's communicator (not owned)
  // Set up on every rank of the communicator (not set while a failed set-up
  // is undone): only then may its release talk to the other ranks.
  bool established = false;
  int rank = 0, nranks = 1;
  // Node membership, decided by Chorus from the host identities exchanged
  // at bootstrap (CHORUS_HOSTID overrides), not by MPI.
  int nodeRank = 0, nodeSize = 1;
  int nnodes = 1;
  std::vector<int> nodeOf;                // node index (0..nnodes-1, in order of first rank) by rank
  std::vector<PeerInfo> peers;
  std::vector<FifoEnd> sendTo, recvFrom;  // indexed by peer rank
  std::vector<FifoEnd> publish;           // publish rings, indexed by owner rank (empty: none)
  const TransportOps *transport = nullptr;  // shm: the peers on this node
  void *transportState = nullptr;         // owned by `transport`
  const TransportOps *netTransport = nullptr;  // ucx: the peers on other nodes (none on one node)
  void *netState = nullptr;               // owned by `netTransport`
  FifoShape fullFifo{}, smallFifo{};      // the two FIFO sizes (fifo.h); fifoShape() says which link has which
  // Whether the FIFO from `sender` into `receiver` (any two ranks) is full:
  // the wiring knows which links the algorithms stream on (coll/bulk_links.h).
  bool (*fullLink)(const PeerLinks &links, int receiver, int sender) = nullptr;
  bool checksum = false;                  // CHORUS_CHECKSUM on any rank: every host FIFO has its checksum area
  NetCopyMemory netMemory{};  // where a network transport's FIFO copies live
  size_t shmSegmentBytes = 0;             // this rank's shm segment (0: no peer on its node), for tests and logs
  // This rank's progress, in its shm segment where its node has peers
  // (else ownStatus), and every peer's on this node (null elsewhere).
  RankStatus ownStatus{};
  RankStatus *status = &ownStatus;
  std::vector<const RankStatus *> peerStatus;
  // Pids of the peers on this machine whose death a waiting rank can see
  // (kill(pid, 0)); 0 for the others.
  std::vector<int32_t> watchedPids;
  // The release's one barrier on the communicator (comm/context.cc): every
  // rank first finishes what only it can (its last kernel, its mappings of
  // the peers' memory), then memory a peer may still write into and
  // connections a peer may still read from go only once every rank has
  // passed that point.
  MPI_Request closing = MPI_REQUEST_NULL;
  bool closingStarted = false;
  // The barriers a rank may stop waiting for (the release's, and the UCX
  // set-up's) run on this private duplicate of comm, never on the user's,
  // which MPI must not be progressing one on once the user frees it
  // (core/abandoned_barriers.h).  The context's; the device proxy's
  // channels share it.  Null where no such barrier is needed.
  MPI_Comm barrierComm = MPI_COMM_NULL;
};

// The slots of the FIFO from `sender` into `receiver`; any rank computes
// any FIFO's shape alike, so both ends agree without an exchange.
inline FifoShape fifoShape(const PeerLinks &links, int receiver, int sender) {
  return links.fullLink(links, receiver, sender) ? links.fullFifo : links.smallFifo;
}
// Bytes of a host FIFO of that shape (the checksum area included when on),
// and its end, checksums attached.
inline size_t hostFifoBytes(const PeerLinks &links, FifoShape shape) {
  return fifoFootprint(shape) + (links.checksum ? kFifoChecksumBytes : 0);
}
// The bytes of a link's two FIFO copies when a network transport carries
// it (ucx makes them on the link's first use, in one allocation): our send
// copy, then our receive copy, each in the link's shape.
inline size_t netLinkBytes(const PeerLinks &links, int peer, size_t *sendCopyBytes = nullptr) {
  const size_t out = hostFifoBytes(links, fifoShape(links, peer, links.rank));
  if (sendCopyBytes) *sendCopyBytes = out;
  return out + hostFifoBytes(links, fifoShape(links, links.rank, peer));
}
inline FifoEnd makeHostFifoEnd(const PeerLinks &links, char *base, FifoShape shape, int peer) {
  FifoEnd e = makeFifoEnd(base, shape.slotBytes, shape.nslots, peer);
  if (links.checksum) e.sums = reinterpret_cast<uint64_t *>(base + fifoFootprint(shape));
  return e;
}

struct TransportOps {
  const char *name;
  // Whether this transport can link `self` and `peer`.
  bool (*canConnect)(const PeerInfo &self, const PeerInfo &peer);
  // Create this rank's local resources and describe them in `self`.
  Status (*setup)(PeerLinks &links, PeerInfo &self);
  // Map the peers' resources (all ranks' PeerInfo known) and fill
  // links.sendTo / links.recvFrom for every peer it can connect.
  Status (*connect)(PeerLinks &links, const PeerInfo *all);
  // Called after every rank has connected (a barrier separates the two),
  // e.g. to unlink names so nothing leaks if a process dies.
  Status (*postConnect)(PeerLinks &links);
  // Optional, before the release's barrier (PeerLinks::closing): whether
  // that barrier can complete at all.  false when a peer this transport
  // reaches has failed (its connection did): then no rank waits for it.
  bool (*beginFree)(PeerLinks &links);
  Status (*free)(PeerLinks &links);
  // The bytes its state keeps for each rank of the communicator (its by-rank
  // tables, sized at set-up), for the footprint (comm/footprint.h).
  size_t bytesPerPeer;
};

extern const TransportOps kShmTransport;

}  // namespace chorus
