// chorus_sim's model (tools/sim): that its schedules are the algorithm
// templates' own (a template changed, the recorded messages change), that
// every candidate's schedules replay to the end on every layout (a
// schedule that waits forever is two templates that disagree), and that the
// event model gives a lone message the time its link model says; and that
// the resources it predicts follow the library's wiring: the streaming
// links across nodes stay few however many nodes, every remote peer
// counts once an alltoall links them, the tables grow by rank.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <vector>

#include "coll/allreduce_ring.h"
#include "cuda/device_channel.h"
#include "cuda/device_links.h"
#include "sim/sim_model.h"
#include "sim/sim_resources.h"
#include "transport/fifo.h"

using namespace chorus;
using namespace chorus::sim;

namespace {

Machine twoLevelMachine(int ranksPerNode) {
  Machine m;
  m.name = "test";
  m.ranksPerNode = ranksPerNode;
  m.intra = {1.0, 10, 0.25};
  m.fabric.net = {5.0, 2, 1.0};
  m.fabric.nicsPerNode = 1;
  m.sliceBytes = m.allPeerSliceBytes = 64 << 10;
  return m;
}

Layout oneNodeOf(int ranks) {
  Layout l;
  l.nodes = 1;
  l.ranksPerNode = ranks;
  return l;
}

CollArgs argsFor(int rank, int nranks, size_t count, size_t sliceElems) {
  CollArgs a;
  a.sendbuf = reinterpret_cast<const void *>(uintptr_t(1) << 40);
  a.recvbuf = reinterpret_cast<void *>(uintptr_t(2) << 40);
  a.count = count;
  a.root = 0;
  a.rank = rank;
  a.nranks = nranks;
  a.sliceElems = sliceElems;
  return a;
}

// The library's ring with one more message at the end: what a change to
// the template would look like.
template <typename T, typename Prims>
void allreduceRingChanged(const CollArgs &a, Prims &prims) {
  allreduceRing<T>(a, prims);
  const Ring ring = ringOf(a);
  prims.connect1(ring.prev(), ring.next());
  prims.send(static_cast<const T *>(a.sendbuf), 1);
  prims.recv(static_cast<T *>(a.recvbuf), 1);
}

bool sameSchedule(const RankSchedule &x, const RankSchedule &y) {
  if (x.ops.size() != y.ops.size() || x.peers != y.peers) return false;
  for (size_t i = 0; i < x.ops.size(); ++i)
    if (x.ops[i].kind != y.ops[i].kind || x.ops[i].nrecv != y.ops[i].nrecv || x.ops[i].nsend != y.ops[i].nsend ||
        x.ops[i].bytes != y.ops[i].bytes || x.ops[i].reduce != y.ops[i].reduce || x.ops[i].repeat != y.ops[i].repeat)
      return false;
  return true;
}

// The same schedules with every repeated step written out once per call,
// as they were recorded before steps were merged.
Schedules writtenOut(const Schedules &merged) {
  Schedules out = merged;
  for (RankSchedule &r : out.ranks) {
    std::vector<SimOp> ops;
    for (const SimOp &op : r.ops) {
      SimOp one = op;
      one.repeat = 1;
      ops.insert(ops.end(), op.repeat, one);
    }
    r.ops = ops;
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sim)

BOOST_AUTO_TEST_CASE(schedules_are_the_templates) {
  const Machine m = twoLevelMachine(4);
  Layout l;
  l.ranksPerNode = 4;
  const size_t count = size_t(3) << 16;  // 1.5 MiB of doubles: several slices per block
  const Schedules recorded = recordCollective(m, l, Coll::Allreduce, Algo::Ring, count * 8, 8);
  const size_t sliceElems = m.sliceBytes / 8;
  for (int r = 0; r < 4; ++r) {
    RankSchedule direct, changed;
    const SimChannel ch;
    SimPrims<double> prims(direct, ch), changedPrims(changed, ch);
    allreduceRing<double>(argsFor(r, 4, count, sliceElems), prims);
    allreduceRingChanged<double>(argsFor(r, 4, count, sliceElems), changedPrims);
    BOOST_TEST(sameSchedule(recorded.ranks[size_t(r)], direct), "rank " << r << ": the simulator's ring is not allreduceRing");
    BOOST_TEST(!sameSchedule(recorded.ranks[size_t(r)], changed), "rank " << r << ": a changed template went unseen");
    // 2(n-1) messages per slice of a block (a block of 48 Ki doubles in
    // slices of 8 Ki: 6 passes of 6 sends each), and each rank sends 2(n-1)
    // blocks' bytes.
    BOOST_TEST(direct.messages == 6u * ((count / 4 + sliceElems - 1) / sliceElems));
    BOOST_TEST(direct.bytesSent == 2u * 3u * (count / 4) * 8u);
  }
}

// A step repeated in a row (same peers, same bytes) is recorded once with
// its count: replayed, it times exactly as the calls written out one by
// one, on a layout across nodes with the ring, the tree and the hierarchy.
BOOST_AUTO_TEST_CASE(repeated_steps_replay_as_written_out) {
  const Machine m = twoLevelMachine(2);
  Layout l;
  l.nodes = 4;
  l.ranksPerNode = 2;
  for (Algo algo : {Algo::Ring, Algo::Tree, Algo::Hierarchical}) {
    const Schedules merged = recordCollective(m, l, Coll::Allreduce, algo, size_t(1) << 20, 8);
    const Schedules out = writtenOut(merged);
    BOOST_TEST(merged.calls() == out.calls());
    // (A ring slice: its send, 7 folds, 6 copies, its receive: 4 entries for 15 calls.)
    if (algo == Algo::Ring) BOOST_TEST(merged.ops() * 3 < out.ops(), "the ring's steps were not merged");
    const SimResult a = simulate(m, l, merged), b = simulate(m, l, out);
    BOOST_REQUIRE(a.ok);
    BOOST_REQUIRE(b.ok);
    BOOST_TEST(a.timeUs == b.timeUs, algoName(algo) << ": " << a.timeUs << " merged, " << b.timeUs << " written out");
    BOOST_TEST(a.messages == b.messages);
    BOOST_TEST(a.netBytes == b.netBytes);
  }
}

// So a ring's rank records a handful of steps however many ranks: the
// schedules of a ring over 16,384 ranks fit the model, which had refused
// them at about 1,000.
BOOST_AUTO_TEST_CASE(a_ring_records_few_steps_a_rank) {
  const Machine m = twoLevelMachine(8);
  Layout l;
  l.nodes = 128;
  l.ranksPerNode = 8;
  const Schedules s = recordCollective(m, l, Coll::Allreduce, Algo::Ring, size_t(64) << 20, 8);
  BOOST_TEST(s.recordedRanks == 0);
  BOOST_TEST(s.calls() >= uint64_t(l.nranks()) * 2 * uint64_t(l.nranks() - 1));
  BOOST_TEST(s.ops() <= uint64_t(l.nranks()) * 8, s.ops() << " steps recorded for " << l.nranks() << " ranks");
}

BOOST_AUTO_TEST_CASE(a_lone_message_takes_its_link_time) {
  Machine m = twoLevelMachine(1);
  Layout l;
  l.nodes = 2;
  l.ranksPerNode = 1;
  const size_t bytes = 32 << 10;  // one slice
  const SimResult r = simulate(m, l, recordCollective(m, l, Coll::Bcast, Algo::Chain, bytes, 1));
  BOOST_REQUIRE(r.ok);
  // The root's copy of the slice into its send slot and its post, the
  // wire, the receiver's own step and its copy of the slice out of its FIFO.
  const LinkModel &net = m.fabric.net;
  const double copyUs = double(bytes) / (m.copyGbPerS * 1e3);
  const double expected =
      copyUs + net.perMessageUs + double(bytes) / (net.gbPerS * 1e3) + net.latencyUs + net.perMessageUs + copyUs;
  BOOST_TEST(r.timeUs == expected, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(r.netMessages == 1u);
  BOOST_TEST(r.netBytes == bytes);
}

// Played nodes share one machine's cores: the same lone message on 2
// nodes of 2 ranks (4 ranks on 2 cores) stretches its work by 2 and waits
// crowdedUs once for the crowded receiver; the planner sees the crowding.
BOOST_AUTO_TEST_CASE(ranks_sharing_cores_wait) {
  Machine m = twoLevelMachine(1);
  m.fabric.machineCores = 2;
  m.fabric.crowdedUs = 15;
  Layout l;
  l.nodes = 2;
  l.ranksPerNode = 1;
  const size_t bytes = 32 << 10;
  const SimResult alone = simulate(m, l, recordCollective(m, l, Coll::Bcast, Algo::Chain, bytes, 1));
  BOOST_REQUIRE(alone.ok);
  BOOST_TEST(planShapeOf(m, l).cpuShare == 1.0);
  l.nodes = 4;  // the root's message to rank 1 is the first of a chain of 3
  const SimResult crowded = simulate(m, l, recordCollective(m, l, Coll::Bcast, Algo::Chain, bytes, 1));
  BOOST_REQUIRE(crowded.ok);
  BOOST_TEST(planShapeOf(m, l).cpuShare == 2.0);
  const double copyUs = double(bytes) / (m.copyGbPerS * 1e3);
  const double work = 2 * m.fabric.net.perMessageUs + copyUs;
  const double hop = double(bytes) / (m.fabric.net.gbPerS * 1e3) + m.fabric.net.latencyUs;
  // Each of the 3 hops: its ends' work twice over, the wire, the wait.
  BOOST_TEST(crowded.timeUs >= 3 * (2 * work + hop + m.fabric.crowdedUs) - 1e-9);
  // (And the root's copy into its send slot.)
  BOOST_TEST(alone.timeUs == copyUs + work + hop, boost::test_tools::tolerance(1e-9));
}

// A CPU rank's pure send is its core's copies, one into each send slot
// (prims_host.h), not the links': in a one-shot allgather on one node each
// rank copies its vector into both peers' FIFOs and both of theirs out, one
// after the other.  (Left to the links, the copies in ran beside the copies
// out: 1 x 3 ranks, 2 MiB, 589 us, under the four copies' 629.)
BOOST_AUTO_TEST_CASE(a_cpu_ranks_sends_are_its_cores_copies) {
  const Machine m = twoLevelMachine(3);
  const Layout l = oneNodeOf(3);
  const size_t bytes = 2 << 20;
  const SimResult r = simulate(m, l, recordCollective(m, l, Coll::Allgather, Algo::Direct, bytes, 1));
  BOOST_REQUIRE(r.ok);
  const double copiesUs = 2 * double(bytes) / (m.intra.gbPerS * 1e3) + 2 * double(bytes) / (m.copyGbPerS * 1e3);
  BOOST_TEST(r.timeUs >= copiesUs, r.timeUs << " us, the copies alone " << copiesUs);
  BOOST_TEST(r.timeUs <= 1.1 * copiesUs, r.timeUs << " us, the copies alone " << copiesUs);
}

// The host primitives post a step's sends one after another, each after
// its own end: rank 0 sends to 1 and then 2 in one step, rank 1 passes it
// on to 2.  The first message leaves one end after the step's start, so
// rank 1's forward reaches rank 2 when rank 0's own does.
BOOST_AUTO_TEST_CASE(a_steps_first_send_leaves_before_its_later_ends) {
  Machine m = twoLevelMachine(3);
  m.intra = {1.0, 10, 10.0};  // ends of 10 us, a 1 us hop, a byte's copy nothing
  const Layout l = oneNodeOf(3);
  Schedules s;
  s.ranks.resize(3);
  auto step = [&](int rank, std::vector<int32_t> recvFrom, std::vector<int32_t> sendTo) {
    RankSchedule &rs = s.ranks[size_t(rank)];
    SimOp op;
    op.kind = SimOp::Step;
    op.bytes = 8;
    op.nrecv = uint16_t(recvFrom.size());
    op.nsend = uint16_t(sendTo.size());
    op.peerAt = uint32_t(rs.peers.size());
    rs.peers.insert(rs.peers.end(), recvFrom.begin(), recvFrom.end());
    rs.peers.insert(rs.peers.end(), sendTo.begin(), sendTo.end());
    rs.ops.push_back(op);
  };
  step(0, {}, {1, 2});
  step(1, {0}, {});
  step(1, {}, {2});
  step(2, {0}, {});
  step(2, {1}, {});
  const SimResult r = simulate(m, l, s);
  BOOST_REQUIRE(r.ok);
  // Rank 0's first message leaves at 10 us (20 if both waited for the
  // step's end), reaches rank 1 at 11, which takes it by 21 and forwards
  // it by 31, at rank 2 by 32; rank 2 took rank 0's (arrived at 21) by 31
  // and ends at 42 (52 before), give or take the copies of 8 bytes.
  BOOST_TEST(r.timeUs >= 42.0, r.timeUs << " us");
  BOOST_TEST(r.timeUs < 42.1, r.timeUs << " us");
}

BOOST_AUTO_TEST_CASE(every_candidate_replays_to_the_end) {
  const Coll colls[] = {Coll::Allreduce, Coll::Reduce,   Coll::Bcast,  Coll::Allgather,
                        Coll::ReduceScatter, Coll::Alltoall, Coll::Barrier};
  const int layouts[][2] = {{1, 4}, {1, 6}, {2, 2}, {3, 2}, {4, 1}, {2, 4}};
  for (const auto &shape : layouts) {
    Layout l;
    l.nodes = shape[0];
    l.ranksPerNode = shape[1];
    const Machine m = twoLevelMachine(l.ranksPerNode);
    for (Coll coll : colls)
      for (size_t bytes : {size_t(8), size_t(40000), size_t(1) << 20}) {
        for (Algo algo : candidatesFor(m, l, coll)) {
          const SimResult r = simulate(m, l, recordCollective(m, l, coll, algo, coll == Coll::Barrier ? 0 : bytes, 8));
          BOOST_TEST(r.ok, collName(coll) << " by " << algoName(algo) << ", " << bytes << " bytes, " << l.nodes << "x"
                                          << l.ranksPerNode << ": " << r.why);
          BOOST_TEST(r.timeUs > 0);
        }
      }
  }
}

BOOST_AUTO_TEST_CASE(the_planner_sees_the_layout) {
  const Machine gpu = *findPreset("8xh100");
  Layout one;
  one.ranksPerNode = 8;
  BOOST_TEST(planShapeOf(gpu, one).nranks == 8);
  BOOST_TEST(!planShapeOf(gpu, one).equalNodes);
  BOOST_TEST(int(engineOf(gpu, one)) == int(Engine::Kernels));
  Layout four = one;
  four.nodes = 4;
  BOOST_TEST(planShapeOf(gpu, four).equalNodes);
  BOOST_TEST(planShapeOf(gpu, four).nnodes == 4);
  // Across nodes device buffers run on the kernels (the device proxy), with
  // their node trees and rail-aligned hierarchy, and their rings spread
  // between nodes over the channels' NICs.
  BOOST_TEST(int(engineOf(gpu, four)) == int(Engine::Kernels));
  const std::vector<Algo> across = candidatesFor(gpu, four, Coll::Allreduce);
  BOOST_TEST((std::find(across.begin(), across.end(), Algo::Hierarchical) != across.end()));
  BOOST_TEST((std::find(across.begin(), across.end(), Algo::RecursiveDoubling) == across.end()));
  // The one-shots where the device links reach every remote peer (2 x 8:
  // 136 MiB of them), not beyond (4 x 8: 229 MiB, over kCudaNetLinkBudget:
  // cuda/device_links.h); the trees in both, the rooted ones there over
  // the rootless trees' links.
  Layout twoNodes = one;
  twoNodes.nodes = 2;
  BOOST_TEST(planShapeOf(gpu, twoNodes).kernelsEveryPeer);
  BOOST_TEST(!planShapeOf(gpu, four).kernelsEveryPeer);
  const std::vector<Algo> rooted = candidatesFor(gpu, twoNodes, Coll::Bcast);
  BOOST_TEST((std::find(rooted.begin(), rooted.end(), Algo::Tree) != rooted.end()));
  BOOST_TEST((std::find(rooted.begin(), rooted.end(), Algo::Direct) != rooted.end()));
  for (Coll c : {Coll::Bcast, Coll::Allreduce}) {
    const std::vector<Algo> few = candidatesFor(gpu, four, c);
    BOOST_TEST((std::find(few.begin(), few.end(), Algo::Direct) == few.end()));
    BOOST_TEST((std::find(few.begin(), few.end(), Algo::Tree) != few.end()));
  }
  // The streaming peers' links leave 8 channels on 4 nodes of 8 (48 MiB
  // less the tables over 5 peers' 1.06 MiB: 9, one NIC each rounds to 8).
  BOOST_TEST(rotatedRingChannels(gpu, four, Algo::Ring) == 8);
  BOOST_TEST(rotatedRingChannels(gpu, four, Algo::Hierarchical) == 1);
  BOOST_TEST(rotatedRingChannels(gpu, one, Algo::Ring) == 1);
  // Spread over the NICs, a ring between 2 nodes of 8 at 64 MiB takes less
  // than half the time one NIC a node would (the NICs bound it).
  Layout two = one;
  two.nodes = 2;
  Schedules spread = recordCollective(gpu, two, Coll::Allreduce, Algo::Ring, size_t(64) << 20, 8);
  const double spreadUs = simulate(gpu, two, spread).timeUs;
  spread.netChannels = 1;
  BOOST_TEST(spreadUs * 2 < simulate(gpu, two, spread).timeUs);
  // The kernels' engine has no recursive doubling: not a candidate there.
  for (Algo a : candidatesFor(gpu, one, Coll::Allreduce)) BOOST_TEST(int(a) != int(Algo::RecursiveDoubling));
}

// Schedules that disagree deadlock, and the report counts the waiting
// rank's primitive calls, a repeated step's each (it named the merged
// entry before, which says nothing of where in a ring's 2(n - 1) steps).
BOOST_AUTO_TEST_CASE(a_deadlock_names_the_primitive_call) {
  const Machine played = *findPreset("played");
  Layout l;
  l.ranksPerNode = 2;
  Schedules s;
  s.ranks.resize(2);
  SimOp receive;  // rank 0 takes three messages from rank 1, which sends two
  receive.nrecv = 1;
  receive.repeat = 3;
  receive.bytes = 8;
  s.ranks[0].ops.push_back(receive);
  s.ranks[0].peers.push_back(1);
  SimOp send = receive;
  send.nrecv = 0;
  send.nsend = 1;
  send.repeat = 2;
  s.ranks[1].ops.push_back(send);
  s.ranks[1].peers.push_back(0);
  const SimResult r = simulate(played, l, s);
  BOOST_TEST(!r.ok);
  BOOST_TEST(r.why.find("rank 0 waits forever after 2 of its primitive calls") != std::string::npos, r.why);
}

// A schedule past the event model's cap stops recording once it passes it
// (an alltoall over 1,024 ranks had taken 24 GiB before its refusal), and
// is refused with the whole's estimate.
BOOST_AUTO_TEST_CASE(recording_stops_at_the_cap) {
  const Machine cpu = *findPreset("2socket");
  Layout l;
  l.nodes = 16;
  l.ranksPerNode = 64;
  constexpr uint64_t kCap = 100000;  // (kMaxSimulatedOps takes a GiB to reach)
  const Schedules s = recordCollective(cpu, l, Coll::Alltoall, Algo::Pairwise, size_t(8) << 20, 1, kCap);
  BOOST_TEST(s.recordedRanks > 0);
  BOOST_TEST(s.recordedRanks < l.nranks());
  BOOST_TEST(s.ops() > kCap);
  BOOST_TEST(s.ops() < kCap + s.ops() / uint64_t(s.recordedRanks) + 1);  // one rank past the cap, not the whole
  const SimResult r = simulate(cpu, l, s);
  BOOST_TEST(!r.ok);
  BOOST_TEST(r.why.find("more than the event model takes") != std::string::npos, r.why);
}

// Bruck's alltoall: ceil(log2 n) messages a rank, to rank + 2^k, where the
// pairwise exchange sends n - 1; past the all-peer links' budget the
// pairwise exchange is no candidate (the planner never takes it there).
BOOST_AUTO_TEST_CASE(bruck_reaches_log2_n_peers) {
  Machine cpu = *findPreset("2socket");
  Layout l;
  l.nodes = 16;
  l.ranksPerNode = cpu.ranksPerNode = 1;
  const Schedules bruck = recordCollective(cpu, l, Coll::Alltoall, Algo::Bruck, 8, 1);
  const Schedules pairwise = recordCollective(cpu, l, Coll::Alltoall, Algo::Pairwise, 8, 1);
  const SimResult b = simulate(cpu, l, bruck), p = simulate(cpu, l, pairwise);
  BOOST_TEST(b.ok);
  BOOST_TEST(p.ok);
  BOOST_TEST(b.messages == 16u * 4u);
  BOOST_TEST(p.messages == 16u * 15u);
  BOOST_TEST(b.timeUs < p.timeUs);
  l.ranksPerNode = cpu.ranksPerNode = 64;
  const std::vector<Algo> many = candidatesFor(cpu, l, Coll::Alltoall);
  BOOST_TEST((std::find(many.begin(), many.end(), Algo::Pairwise) == many.end()));
  BOOST_TEST((std::find(many.begin(), many.end(), Algo::Bruck) != many.end()));
  BOOST_TEST(int(planCollective(Coll::Alltoall, size_t(1) << 20, planShapeOf(cpu, l)).algo) == int(Algo::Bruck));
}

// A rank's copies within its own memory take its core's time: Bruck on 8
// ranks, 4 KiB blocks, copies the 8 blocks into place, packs and unpacks 4
// blocks in each of 3 rounds, and swaps 3 pairs through a slice (3 copies
// each): 41 blocks, 4.2 us at 40 GB/s, all of it on each rank's chain.
BOOST_AUTO_TEST_CASE(local_copies_take_the_rank_s_time) {
  Machine cpu = *findPreset("2socket");
  Layout l;
  l.nodes = 8;
  l.ranksPerNode = cpu.ranksPerNode = 1;
  const size_t block = 4096;
  const Schedules bruck = recordCollective(cpu, l, Coll::Alltoall, Algo::Bruck, block, 1);
  cpu.localCopyGbPerS = 40;
  const SimResult charged = simulate(cpu, l, bruck);
  cpu.localCopyGbPerS = 1e9;
  const SimResult uncharged = simulate(cpu, l, bruck);
  BOOST_TEST_REQUIRE(charged.ok);
  BOOST_TEST_REQUIRE(uncharged.ok);
  const double copiesUs = (8 + 2 * 4 * 3 + 3 * 3) * double(block) / 40e3;
  BOOST_TEST(charged.timeUs - uncharged.timeUs >= 0.9 * copiesUs);
  BOOST_TEST(charged.timeUs - uncharged.timeUs <= 1.1 * copiesUs);
}


BOOST_AUTO_TEST_CASE(resources_follow_the_wiring) {
  Layout one;
  one.ranksPerNode = 8;
  const CommFootprint alone = footprintOf(one);
  BOOST_TEST(alone.remotePeers == 0);
  BOOST_TEST(alone.allNetBytes == 0u);
  BOOST_TEST(alone.shmSegmentBytes > 0u);
  BOOST_TEST(alone.deviceFifoBytes > 0u);  // one node: the kernels' FIFOs
  Layout some = one, many = one;
  some.nodes = 16;
  many.nodes = 128;
  const CommFootprint f16 = footprintOf(some), f128 = footprintOf(many);
  BOOST_TEST(f16.remotePeers == 15 * 8);
  BOOST_TEST(f128.remotePeers == 127 * 8);
  // Rings, node trees, the hierarchy: a bounded set of links whatever the scale.
  BOOST_TEST(f16.bulkNetPeers >= 2);
  BOOST_TEST(f16.bulkNetPeers <= 7);
  BOOST_TEST(f128.bulkNetPeers == f16.bulkNetPeers);
  BOOST_TEST(f128.bulkNetBytes == f16.bulkNetBytes);
  // Every remote peer beyond the streaming ones is a small FIFO each way.
  const size_t smallLink = 2 * fifoFootprint(kSmallFifoSlotBytes, kSmallFifoSlots);
  BOOST_TEST(f128.allNetBytes - f128.bulkNetBytes == size_t(f128.remotePeers - f128.bulkNetPeers) * smallLink);
  BOOST_TEST(f128.tableBytes > f16.tableBytes + size_t(f128.nranks - f16.nranks) * f128.peerInfoBytes);
  // An alltoall links every remote peer while their copies fit the budget
  // (16 x 8: 120 of them), Bruck's few beyond (128 x 8: rank +- 2^k).
  BOOST_TEST(f16.alltoallNetPeers == f16.remotePeers);
  BOOST_TEST(f16.alltoallNetBytes == f16.allNetBytes);
  BOOST_TEST(f128.alltoallNetPeers > f128.bulkNetPeers);
  BOOST_TEST(f128.alltoallNetPeers <= f128.bulkNetPeers + 2 * 10);
  BOOST_TEST(f128.alltoallNetBytes - f128.bulkNetBytes ==
             size_t(f128.alltoallNetPeers - f128.bulkNetPeers) * smallLink);
  // The streaming links' budget leaves room for these tables as they grow.
  BOOST_TEST(cudaStreamingLinkBudget(f16.nranks) - cudaStreamingLinkBudget(f128.nranks) >=
                 f128.tableBytes - f16.tableBytes,
             (f128.tableBytes - f16.tableBytes) / size_t(f128.nranks - f16.nranks) << " bytes a rank");
  // The kernels across nodes: device FIFOs for the node's peers only, the
  // same at any scale for a channel count; the proxy's links in pinned host
  // memory for every remote peer on every channel.
  BOOST_TEST(alone.deviceChannels == 16);
  BOOST_TEST(alone.deviceFifoBytes == cudaFifoRegionBytes(8, 16));
  BOOST_TEST(alone.deviceLinkBytes == 0u);
  BOOST_TEST(f128.deviceChannels == 6);  // the streaming links' budget, not the device's
  BOOST_TEST(f128.deviceFifoBytes == cudaFifoRegionBytes(8, f128.deviceChannels));
  BOOST_TEST(f128.deviceFifoBytes < alone.deviceFifoBytes);
  // The FIFO ends' table, by rank on every channel: 384 bytes a rank.
  BOOST_TEST(f128.deviceEndsBytes == size_t(f128.nranks) * size_t(f128.deviceChannels) * 2 * 2 * sizeof(FifoEnd));
  // At 128 nodes the links would take 1 GiB: only the streaming peers.
  BOOST_TEST(f128.deviceLinkedPeers > 0);
  BOOST_TEST(f128.deviceLinkedPeers <= 12);
  BOOST_TEST(f128.deviceLinkBytes == size_t(f128.deviceLinkedPeers) * size_t(f128.deviceChannels) * 2 *
                                         fifoFootprint(kCudaSlotBytes, kCudaSlots));
  Layout two = one;
  two.nodes = 2;
  const CommFootprint f2 = footprintOf(two);  // 2 x 8: every remote peer
  BOOST_TEST(f2.deviceLinkedPeers == f2.remotePeers);
  BOOST_TEST(f2.deviceLinkBytes == size_t(8) * size_t(16) * kCudaNetLinkBytes);
  const Machine gpu = *findPreset("8xh100");
  BOOST_TEST(setupTimeOf(gpu, many, f128, true).totalUs() > setupTimeOf(gpu, many, f128, false).totalUs());
}

BOOST_AUTO_TEST_SUITE_END()
