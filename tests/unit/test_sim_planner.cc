// The planner against chorus_sim (tools/sim): where the sweeps of issue 31
// flagged the planner's choice, or its cost model, against the simulated
// time of every candidate, the choice stays within 10% of the fastest and
// the model within the measured bounds of the replay.  The CPU engine's
// model, the kernels' (their one-shot, ring, hierarchy, tree and chain
// across GPU nodes) and the staged alltoall of device buffers.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda/device_channel.h"
#include "sim/sim_model.h"

using namespace chorus;
using namespace chorus::sim;

BOOST_AUTO_TEST_SUITE(sim)

// Replays every candidate of (coll, bytes) on the layout through the
// simulator: the planner's choice must be one of them and within 10% of
// the fastest, the slack the sweep of issue 31 flags beyond.
static void checkPlannedWithinSlackOfBest(const Machine &machine, const Layout &l, Coll coll, size_t bytes) {
  const Algo planned = planCollective(coll, bytes, planShapeOf(machine, l), engineOf(machine, l, coll)).algo;
  double plannedUs = -1, bestUs = -1;
  for (Algo a : candidatesFor(machine, l, coll)) {
    const SimResult r = simulateCall(machine, l, coll, a, bytes, 8);
    BOOST_TEST_REQUIRE(r.ok, algoName(a) << ": " << r.why);
    if (a == planned) plannedUs = r.timeUs;
    if (bestUs < 0 || r.timeUs < bestUs) bestUs = r.timeUs;
  }
  BOOST_TEST(plannedUs > 0, algoName(planned) << " is not a candidate");
  BOOST_TEST(plannedUs <= 1.1 * bestUs, machine.name << ", " << l.nodes << " x " << l.ranksPerNode << " "
                                                     << collName(coll) << " " << bytes << " B: " << algoName(planned)
                                                     << " " << plannedUs << " us, the best " << bestUs);
}

