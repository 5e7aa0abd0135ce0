// chorus_sim's resources at scale (issue 31, item 4): what a communicator
// costs a rank in memory, from the library's own wiring and sizing code
// (comm/footprint.h), and the set-up's time on the model's links.
#pragma once

#include "comm/footprint.h"
#include "sim/sim_model.h"

namespace chorus {
namespace sim {

// The footprint of the most expensive of a sample of ranks (the first and
// last of the first node, a middle one, the last): the trees give ranks
// different link counts.  Wired by wireCommunicator with node i holding
// ranks i*M..i*M+M-1.
CommFootprint footprintOf(const Layout &l);

// The set-up's time on the model, in microseconds: the two allgathers of
// the bootstrap (as MPI runs them: Bruck's log rounds or a ring in node
// order, the cheaper), its small agreements (each a recursive doubling),
// and the UCX endpoints it creates (CHORUS_NET_CONNECT=eager: every remote
// peer, each a wire-up round trip; lazy: none, the first collectives pay
// for their links).
struct SetupTime {
  double exchangeUs = 0, agreeUs = 0, connectUs = 0;
  double totalUs() const { return exchangeUs + agreeUs + connectUs; }
};
SetupTime setupTimeOf(const Machine &m, const Layout &l, const CommFootprint &f, bool eager);

// The set-up's small collectives besides the two allgathers: three status
// agreements, the communicator id, the trace job id and the ucx
// transport's post-connect barrier (comm/context.cc, transport/ucx/ucx.cc).
constexpr int kSetupAgreements = 6;

}  // namespace sim
}  // namespace chorus
