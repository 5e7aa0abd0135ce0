#include "comm/footprint.h"

#include <algorithm>
#include <vector>

#include "coll/algorithms.h"
#include "coll/alltoall_bruck.h"
#include "coll/bulk_links.h"
#include "comm/context.h"
#include "cuda/device_channel.h"
#include "cuda/device_links.h"
#include "transport/shm/shm.h"

namespace chorus {

namespace {

template <typename Vector>
constexpr size_t entryBytes(const Vector &) {
  return sizeof(typename Vector::value_type);
}

// Whether the FIFOs between this rank and `peer` carry bulk data either way:
// the links a ring, tree or hierarchical call makes on first use.
bool streamsWith(const Context &ctx, int peer) {
  return carriesBulk(ctx.bulkLinks, ctx.rank, peer) || carriesBulk(ctx.bulkLinks, peer, ctx.rank);
}

}  // namespace

CommFootprint commFootprint(const Context &ctx) {
  CommFootprint f;
  const size_t n = size_t(ctx.nranks);
  f.nranks = ctx.nranks;
  // The by-rank tables as bootstrap, the transports' connect and watchPeers
  // size them (each to nranks); the hierarchy's and the rings' only where
  // the wiring made them.
  size_t perRank = entryBytes(ctx.nodeOf) + entryBytes(ctx.peers) + entryBytes(ctx.sendTo) +
                   entryBytes(ctx.recvFrom) + entryBytes(ctx.peerStatus) + entryBytes(ctx.watchedPids);
  if (shmHasPublishRing(ctx)) perRank += entryBytes(ctx.publish);
  if (ctx.transport) perRank += ctx.transport->bytesPerPeer;
  if (ctx.netTransport) perRank += ctx.netTransport->bytesPerPeer;
  f.tableBytes = perRank * n +
                 entryBytes(ctx.ringOrder) * (ctx.ringOrder.size() + ctx.ringWhere.size() + ctx.nodeStart.size()) +
                 entryBytes(ctx.localPrev) * (ctx.localPrev.size() + ctx.crossPrev.size() + ctx.localRanks.size() +
                                              ctx.crossRanks.size()) +
                 ctx.fullFifo.slotBytes;  // the direct algorithms' scratch
  f.shmSegmentBytes = shmSegmentBytesOf(ctx, ctx.rank);
  for (int p = 0; p < ctx.nranks; ++p) {
    if (ctx.nodeOf[size_t(p)] == ctx.nodeOf[size_t(ctx.rank)]) continue;
    ++f.remotePeers;
    const size_t bytes = netLinkBytes(ctx, p);
    f.allNetBytes += bytes;
    if (streamsWith(ctx, p)) {
      ++f.bulkNetPeers;
      f.bulkNetBytes += bytes;
    }
  }
  f.alltoallNetPeers = f.bulkNetPeers;
  f.alltoallNetBytes = f.bulkNetBytes;
  if (allPeerLinksFit(ctx.planShape)) {
    f.alltoallNetPeers = f.remotePeers;
    f.alltoallNetBytes = f.allNetBytes;
  } else {
    std::vector<int> bruckPeers;
    for (int k = 1; k < ctx.nranks; k *= 2)
      for (int p : {bruckSendPeer(ctx.rank, k, ctx.nranks), bruckRecvPeer(ctx.rank, k, ctx.nranks)})
        if (ctx.nodeOf[size_t(p)] != ctx.nodeOf[size_t(ctx.rank)] && !streamsWith(ctx, p) &&
            std::find(bruckPeers.begin(), bruckPeers.end(), p) == bruckPeers.end()) {
          bruckPeers.push_back(p);
          ++f.alltoallNetPeers;
          f.alltoallNetBytes += netLinkBytes(ctx, p);
        }
  }
  f.deviceChannels = ctx.deviceWiring.channels;
  f.deviceFifoBytes = cudaFifoRegionBytes(ctx.nodeSize, f.deviceChannels);
  f.deviceEndsBytes = cudaEndsBytes(ctx.nranks) * size_t(f.deviceChannels);
  // The proxy's links (cuda/device_links.h): every remote peer, or the
  // streaming algorithms' few, on each channel.
  if (ctx.nnodes > 1) {
    f.deviceLinkedPeers = ctx.deviceWiring.everyPeer
                              ? f.remotePeers
                              : int(cudaStreamingPeers(ctx.nodeLayout, ctx.rank, f.deviceChannels).size());
    f.deviceLinkBytes = size_t(f.deviceLinkedPeers) * size_t(f.deviceChannels) * kCudaNetLinkBytes;
  }
  f.peerInfoBytes = entryBytes(ctx.peers);
  return f;
}

}  // namespace chorus