// Where the simulator found the planner more than 10% from the best
// candidate on CPU nodes with their own 100 Gb/s NIC, the planner's choice,
// replayed, is now within 10% of the best: the allreduce tree's model was a
// fill short and recursive doubling's charged both directions to the NIC
// (16 x 8, 8-32 KiB: the tree taken at 1.9-3.2x); the rooted tree's model
// had the chain's 256 KiB slices where it runs 16 KiB ones (2 x 8, 2 MiB
// broadcast and reduce: the chain taken at 1.9-2.5x); the hierarchy's rings
// among the nodes were each given a NIC of their own, where the node's
// ranks share its one (16 x 8, 8 MiB: the hierarchy taken at 1.17x); the
// model priced an RDMA NIC's message as UCX tcp's, 2.5 + 2.5 us, and a
// rooted one-shot as an allgather's queue of every rank's vectors (4 x 1,
// 8 B-512 KiB broadcast, 8 B-8 KiB reduce: the tree or chain taken at
// 1.1-1.6x), a broadcast tree's stream as two copies a slice where a
// head on 2 nodes sends it to one (2 x 8, 8 MiB: the chain taken at
// 1.13x), a message through shared memory as free (2 x 8, 8 KiB
// allreduce: the hierarchy's 14 steps in the node taken at 1.25x), and,
// every rank its own node, the ring's steps without the copy each slice
// waits for and the one-shot's copies as the NIC's (4 x 1, 32 KiB-32 MiB
// allgather, 16 x 1 at 32 KiB: the ring taken at 1.1-1.35x), and recursive
// halving bounded by the smallest slice, not the one the executor cuts
// (4 x 1, 32 KiB reduce-scatter: the ring taken at 1.14x).
BOOST_AUTO_TEST_CASE(the_planner_takes_the_best_where_it_was_flagged) {
  const Machine preset = *findPreset("2socket");
  struct Case {
    int nodes, ranksPerNode;
    Coll coll;
    size_t bytes;
  };
  const Case cases[] = {{16, 8, Coll::Allreduce, size_t(8) << 10},  {16, 8, Coll::Allreduce, size_t(32) << 10},
                        {2, 8, Coll::Bcast, size_t(2) << 20},       {2, 8, Coll::Reduce, size_t(2) << 20},
                        {16, 1, Coll::Bcast, size_t(2) << 20},      {16, 8, Coll::Allreduce, size_t(8) << 20},
                        {4, 1, Coll::Bcast, 8},                     {4, 1, Coll::Reduce, size_t(8) << 10},
                        {4, 1, Coll::Bcast, size_t(32) << 10},      {2, 8, Coll::Bcast, size_t(8) << 20},
                        {2, 8, Coll::Allreduce, size_t(8) << 10},   {4, 1, Coll::Allgather, size_t(8) << 20},
                        {4, 1, Coll::Allgather, size_t(32) << 10},  {16, 1, Coll::Allgather, size_t(32) << 10},
                        {4, 1, Coll::ReduceScatter, size_t(32) << 10},
                        // Bruck's alltoall for small blocks, the pairwise exchange past them or on few ranks
                        {2, 64, Coll::Alltoall, 8},                 {1, 64, Coll::Alltoall, 8},
                        {16, 1, Coll::Alltoall, 512},               {2, 8, Coll::Alltoall, size_t(8) << 10},
                        {2, 2, Coll::Alltoall, 8},                  {1, 8, Coll::Alltoall, 8},
                        // past a slice, the pipelined pairwise exchange (a hop a partner, not
                        // a slice: Bruck was taken at 1.30x on 8 x 1, 64 KiB)
                        {8, 1, Coll::Alltoall, size_t(64) << 10},   {1, 8, Coll::Alltoall, size_t(64) << 10},
                        // Bruck's packing charged (Bruck was taken at 1.24x on 8 x 1, 4 KiB), the
                        // pairwise exchange's first latency behind its sends, slices pipelined
                        // through a shared NIC (the pairwise exchange taken at 1.23x on 8 x 4, 2 KiB)
                        {8, 1, Coll::Alltoall, size_t(4) << 10},    {8, 4, Coll::Alltoall, size_t(2) << 10},
                        {16, 8, Coll::Alltoall, 1024},
                        // Bruck's rounds wait for the node's NIC queue only where it outlasts a
                        // rank's own chain (the pairwise exchange taken at 1.15x on 3 x 8, 1 KiB)
                        {3, 8, Coll::Alltoall, 1024},               {4, 8, Coll::Alltoall, 1024},
                        // the rooted one-shot's root ends a message to each peer each slice (the
                        // tree taken at 1.11-1.13x, the one-shot reduce at 1.12x the tree)
                        {2, 4, Coll::Bcast, size_t(32) << 10},      {2, 8, Coll::Bcast, size_t(32) << 10},
                        {4, 1, Coll::Reduce, size_t(32) << 10},
                        // on one node Bruck's rounds copy what they receive out of the FIFO too
                        // (Bruck taken at 1.12x on 1 x 16, 256 B)
                        {1, 16, Coll::Alltoall, 256},
                        // a CPU rank's pure sends are its core's copies, posted one by one:
                        // the one-shot allgather had been modelled 1.3-1.9x over on 2 x 2 and
                        // taken on 4 x 4 at 4 KiB, a broadcast root's copies precede its
                        // NIC's sends, the tree's root copies once per child node
                        {2, 2, Coll::Allgather, size_t(32) << 10},  {4, 4, Coll::Allgather, size_t(4) << 10},
                        {4, 4, Coll::ReduceScatter, size_t(4) << 10}, {4, 1, Coll::Bcast, size_t(256) << 10},
                        {4, 4, Coll::Bcast, size_t(2) << 20},       {16, 2, Coll::Alltoall, size_t(2) << 10},
                        // a reduce's head folds every child node's slice before it passes its
                        // own on (the tree taken at 1.10x the one-shot on 4 x 2, 8 B)
                        {4, 2, Coll::Reduce, 8},                    {4, 2, Coll::Reduce, 64},
                        // nodes of 3 or 6 ranks: the hierarchy's tail, a flat ring past its
                        // last whole block (taken at 1.17-2.2x the best), and the one-shot
                        // allreduce's vector as an allgather's block (taken at 1.28-1.34x on
                        // 5 x 1 and 6 x 1, the tree over it at 1.37x on 3 x 3)
                        {3, 3, Coll::Allreduce, size_t(256) << 10}, {6, 6, Coll::Allreduce, size_t(256) << 10},
                        {3, 6, Coll::Allreduce, 4096},              {5, 1, Coll::Allreduce, size_t(32) << 10},
                        {6, 1, Coll::Allreduce, size_t(32) << 10},  {3, 3, Coll::Allreduce, 64}};
  for (const Case &c : cases) {
    Machine cpu = preset;
    cpu.ranksPerNode = c.ranksPerNode;  // as chorus_sim -r sets it
    Layout l;
    l.nodes = c.nodes;
    l.ranksPerNode = c.ranksPerNode;
    checkPlannedWithinSlackOfBest(cpu, l, c.coll, c.bytes);
  }
}

