// Every Chorus collective against MPI's own on the same inputs: datatype x op
// x count x in-place x root, on MPI_COMM_WORLD and on sub-communicators.  The
// test script runs this binary at several rank counts and with CHORUS_ALGO
// forced to each algorithm.
#define BOOST_TEST_MODULE chorus_mpi_collectives
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <utility>

#include "harness.h"

using namespace chorus_test;

namespace {

// The matrix is tiered to keep one run near a minute at 8 ranks on 2 cores:
//  1. every valid (type, op) pair once, count, in-place and root rotating;
//  2. every small count for one pair per element size (in-place and root
//     rotating);
//  3. counts straddling one and (whole-vector collectives) nranks FIFO slots,
//     and 1 MiB, for a few pairs;
//  4. one 64 MiB float case (CHORUS_TEST_HUGE_MB changes the size, 0 skips).
// C types that alias a fixed-width one (MPI_INT, MPI_LONG...) get SUM (size
// mapping) and MIN (signedness) only.  Every other predefined type (pairs,
// booleans, complex, MPI_LONG_DOUBLE, Fortran's...) goes through tier 1 with
// every op Chorus takes on it; tier 3 adds one of each layout class.
const size_t kTier1Counts[] = {1, 13, 1021, 7};
const std::pair<const char *, const char *> kTier2Reductions[] = {
    {"MPI_INT8_T", "MPI_SUM"}, {"MPIX_GPU_FLOAT16", "MPI_SUM"},
    {"MPI_FLOAT", "MPI_SUM"},  {"MPI_INT64_T", "MPI_MAX"},
};
const char *const kTier2CopyTypes[] = {"MPI_BYTE", "MPI_INT16_T", "MPI_FLOAT", "MPI_DOUBLE"};
// Tier 3 also takes one type of each layout class across the boundaries: a
// 16-byte pair (staged, gaps kept), a pair with a hole between its fields,
// an 8-byte pair without gaps, and a wide copy-only type with gaps.
const std::pair<const char *, const char *> kTier3Reductions[] = {
    {"MPI_INT8_T", "MPI_SUM"},          {"MPIX_GPU_BFLOAT16", "MPIX_GPU_AVG"}, {"MPI_DOUBLE", "MPI_MAX"},
    {"MPI_DOUBLE_INT", "MPI_MINLOC"},   {"MPI_SHORT_INT", "MPI_MAXLOC"},      {"MPI_2REAL", "MPI_MINLOC"},
};
const char *const kTier3CopyTypes[] = {"MPI_BYTE", "MPI_FLOAT", "MPI_DOUBLE", "MPI_LONG_DOUBLE_INT",
                                       "MPI_C_DOUBLE_COMPLEX"};

size_t hugeBytes() {
  const char *s = std::getenv("CHORUS_TEST_HUGE_MB");
  return static_cast<size_t>(s && *s ? std::atol(s) : 64) << 20;
}

bool isAliasType(const TypeDesc &t) {
  const std::string n = t.name;
  return n.find("_T") == std::string::npos && (t.kind == Kind::SignedInt || t.kind == Kind::UnsignedInt);
}
bool aliasOp(const OpDesc &op) {
  const std::string n = op.name;
  return n == "MPI_SUM" || n == "MPI_MIN";
}

double now() { return MPI_Wtime(); }

void printTime(const Checker &ck, const char *what, double t0) {
  if (ck.rank() == 0) {
    std::printf("  %-22s %6ld cases  %7.2f s\n", what, ck.casesRun(), now() - t0);
    std::fflush(stdout);
  }
}

std::vector<int> rootsFor(Coll coll, int nranks) {
  return (coll == Coll::Reduce || coll == Coll::Bcast) ? testRoots(nranks) : std::vector<int>{0};
}

// In-place variants MPI defines (bcast has none).
std::vector<bool> inPlaceFor(Coll coll) {
  return coll == Coll::Bcast ? std::vector<bool>{false} : std::vector<bool>{false, true};
}

// The world-communicator matrix of one collective.
void fullMatrix(Coll coll) {
  Checker ck(MPI_COMM_WORLD, "world");
  const double t0 = now();
  const int n = ck.size();
  const std::vector<int> roots = rootsFor(coll, n);
  const std::vector<bool> inPlaces = inPlaceFor(coll);
  size_t k = 0;  // rotation
  auto run = [&](const TypeDesc &t, const OpDesc *op, size_t count, bool inPlace) {
    ck.run({coll, &t, op, count, inPlace, roots[(k / 2) % roots.size()]});
    ++k;
  };
  auto tier1 = [&](const TypeDesc &t, const OpDesc *op) {
    run(t, op, kTier1Counts[k % std::size(kTier1Counts)], inPlaces[(k / 4) % inPlaces.size()]);
  };
  auto tier2 = [&](const TypeDesc &t, const OpDesc *op) {
    for (size_t count : smallCounts()) run(t, op, count, inPlaces[(k / 3) % inPlaces.size()]);
  };
  auto tier3 = [&](const TypeDesc &t, const OpDesc *op) {
    for (size_t count : boundaryCounts(coll, t, n)) run(t, op, count, inPlaces[k % inPlaces.size()]);
  };

  if (isReduction(coll)) {
    for (const TypeDesc &t : allTypes())
      for (const OpDesc &op : allOps())
        if (opValidFor(op, t) && (!isAliasType(t) || aliasOp(op))) tier1(t, &op);
    for (const auto &p : kTier2Reductions) tier2(typeByName(p.first), &opByName(p.second));
    for (const auto &p : kTier3Reductions) tier3(typeByName(p.first), &opByName(p.second));
  } else {
    for (const TypeDesc &t : allTypes()) tier1(t, nullptr);
    for (const char *name : kTier2CopyTypes) tier2(typeByName(name), nullptr);
    for (const char *name : kTier3CopyTypes) tier3(typeByName(name), nullptr);
  }
  printTime(ck, collName(coll), t0);

  // One huge case (whole buffer; per-rank blocks for the block collectives).
  const size_t huge = hugeBytes();
  if (huge == 0) return;
  const double t1 = now();
  const TypeDesc &f = typeByName("MPI_FLOAT");
  const bool blocks = isBlockColl(coll);
  const size_t count = huge / f.size / (blocks ? static_cast<size_t>(n) : 1);
  ck.run({coll, &f, isReduction(coll) ? &opByName("MPI_SUM") : nullptr, count, false, n - 1, true});
  printTime(ck, "  + huge", t1);
}

// A smaller matrix, for the sub-communicator cases.
std::vector<Case> subsetCases(int nranks) {
  static const std::pair<const char *, const char *> kRed[] = {
      {"MPI_INT32_T", "MPI_SUM"}, {"MPIX_GPU_FLOAT16", "MPI_SUM"},
      {"MPI_UINT8_T", "MPI_BXOR"}, {"MPI_FLOAT", "MPIX_GPU_AVG"},
  };
  static const char *const kCopy[] = {"MPIX_GPU_FP8_E5M2", "MPI_DOUBLE"};
  std::vector<Case> cases;
  size_t k = 0;  // in-place and root rotate
  auto add = [&](Coll coll, const TypeDesc &t, const OpDesc *op) {
    const std::vector<bool> inPlaces = inPlaceFor(coll);
    const std::vector<int> roots = rootsFor(coll, nranks);
    for (size_t count : {size_t{7}, size_t{1021}, slotBytes() / t.size + 1}) {
      cases.push_back({coll, &t, op, count, inPlaces[k % inPlaces.size()], roots[(k / 2) % roots.size()]});
      ++k;
    }
  };
  for (Coll coll : {Coll::Allreduce, Coll::Reduce, Coll::ReduceScatterBlock})
    for (const auto &p : kRed) add(coll, typeByName(p.first), &opByName(p.second));
  for (Coll coll : {Coll::Bcast, Coll::Allgather, Coll::Alltoall})
    for (const char *name : kCopy) add(coll, typeByName(name), nullptr);
  return cases;
}

void runSubset(MPI_Comm comm, const std::string &name) {
  Checker ck(comm, name);
  const double t0 = now();
  for (const Case &c : subsetCases(ck.size())) ck.run(c);
  BOOST_CHECK_EQUAL(MPIX_Barrier_gpu(comm), MPI_SUCCESS);
  int worldRank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  if (worldRank == 0) {
    std::printf("  %-22s %6ld cases  %7.2f s\n", name.c_str(), ck.casesRun(), now() - t0);
    std::fflush(stdout);
  }
}

int worldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int worldSize() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(world)

BOOST_AUTO_TEST_CASE(allreduce) { fullMatrix(Coll::Allreduce); }
BOOST_AUTO_TEST_CASE(reduce) { fullMatrix(Coll::Reduce); }
BOOST_AUTO_TEST_CASE(bcast) { fullMatrix(Coll::Bcast); }
BOOST_AUTO_TEST_CASE(allgather) { fullMatrix(Coll::Allgather); }
BOOST_AUTO_TEST_CASE(reduce_scatter_block) { fullMatrix(Coll::ReduceScatterBlock); }
BOOST_AUTO_TEST_CASE(alltoall) { fullMatrix(Coll::Alltoall); }

BOOST_AUTO_TEST_CASE(barrier) {
  for (int i = 0; i < 200; ++i) BOOST_REQUIRE_EQUAL(MPIX_Barrier_gpu(MPI_COMM_WORLD), MPI_SUCCESS);
  // No rank leaves before the late one arrives.
  for (int late : testRoots(worldSize())) {
    BOOST_REQUIRE_EQUAL(MPIX_Barrier_gpu(MPI_COMM_WORLD), MPI_SUCCESS);
    const double t0 = now();
    if (worldRank() == late) usleep(300 * 1000);
    BOOST_REQUIRE_EQUAL(MPIX_Barrier_gpu(MPI_COMM_WORLD), MPI_SUCCESS);
    const double waited = now() - t0;
    if (worldRank() != late)
      BOOST_CHECK_MESSAGE(waited > 0.15, "rank " << worldRank() << " left the barrier after " << waited
                                                 << " s while rank " << late << " slept 0.3 s before it");
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(subcomm)

BOOST_AUTO_TEST_CASE(split_even_odd) {
  MPI_Comm c;
  BOOST_REQUIRE_EQUAL(MPI_Comm_split(MPI_COMM_WORLD, worldRank() % 2, worldRank(), &c), MPI_SUCCESS);
  runSubset(c, worldRank() % 2 ? "odd" : "even");
  MPI_Comm_free(&c);
}

BOOST_AUTO_TEST_CASE(reversed) {
  MPI_Comm c;
  BOOST_REQUIRE_EQUAL(MPI_Comm_split(MPI_COMM_WORLD, 0, worldSize() - 1 - worldRank(), &c), MPI_SUCCESS);
  runSubset(c, "reversed");
  MPI_Comm_free(&c);
}

BOOST_AUTO_TEST_CASE(dup) {
  MPI_Comm c;
  BOOST_REQUIRE_EQUAL(MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_SUCCESS);
  runSubset(c, "dup");
  MPI_Comm_free(&c);
}

BOOST_AUTO_TEST_CASE(self) { runSubset(MPI_COMM_SELF, "self"); }

// Two live communicators over the same ranks, used call by call in turn.
BOOST_AUTO_TEST_CASE(alternating) {
  MPI_Comm a, b;
  BOOST_REQUIRE_EQUAL(MPI_Comm_dup(MPI_COMM_WORLD, &a), MPI_SUCCESS);
  BOOST_REQUIRE_EQUAL(MPI_Comm_split(MPI_COMM_WORLD, 0, worldSize() - 1 - worldRank(), &b), MPI_SUCCESS);
  Checker ca(a, "alt-dup"), cb(b, "alt-reversed");
  for (const Case &c : subsetCases(worldSize())) {
    ca.run(c);
    cb.run(c);
  }
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
}

// MPIX_Comm_gpu_init/free explicitly; after free the next call sets up again.
BOOST_AUTO_TEST_CASE(explicit_init_free) {
  MPI_Comm c;
  BOOST_REQUIRE_EQUAL(MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_SUCCESS);
  int rc = MPIX_Comm_gpu_init(c, MPI_INFO_NULL);
  BOOST_REQUIRE_MESSAGE(rc == MPI_SUCCESS, "MPIX_Comm_gpu_init: " << errorString(rc));
  runSubset(c, "init-ed");
  rc = MPIX_Comm_gpu_free(c);
  BOOST_CHECK_MESSAGE(rc == MPI_SUCCESS, "MPIX_Comm_gpu_free: " << errorString(rc));
  runSubset(c, "after-gpu-free");
  rc = MPIX_Comm_gpu_free(c);
  BOOST_CHECK_MESSAGE(rc == MPI_SUCCESS, "second MPIX_Comm_gpu_free: " << errorString(rc));
  MPI_Comm_free(&c);

  rc = MPIX_Comm_gpu_init(MPI_COMM_SELF, MPI_INFO_NULL);
  BOOST_CHECK_MESSAGE(rc == MPI_SUCCESS, "MPIX_Comm_gpu_init(MPI_COMM_SELF): " << errorString(rc));
}

// Creating and freeing communicators in a loop must not leak descriptors or
// shared-memory mappings.
BOOST_AUTO_TEST_CASE(create_free_loop) {
  const TypeDesc &t = typeByName("MPI_INT32_T");
  const OpDesc &sum = opByName("MPI_SUM");
  auto oneRound = [&](int i) {
    MPI_Comm c;
    if (i % 2)
      MPI_Comm_dup(MPI_COMM_WORLD, &c);
    else
      MPI_Comm_split(MPI_COMM_WORLD, 0, worldSize() - 1 - worldRank(), &c);
    Checker ck(c, "loop-" + std::to_string(i));
    ck.run({Coll::Allreduce, &t, &sum, 1021, false, 0});
    if (i % 3 == 0) ck.run({Coll::Allgather, &t, nullptr, 13, false, 0});
    if (i % 5 == 0) BOOST_CHECK_EQUAL(MPIX_Comm_gpu_free(c), MPI_SUCCESS);
    MPI_Comm_free(&c);
  };
  oneRound(0);  // warm-up: lazily created global state
  oneRound(1);
  const int fds = openFdCount(), maps = shmMappingCount();
  const double t0 = now();
  for (int i = 0; i < 50; ++i) oneRound(i);
  BOOST_CHECK_MESSAGE(openFdCount() <= fds + 2,
                      "rank " << worldRank() << ": open fds grew from " << fds << " to " << openFdCount());
  BOOST_CHECK_MESSAGE(shmMappingCount() <= maps + 2, "rank " << worldRank() << ": /dev/shm mappings grew from "
                                                             << maps << " to " << shmMappingCount());
  if (worldRank() == 0) std::printf("  %-22s %6d rounds  %7.2f s\n", "create_free_loop", 50, now() - t0);
}

BOOST_AUTO_TEST_SUITE_END()
