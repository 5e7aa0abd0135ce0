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

}  // namespace

CommFootprint footprintOf(const Layout &l) {
  const int n = l.nranks();
  CommFootprint most;
  size_t deviceLinks = 0;
  int linkedPeers = 0;
  for (int rank : {0, l.ranksPerNode - 1, n / 2, n - 1, busiestLinkedRankOf(l)}) {
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
  const LinkModel &link = l.nodes > 1 ? m.fabric.net : m.intra;
  const double hopUs = link.latencyUs + 2 * link.perMessageUs;
  // A NIC's bandwidth shared by the ranks behind it (all send at once).
  const int ranksPerNic = l.nodes > 1 ? std::max(1, m.ranksPerNode / std::max(1, m.fabric.nicsPerNode)) : 1;
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