// On CPU nodes whose NICs are known the planner's model tracks the
// simulator, at bulk sizes too: it had the allreduce's ring 2-2.6x under
// the simulated time from 4 MiB (a CPU rank's copies, not the NIC, bound
// it) and 2.5x over at 8 B on 128 ranks (the steps wait on the network
// hop's credits, not its latency each), the hierarchy 1.4x under, the tree
// 5-46x under (a round trip a slice, modelled as a stream), recursive
// doubling 1.5x under on 16 x 1 (a message and its credit for each 16 KiB
// slice), the one-shot allgather 1.8x over at 2 KiB on 2 x 8 (every
// message at the network's price), and the hierarchy 2.5x under on nodes
// of 3 ranks at 4 KiB (its tail's flat ring, past the last whole block).
BOOST_AUTO_TEST_CASE(the_cpu_model_tracks_the_simulator) {
  const Machine preset = *findPreset("2socket");
  struct Case {
    int nodes, ranksPerNode;
    Coll coll;
    Algo algo;
    size_t bytes;
  };
  constexpr size_t k4M = size_t(4) << 20;
  const Case cases[] = {{2, 8, Coll::Allreduce, Algo::Ring, k4M},
                        {16, 8, Coll::Allreduce, Algo::Ring, k4M},
                        {4, 1, Coll::Allreduce, Algo::Ring, k4M},
                        {16, 8, Coll::Allreduce, Algo::Ring, 8},
                        {2, 64, Coll::Allreduce, Algo::Ring, 8},
                        {2, 8, Coll::Allreduce, Algo::Tree, k4M},
                        {16, 8, Coll::Allreduce, Algo::Tree, k4M},
                        {2, 64, Coll::Allreduce, Algo::Tree, k4M},
                        {16, 1, Coll::Allreduce, Algo::Tree, k4M},
                        {2, 8, Coll::Allreduce, Algo::Hierarchical, k4M},
                        {16, 8, Coll::Allreduce, Algo::Hierarchical, k4M},
                        {4, 1, Coll::Allreduce, Algo::RecursiveDoubling, k4M},
                        {16, 1, Coll::Allreduce, Algo::RecursiveDoubling, k4M},
                        {2, 8, Coll::Allgather, Algo::Direct, 2048},
                        {4, 2, Coll::Allgather, Algo::Direct, size_t(512) << 10},
                        {3, 3, Coll::Allreduce, Algo::Hierarchical, 4096},
                        {5, 1, Coll::Allreduce, Algo::Direct, size_t(32) << 10}};
  for (const Case &c : cases) {
    Machine cpu = preset;
    cpu.ranksPerNode = c.ranksPerNode;
    Layout l;
    l.nodes = c.nodes;
    l.ranksPerNode = c.ranksPerNode;
    const SimResult r = simulate(cpu, l, recordCollective(cpu, l, c.coll, c.algo, c.bytes, 8));
    BOOST_TEST_REQUIRE(r.ok, algoName(c.algo) << ": " << r.why);
    const double modelUs = modelCostUs(c.coll, c.algo, c.bytes, planShapeOf(cpu, l), engineOf(cpu, l));
    BOOST_TEST((modelUs > r.timeUs / 1.4 && modelUs < r.timeUs * 1.4),
               c.nodes << " x " << c.ranksPerNode << " " << collName(c.coll) << " " << algoName(c.algo) << ", "
                       << c.bytes << " B: model " << modelUs << " us, simulated " << r.timeUs);
  }
}

// A rooted tree's first slice waits at each head on its way for the head's
// other messages' ends: a broadcast's head sends to its child nodes in
// turn, a reduce's takes in every child node's slice and its chain's
// before it passes its own on.  At 8 B, where nothing else counts, the
// model is the simulated time (it had been 1.0-3.6 us under, one message
// end a hop).
BOOST_AUTO_TEST_CASE(a_rooted_trees_message_waits_for_its_heads_other_ends) {
  const Machine preset = *findPreset("2socket");
  for (const Coll coll : {Coll::Bcast, Coll::Reduce})
    for (const int nodes : {3, 4, 5, 16})
      for (const int ranksPerNode : {1, 2, 8}) {
        Machine cpu = preset;
        cpu.ranksPerNode = ranksPerNode;
        Layout l;
        l.nodes = nodes;
        l.ranksPerNode = ranksPerNode;
        const SimResult r = simulate(cpu, l, recordCollective(cpu, l, coll, Algo::Tree, 8, 8));
        BOOST_TEST_REQUIRE(r.ok, r.why);
        const double modelUs = modelCostUs(coll, Algo::Tree, 8, planShapeOf(cpu, l), engineOf(cpu, l));
        BOOST_TEST(std::abs(modelUs - r.timeUs) < 0.02 * r.timeUs,
                   nodes << " x " << ranksPerNode << " " << collName(coll) << ": model " << modelUs
                         << " us, simulated " << r.timeUs);
      }
}

