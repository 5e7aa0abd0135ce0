#include "sim/sim_resources.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "comm/context.h"

namespace chorus {
namespace sim {

namespace {

CommFootprint footprintOfRank(const Layout &l, int rank) {
  Context ctx;
  ctx.rank = rank;
  ctx.nranks = l.nranks();
  std::vector<uint64_t> hosts(size_t(ctx.nranks));
  std::vector<int64_t> places(size_t(ctx.nranks));
  for (int r = 0; r < ctx.nranks; ++r) {
    hosts[size_t(r)] = uint64_t(l.nodeOf(r)) + 1;
    places[size_t(r)] = r;
  }
  wireCommunicator(ctx, hosts, places);
  return commFootprint(ctx);
}

// The rank whose device proxy links the most streaming peers (none when
// every remote peer is linked, or on one node).
int busiestLinkedRank(const Layout &l) {
  const DeviceWiring wiring = wiringOf(l);
  if (l.nodes < 2 || wiring.everyPeer) return 0;
  Context ctx;
  ctx.rank = 0;
  ctx.nranks = l.nranks();
  std::vector<int> order(size_t(ctx.nranks)), nodeStart, nodeOf(size_t(ctx.nranks));
  for (int r = 0; r < ctx.nranks; ++r) order[size_t(r)] = r, nodeOf[size_t(r)] = l.nodeOf(r);
  for (int node = 0; node <= l.nodes; ++node) nodeStart.push_back(std::min(ctx.nranks, node * l.ranksPerNode));
  const NodeLayout layout{ctx.nranks, l.nodes, order.data(), order.data(), nodeStart.data(), nodeOf.data()};
  int busiest = 0;
  size_t most = 0;
  for (int r = 0; r < ctx.nranks; ++r) {
    const size_t peers = cudaStreamingPeers(layout, r, wiring.channels).size();
    if (peers > most) most = peers, busiest = r;
  }
  return busiest;
}

}  // namespace

CommFootprint footprintOf(const Layout &l) {
  const int n = l.nranks();
  CommFootprint most;
  size_t deviceLinks = 0;
  int linkedPeers = 0;
  for (int rank : {0, l.ranksPerNode - 1, n / 2, n - 1, busiestLinkedRank(l)}) {
    const CommFootprint f = footprintOfRank(l, std::min(std::max(rank, 0), n - 1));
    if (f.hostBytes(true) > most.hostBytes(true) ||
        (f.hostBytes(true) == most.hostBytes(true) && f.hostBytes(false) > most.hostBytes(false)))
      most = f;
    if (f.deviceLinkBytes > deviceLinks) deviceLinks = f.deviceLinkBytes, linkedPeers = f.deviceLinkedPeers;
  }
  // (The device links' columns are the busiest rank's of their own.)
  most.deviceLinkBytes = deviceLinks;
  most.deviceLinkedPeers = linkedPeers;
  return most;
}

SetupTime setupTimeOf(const Machine &m, const Layout &l, const CommFootprint &f, bool eager) {
  SetupTime t;
  const int n = l.nranks();
  if (n < 2) return t;
  const LinkModel &link = l.nodes > 1 ? m.net : m.intra;
  const double hopUs = link.latencyUs + 2 * link.perMessageUs;
  // A NIC's bandwidth shared by the ranks behind it (all send at once).
  const int ranksPerNic = l.nodes > 1 ? std::max(1, m.ranksPerNode / std::max(1, m.nicsPerNode)) : 1;
  const double bytesPerUs = link.gbPerS * 1e3 / double(ranksPerNic);
  const double rounds = std::ceil(std::log2(double(n)));
  auto allgatherUs = [&](double block) {
    const double everyoneElse = double(n - 1) * block / bytesPerUs;
    const double ring = double(n - 1) * hopUs + everyoneElse;
    const double bruck = rounds * hopUs + everyoneElse;
    return std::min(ring, bruck);
  };
  t.exchangeUs = allgatherUs(double(kBootstrapFields * sizeof(uint64_t))) + allgatherUs(double(f.peerInfoBytes));
  t.agreeUs = kSetupAgreements * rounds * hopUs;
  // A wire-up is a round trip per endpoint; UCX creates them one by one.
  if (eager) t.connectUs = double(f.remotePeers) * 2 * hopUs;
  return t;
}

}  // namespace sim
}  // namespace chorus