// Across GPU nodes the kernels' one-shot ran while (n - 1) x the vector
// stayed under 1 MiB, the rule of one node's NVLink fan-in; through the
// nodes' NICs its m (n - m) vectors queue, and chorus_sim had it 1.1-2.1x
// slower than the hierarchy, the tree or the ring there.  The NICs' queue
// now bounds it (kKernelsDirectNicQueueUs), and the choice is within 10% of
// the best.
BOOST_AUTO_TEST_CASE(the_kernels_one_shot_across_nodes_stops_at_the_nics_queue) {
  struct Case {
    const char *preset;
    int nodes;
    Coll coll;
    size_t bytes;
  };
  const Case cases[] = {{"8xh100", 2, Coll::Allreduce, size_t(32) << 10},
                        {"8xh100", 2, Coll::Bcast, size_t(64) << 10},
                        {"4xgh200", 2, Coll::Allreduce, size_t(128) << 10},
                        {"4xgh200", 2, Coll::Allgather, size_t(128) << 10},
                        {"8xa100", 2, Coll::Reduce, size_t(32) << 10},
                        {"8xa100", 2, Coll::ReduceScatter, size_t(16) << 10},
                        {"8xh100", 2, Coll::Allreduce, size_t(8) << 10}};  // (still the one-shot's, and the best)
  for (const Case &c : cases) {
    const Machine gpu = *findPreset(c.preset);
    Layout l;
    l.nodes = c.nodes;
    l.ranksPerNode = gpu.ranksPerNode;
    const PlanShape shape = planShapeOf(gpu, l);
    BOOST_TEST(shape.kernelsNodeNetBytesPerUs > 0);
    // (The host's model has their NICs too, for calls staged through host memory.)
    BOOST_TEST(shape.netLinkBytesPerUs == gpu.fabric.net.gbPerS * 1000.0);
    checkPlannedWithinSlackOfBest(gpu, l, c.coll, c.bytes);
  }
}

// The kernels' own model (coll/tuner_kernels.cc) is what modelCostUs gives
// for `coll` by `algo` on `nodes` of `preset`, within [low, high] x the
// simulated time.
static void checkKernelsModel(const char *preset, int nodes, Coll coll, Algo algo, size_t bytes, double low,
                              double high) {
  const Machine gpu = *findPreset(preset);
  Layout l;
  l.nodes = nodes;
  l.ranksPerNode = gpu.ranksPerNode;
  const SimResult r = simulate(gpu, l, recordCollective(gpu, l, coll, algo, bytes, 8));
  BOOST_TEST_REQUIRE(r.ok, r.why);
  const PlanShape shape = planShapeOf(gpu, l);
  const double modelUs = modelCostUs(coll, algo, bytes, shape, Engine::Kernels);
  BOOST_TEST(modelUs == (coll == Coll::Allreduce ? kernelsAllreduceCostUs(algo, bytes, shape)
                                                  : kernelsRootedCostUs(coll, algo, bytes, shape)));
  BOOST_TEST((modelUs >= low * r.timeUs && modelUs <= high * r.timeUs),
             preset << ", " << nodes << " nodes, " << collName(coll) << " " << algoName(algo) << " " << bytes
                    << " B: modelled " << modelUs << " us, simulated " << r.timeUs);
}

// The kernels' allreduce across GPU nodes had the host's model, whose hops
// are CPU shared memory's measured 7 GB/s and UCX tcp's: the hierarchy 3.6x
// the simulated time on 2,048 nodes of 8 H100 at 128 MiB, and 0.3-0.5x the
// ring's bandwidth on 2 nodes.  Their own model (coll/tuner_kernels.cc),
// over the node's GPU links and NICs, tracks the simulator within 0.8-1.7x.
BOOST_AUTO_TEST_CASE(the_kernels_allreduce_model_tracks_the_simulator) {
  struct Case {
    const char *preset;
    int nodes;
    Algo algo;
    size_t bytes;
  };
  constexpr size_t k64K = size_t(64) << 10, k16M = size_t(16) << 20, k128M = size_t(128) << 20;
  const Case cases[] = {{"8xh100", 2, Algo::Ring, k128M},         {"8xh100", 16, Algo::Ring, k16M},
                        {"8xh100", 64, Algo::Ring, k64K},          {"8xa100", 16, Algo::Ring, k128M},
                        {"4xgh200", 4, Algo::Ring, k16M},          {"8xh100", 2, Algo::Hierarchical, k128M},
                        {"8xh100", 64, Algo::Hierarchical, k64K},  {"8xa100", 4, Algo::Hierarchical, k16M},
                        {"8xh100", 16, Algo::Tree, k64K},          {"8xh100", 4, Algo::Tree, k16M},
                        {"8xa100", 16, Algo::Tree, size_t(2) << 20}, {"4xgh200", 2, Algo::Tree, 64}};
  for (const Case &c : cases) checkKernelsModel(c.preset, c.nodes, Coll::Allreduce, c.algo, c.bytes, 0.8, 1.7);
  // The ring's steps chain through its hops, and its slowest link carries
  // a block a step: the slower of the two.  Adding the average hop's
  // latency to the slowest link's transfer was 1.2-1.65x the simulator at
  // 8-128 MiB, where the few network hops hide the NVLink ones' latency.
  checkKernelsModel("8xh100", 4, Coll::Allreduce, Algo::Ring, size_t(32) << 20, 0.9, 1.1);
  checkKernelsModel("8xa100", 16, Coll::Allreduce, Algo::Ring, size_t(8) << 20, 0.9, 1.1);
  // A step of several slices pays each one's chain (a block of one slice
  // and a bit: 1.5x one slice's time, where the model had 1.03x).
  checkKernelsModel("8xh100", 4, Coll::Allreduce, Algo::Ring, size_t(128) << 20, 0.9, 1.1);
  // Rails that share a NIC take turns on it (8 A100 on 4 NICs): their
  // steps' hops overlap the other rail's transfer.  Adding them up was
  // 1.22x the simulator.
  checkKernelsModel("8xa100", 32, Coll::Allreduce, Algo::Hierarchical, size_t(32) << 20, 0.9, 1.1);
}

// With it the kernels' plan takes, across GPU nodes, an allreduce within
// 10% of the best candidate where the host model's choice was 1.1-4x
// slower: the hierarchy over the ring at 2 nodes from 8 MiB, the tree over
// the hierarchy at 64 B-8 KiB on 4 nodes of 4 GH200 (and the other way
// round at 512 KiB-2 MiB on 32-128 nodes of 8 H100), and at 2,048 nodes
// of 8 H100 the tree over the hierarchy at 128 MiB (its estimate, below;
// the schedules take minutes to time).  The hierarchy over the ring on
// 4 x 8 H100 at 32 MiB (1.25x) and 4 x 4 GH200 at 8 MiB (1.16x) stayed
// until the ring's model chained its hops; on the channels the links allow
// at scale, the ring over the hierarchy on 32 x 8 A100 at 32 MiB (1.28x)
// until the rails that share a NIC took turns on it, and the hierarchy
// over the tree on 128 x 8 H100 at 2 MiB (1.11x) until the tree's partial
// slice moved only its bytes.
BOOST_AUTO_TEST_CASE(the_kernels_allreduce_across_gpu_nodes_takes_the_best) {
  struct Case {
    const char *preset;
    int nodes;
    size_t bytes;
  };
  const Case cases[] = {{"8xh100", 2, size_t(64) << 20},  {"4xgh200", 2, size_t(32) << 20},
                        {"4xgh200", 4, 1024},             {"8xa100", 4, 256},
                        {"8xh100", 32, size_t(512) << 10}, {"8xh100", 128, size_t(2) << 20},
                        {"4xgh200", 16, size_t(128) << 10}, {"8xh100", 4, size_t(32) << 20},
                        {"4xgh200", 4, size_t(8) << 20},  {"8xa100", 32, size_t(32) << 20}};
  for (const Case &c : cases) {
    const Machine gpu = *findPreset(c.preset);
    Layout l;
    l.nodes = c.nodes;
    l.ranksPerNode = gpu.ranksPerNode;
    checkPlannedWithinSlackOfBest(gpu, l, Coll::Allreduce, c.bytes);
  }
  const Machine h100 = *findPreset("8xh100");
  Layout huge;
  huge.nodes = 2048;
  huge.ranksPerNode = h100.ranksPerNode;
  const PlanShape shape = planShapeOf(h100, huge);
  BOOST_TEST(algoName(planCollective(Coll::Allreduce, size_t(128) << 20, shape, Engine::Kernels).algo) ==
             algoName(Algo::Hierarchical));
  // (chorus_sim's times there, perf/RESULTS.md, on the 4 channels' 512
  // KiB slices the kernels run at that scale: the hierarchy 18.2 ms, the
  // ring 57.2, the tree 81.4.)
  const double hierUs = kernelsAllreduceCostUs(Algo::Hierarchical, size_t(128) << 20, shape);
  BOOST_TEST((hierUs > 0.8 * 18224 && hierUs < 1.25 * 18224), hierUs);
}

// The kernels' bcast and reduce across GPU nodes had the host's model too:
// 0.5-58x the simulated chain and tree.  Their own (coll/tuner_kernels.cc)
// tracks the simulator within 0.75-1.25x, the tree over the links the
// kernels make at scale (16 and 64 nodes of 8) included.
BOOST_AUTO_TEST_CASE(the_kernels_rooted_model_tracks_the_simulator) {
  struct Case {
    const char *preset;
    int nodes;
    Coll coll;
    Algo algo;
    size_t bytes;
  };
  constexpr size_t k32K = size_t(32) << 10, k2M = size_t(2) << 20, k32M = size_t(32) << 20;
  const Case cases[] = {{"8xh100", 2, Coll::Bcast, Algo::Chain, k32M},    {"8xh100", 16, Coll::Bcast, Algo::Tree, 8},
                        {"8xh100", 64, Coll::Reduce, Algo::Tree, k2M},    {"4xgh200", 4, Coll::Reduce, Algo::Chain, k2M},
                        {"4xgh200", 2, Coll::Bcast, Algo::Tree, k32K},    {"8xa100", 16, Coll::Bcast, Algo::Chain, k32K},
                        {"8xa100", 4, Coll::Reduce, Algo::Tree, k32M},    {"8xh100", 4, Coll::Bcast, Algo::Tree, k2M}};
  for (const Case &c : cases) checkKernelsModel(c.preset, c.nodes, c.coll, c.algo, c.bytes, 0.75, 1.25);
}

// With it the plan of a device bcast or reduce across GPU nodes is within
// 10% of the best where it was 1.1-1.2x slower (the one-shot over the tree
// at 32 KiB on 2 x 4 GH200, the chain over the tree at 2 MiB on 2 x 8
// A100).  Where only the streaming peers are linked (from 4 nodes of 8)
// the tree is a candidate again, on those links, and taken where the
// chain's hop per rank was: on 16 x 8 H100 8 B in 31 us, not 217.
BOOST_AUTO_TEST_CASE(the_kernels_bcast_and_reduce_across_gpu_nodes_take_the_best) {
  struct Case {
    const char *preset;
    int nodes;
    Coll coll;
    size_t bytes;
  };
  const Case cases[] = {{"4xgh200", 2, Coll::Bcast, size_t(32) << 10}, {"4xgh200", 2, Coll::Reduce, size_t(32) << 10},
                        {"4xgh200", 3, Coll::Bcast, 8},                {"8xa100", 2, Coll::Reduce, size_t(2) << 20},
                        {"8xh100", 4, Coll::Reduce, size_t(2) << 20},  {"8xh100", 16, Coll::Bcast, 8}};
  for (const Case &c : cases) {
    const Machine gpu = *findPreset(c.preset);
    Layout l;
    l.nodes = c.nodes;
    l.ranksPerNode = gpu.ranksPerNode;
    checkPlannedWithinSlackOfBest(gpu, l, c.coll, c.bytes);
  }
  const Machine h100 = *findPreset("8xh100");
  Layout many;
  many.nodes = 16;
  many.ranksPerNode = h100.ranksPerNode;
  const PlanShape shape = planShapeOf(h100, many);
  BOOST_TEST(!shape.kernelsEveryPeer);
  for (Coll coll : {Coll::Bcast, Coll::Reduce}) {
    BOOST_TEST(algoName(planCollective(coll, 8, shape, Engine::Kernels).algo) == algoName(Algo::Tree));
    const double treeUs = simulate(h100, many, recordCollective(h100, many, coll, Algo::Tree, 8, 8)).timeUs;
    const double chainUs = simulate(h100, many, recordCollective(h100, many, coll, Algo::Chain, 8, 8)).timeUs;
    BOOST_TEST(treeUs < 0.2 * chainUs, collName(coll) << ": tree " << treeUs << " us, chain " << chainUs);
  }
}

// A call's slice on the kernels is a full slot on each of its channels,
// and the channels fall with the links a rank takes (cudaDeviceWiring: 16
// on 1 x 8, 8 on 4 x 8, 6 on 16 and 64 x 8).  The simulator and the planner
// took 16 channels' 2 MiB at every scale, where 64 x 8 streamed 128 KiB
// on the channels of the time (1): the chain's fill overstated,
// the hierarchy's messages a step understated (16 and 64 x 8 H100 at
// 128 MiB: 2.0-2.5x the time of 2 MiB slices).  With the slice the kernels
// run, the planner takes the chain over the tree for the largest bcasts
// and reduces there, where the tree was 1.4-1.6x slower, and the model of
// the hierarchy counts each slice's message.
BOOST_AUTO_TEST_CASE(the_gpu_slice_follows_the_kernels_channels) {
  const Machine h100 = *findPreset("8xh100");
  for (int nodes : {1, 4, 16, 64}) {
    Layout l;
    l.nodes = nodes;
    l.ranksPerNode = h100.ranksPerNode;
    const size_t slice = kCudaSlotBytes * size_t(nodes == 1 ? 16 : nodes == 4 ? 8 : 6);
    BOOST_TEST(sliceBytesOf(h100, l) == slice);
    if (nodes > 1) BOOST_TEST(planShapeOf(h100, l).kernelsSliceBytes == double(slice));
    // The chain's messages are the slice, whatever the algorithm's path.
    const Schedules s = recordCollective(h100, l, Coll::Bcast, Algo::Chain, size_t(32) << 20, 8);
    uint64_t largest = 0;
    for (const RankSchedule &r : s.ranks)
      for (const SimOp &op : r.ops) largest = std::max(largest, op.bytes);
    BOOST_TEST(largest == slice, nodes << " nodes");
  }
  Layout l;
  l.nodes = 64;
  l.ranksPerNode = h100.ranksPerNode;
  BOOST_TEST(sliceBytesOf(h100, l) == 6 * kCudaSlotBytes);
  for (Coll coll : {Coll::Bcast, Coll::Reduce}) checkPlannedWithinSlackOfBest(h100, l, coll, size_t(128) << 20);
  const Machine a100 = *findPreset("8xa100");
  l.nodes = 16;
  checkPlannedWithinSlackOfBest(a100, l, Coll::Bcast, size_t(32) << 20);
  checkKernelsModel("8xh100", 64, Coll::Allreduce, Algo::Hierarchical, size_t(128) << 20, 0.7, 1.3);
}

// A bcast or reduce tree across nodes runs every channel on one tree, so
// the channels share each head's NIC: 6 channels' 768 KiB slice made
// 64 x 8 H100 take 512 KiB in one slice through 13 hops (166 us, where one
// channel's four slices took 88).  The tree takes the channels whose
// blocks keep up with one NIC (cudaRootedTreeChannels), and its messages
// are their slots; the streaming algorithms keep every channel.
BOOST_AUTO_TEST_CASE(the_rooted_tree_runs_on_the_channels_one_nic_needs) {
  BOOST_TEST(cudaRootedTreeChannels(50000, 16) == 2);  // 400 Gb/s
  BOOST_TEST(cudaRootedTreeChannels(25000, 6) == 1);   // 200 Gb/s
  BOOST_TEST(cudaRootedTreeChannels(50001, 6) == 3);
  BOOST_TEST(cudaRootedTreeChannels(450000, 16) == 0);  // no bound: every channel keeps up
  BOOST_TEST(cudaRootedTreeChannels(0, 16) == 0);       // NICs not known
  struct Case {
    const char *preset;
    int treeChannels;
  };
  for (const Case c : {Case{"8xh100", 2}, Case{"4xgh200", 2}, Case{"8xa100", 1}}) {
    const Machine gpu = *findPreset(c.preset);
    Layout l;
    l.nodes = 16;
    l.ranksPerNode = gpu.ranksPerNode;
    BOOST_TEST(rootedTreeChannelsOf(gpu, l) == c.treeChannels, c.preset);
    const size_t treeSlice = kCudaSlotBytes * size_t(c.treeChannels);
    BOOST_TEST(planShapeOf(gpu, l).kernelsTreeSliceBytes == double(treeSlice), c.preset);
    auto largestMessage = [&](Algo algo) {
      const Schedules s = recordCollective(gpu, l, Coll::Bcast, algo, size_t(8) << 20, 8);
      uint64_t largest = 0;
      for (const RankSchedule &r : s.ranks)
        for (const SimOp &op : r.ops) largest = std::max(largest, op.bytes);
      return largest;
    };
    BOOST_TEST(largestMessage(Algo::Tree) == treeSlice, c.preset);
    BOOST_TEST(largestMessage(Algo::Chain) == sliceBytesOf(gpu, l), c.preset);
    l.nodes = 1;
    BOOST_TEST(rootedTreeChannelsOf(gpu, l) == 0, c.preset);  // one node: no NIC to share
  }
  // The tree now pipelines where it had one slice: the planner still takes
  // the best, and the tree's model follows its slices.
  const Machine h100 = *findPreset("8xh100");
  Layout l;
  l.ranksPerNode = h100.ranksPerNode;
  for (int nodes : {4, 64}) {
    l.nodes = nodes;
    for (size_t bytes : {size_t(512) << 10, size_t(2) << 20})
      checkPlannedWithinSlackOfBest(h100, l, Coll::Bcast, bytes);
  }
  const Machine a100 = *findPreset("8xa100");
  l.nodes = 16;
  checkPlannedWithinSlackOfBest(a100, l, Coll::Reduce, size_t(8) << 20);
  checkKernelsModel("8xh100", 64, Coll::Bcast, Algo::Tree, size_t(2) << 20, 0.8, 1.1);
  checkKernelsModel("8xa100", 16, Coll::Reduce, Algo::Tree, size_t(8) << 20, 0.8, 1.1);
}

// Where the kernels link only their streaming peers, an alltoall on device
// buffers is staged through host memory: the host's exchange on the CPU
// cores and shared memory, and each rank's buffers copied over PCIe 5 (64
// GB/s) both ways; on the GPUs' links it was timed several times faster.
BOOST_AUTO_TEST_CASE(a_staged_alltoall_runs_on_the_host) {
  const Machine h100 = *findPreset("8xh100");
  Layout l;
  l.nodes = 4;
  l.ranksPerNode = h100.ranksPerNode;
  BOOST_TEST_REQUIRE(int(engineOf(h100, l, Coll::Alltoall)) == int(Engine::Host));
  const size_t block = size_t(32) << 10;
  const SimResult staged = simulateCall(h100, l, Coll::Alltoall, Algo::Pairwise, block, 1);
  const Machine host = hostViewOf(h100);
  BOOST_TEST(!host.gpu);
  BOOST_TEST(host.fabric.nicsPerNode == h100.fabric.nicsPerNode);
  // The whole fabric, whatever chorus_sim's options made of it.
  Machine fatTree = h100;
  fatTree.fabric.railOptimised = false;
  fatTree.fabric.switchLevels = 3;
  fatTree.fabric.switchHopUs = 0.5;
  const Fabric seen = hostViewOf(fatTree).fabric;
  BOOST_TEST((!seen.railOptimised && seen.switchLevels == 3 && seen.switchHopUs == 0.5 &&
              seen.net.gbPerS == h100.fabric.net.gbPerS && seen.nicsPerNode == h100.fabric.nicsPerNode));
  const SimResult onHost = simulate(host, l, recordCollective(host, l, Coll::Alltoall, Algo::Pairwise, block, 1));
  const SimResult onGpus = simulate(h100, l, recordCollective(h100, l, Coll::Alltoall, Algo::Pairwise, block, 1));
  BOOST_TEST_REQUIRE(staged.ok);
  BOOST_TEST_REQUIRE(onHost.ok);
  BOOST_TEST_REQUIRE(onGpus.ok);
  const double copiesUs = 2.0 * l.nranks() * double(block) / 64e3;
  BOOST_TEST(staged.timeUs == onHost.timeUs + copiesUs, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(staged.timeUs > 2 * onGpus.timeUs);
  const std::vector<Algo> candidates = candidatesFor(h100, l, Coll::Alltoall);
  BOOST_TEST((std::find(candidates.begin(), candidates.end(), Algo::Bruck) != candidates.end()));
  // Linked to every peer (2 nodes), the kernels run it: no staging.
  l.nodes = 2;
  BOOST_TEST(int(engineOf(h100, l, Coll::Alltoall)) == int(Engine::Kernels));
  // The host's plan knows the nodes' NICs (comm/context.cc): with the
  // measured constants the pairwise exchange was taken at 2.1-3.6x Bruck's
  // time for 512 B blocks on 4 and 16 nodes of 8 H100 or A100.
  for (const char *preset : {"8xh100", "8xa100"})
    for (int nodes : {4, 16}) {
      const Machine gpu = *findPreset(preset);
      l.nodes = nodes;
      checkPlannedWithinSlackOfBest(gpu, l, Coll::Alltoall, 512);
    }
  // With a NIC a rank, Bruck's rounds below the node's size are bound by
  // the shared-memory hops of the ranks whose partner is on their node
  // (4 x 8 H100, 4 KiB: Bruck was taken at 1.44x the pairwise exchange).
  l.nodes = 4;
  checkPlannedWithinSlackOfBest(h100, l, Coll::Alltoall, size_t(4) << 10);
}

// The host's plan on GPU nodes (CHORUS_NET_DEVICE=staged, and the staged
// alltoall): NICs that drain at once leave the one-shot's work on the
// rank's core.  Its copies and its messages' ends come one after the other
// (2 x 4 GH200, 2 MiB reduce-scatter: the one-shot was taken at 1.17x the
// ring, and at 1.10-1.16x in 11 rows of 2-4 nodes, 256 KiB-16 MiB).
BOOST_AUTO_TEST_CASE(the_one_shot_s_core_work_on_fast_nics) {
  struct Case {
    const char *preset;
    int nodes;
    Coll coll;
  };
  for (const Case &c : {Case{"4xgh200", 2, Coll::ReduceScatter}, Case{"4xgh200", 4, Coll::Allgather},
                        Case{"8xh100", 2, Coll::ReduceScatter}}) {
    const Machine host = hostViewOf(*findPreset(c.preset));
    Layout l;
    l.nodes = c.nodes;
    l.ranksPerNode = host.ranksPerNode;
    checkPlannedWithinSlackOfBest(host, l, c.coll, size_t(2) << 20);
  }
  // The rooted one-shot, slice after slice at the slowest of its root's
  // message ends, its NIC and its copies to its node's peers (2 x 4 GH200,
  // 256 KiB broadcast: the one-shot was taken at 1.41x the tree).
  const Machine gh200 = hostViewOf(*findPreset("4xgh200"));
  Layout two;
  two.nodes = 2;
  two.ranksPerNode = gh200.ranksPerNode;
  checkPlannedWithinSlackOfBest(gh200, two, Coll::Bcast, size_t(256) << 10);
}

BOOST_AUTO_TEST_SUITE_END()
