// Shared memory that does not grow by a full FIFO per peer.  Run at 32
// ranks on one node (memory-np32.test, default FIFO settings): a small
// workload touches every algorithm (tree, ring and publish allreduce, chain
// reduce, broadcast, allgather, reduce-scatter, pairwise alltoall in
// several slices of the small FIFOs, barrier) on the world and on two
// halves of it (16 ranks: the one-shot algorithms, sliced too), each result
// compared with MPI's own collective on the same inputs; then each rank's
// shm segment must be exactly the size worked out here from the FIFO layout
// (written independently of bulk_links.h) and at most 8 MiB.
//
// The segment size comes from the library's context (linked from the
// internal library, like the unit tests): a count of bytes, not a timing.
// No Boost.Test: one PASS or FAIL line per check from rank 0, exit status 1
// on any failure.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "chorus.h"
#include "comm/context.h"
#include "rank_test.h"

namespace {

int g_failures = 0;

// Every rank's verdict, reported once by rank 0.
void expect(MPI_Comm comm, bool ok, const char *what, long long detail = 0) {
  int mine = ok, all = 0, rank = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  MPI_Comm_rank(comm, &rank);
  if (!all) ++g_failures;
  if (rank == 0) std::printf("%s: %s (%lld)\n", all ? "PASS" : "FAIL", what, detail);
  if (!ok) std::printf("  rank %d failed: %s (%lld)\n", rank, what, detail);
}

std::vector<int> inputs(size_t n, int rank, int salt) {
  std::vector<int> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = int((size_t(rank) * 7919 + i * 31 + size_t(salt)) % 1000) - 500;
  return v;
}

void collectives(MPI_Comm comm, const char *name) {
  int rank = 0, n = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  char what[160];
  // Integer sums are exact in any fold order: results must match bitwise.
  for (size_t count : {size_t(1000), size_t(12000), size_t(300000)}) {
    const std::vector<int> in = inputs(count, rank, 1);
    std::vector<int> got(count, -1), want(count, -2);
    const int rc = MPIX_Allreduce_gpu(in.data(), got.data(), MPI_Count(count), MPI_INT, MPI_SUM, comm);
    MPI_Allreduce(in.data(), want.data(), int(count), MPI_INT, MPI_SUM, comm);
    std::snprintf(what, sizeof what, "%s: allreduce of %zu ints equals MPI_Allreduce", name, count);
    expect(comm, rc == MPI_SUCCESS && got == want, what, (long long)count);
  }
  {
    const size_t count = 20000;
    const int root = 3 % n;
    const std::vector<int> in = inputs(count, rank, 2);
    std::vector<int> got(count, -1), want(count, -2);
    const int rc = MPIX_Reduce_gpu(in.data(), got.data(), MPI_Count(count), MPI_INT, MPI_SUM, root, comm);
    MPI_Reduce(in.data(), want.data(), int(count), MPI_INT, MPI_SUM, root, comm);
    std::snprintf(what, sizeof what, "%s: reduce of %zu ints to rank %d equals MPI_Reduce", name, count, root);
    expect(comm, rc == MPI_SUCCESS && (rank != root || got == want), what, (long long)count);
  }
  for (size_t count : {size_t(1000), size_t(300000)}) {
    const int root = 1 % n;
    std::vector<int> got = inputs(count, rank, 3), want = got;
    const int rc = MPIX_Bcast_gpu(got.data(), MPI_Count(count), MPI_INT, root, comm);
    MPI_Bcast(want.data(), int(count), MPI_INT, root, comm);
    std::snprintf(what, sizeof what, "%s: bcast of %zu ints equals MPI_Bcast", name, count);
    expect(comm, rc == MPI_SUCCESS && got == want, what, (long long)count);
  }
  {
    const size_t block = 5000;
    const std::vector<int> in = inputs(block, rank, 4);
    std::vector<int> got(block * size_t(n), -1), want(block * size_t(n), -2);
    const int rc = MPIX_Allgather_gpu(in.data(), MPI_Count(block), MPI_INT, got.data(), MPI_Count(block), MPI_INT, comm);
    MPI_Allgather(in.data(), int(block), MPI_INT, want.data(), int(block), MPI_INT, comm);
    std::snprintf(what, sizeof what, "%s: allgather of %zu ints per rank equals MPI_Allgather", name, block);
    expect(comm, rc == MPI_SUCCESS && got == want, what, (long long)block);
  }
  {
    const size_t block = 5000;
    const std::vector<int> in = inputs(block * size_t(n), rank, 5);
    std::vector<int> got(block, -1), want(block, -2);
    const int rc = MPIX_Reduce_scatter_block_gpu(in.data(), got.data(), MPI_Count(block), MPI_INT, MPI_SUM, comm);
    MPI_Reduce_scatter_block(in.data(), want.data(), int(block), MPI_INT, MPI_SUM, comm);
    std::snprintf(what, sizeof what, "%s: reduce-scatter of %zu ints per rank equals MPI_Reduce_scatter_block", name,
                  block);
    expect(comm, rc == MPI_SUCCESS && got == want, what, (long long)block);
  }
  {
    // 40 000 bytes per block: three slices of the small FIFOs' 16 KiB slots.
    const size_t block = 10000;
    const std::vector<int> in = inputs(block * size_t(n), rank, 6);
    std::vector<int> got(block * size_t(n), -1), want(block * size_t(n), -2);
    const int rc = MPIX_Alltoall_gpu(in.data(), MPI_Count(block), MPI_INT, got.data(), MPI_Count(block), MPI_INT, comm);
    MPI_Alltoall(in.data(), int(block), MPI_INT, want.data(), int(block), MPI_INT, comm);
    std::snprintf(what, sizeof what, "%s: alltoall of %zu ints per block equals MPI_Alltoall", name, block);
    expect(comm, rc == MPI_SUCCESS && got == want, what, (long long)block);
  }
  std::snprintf(what, sizeof what, "%s: barrier", name);
  expect(comm, MPIX_Barrier_gpu(comm) == MPI_SUCCESS, what);
}

// The FIFO layout of transport/fifo.h with the default settings: a 256-byte
// header (tail and head counters on 128-byte lines), 64 inline slots of 512
// bytes, then the slots.  Full FIFOs: CHORUS_SHM_SLOTS x
// CHORUS_SHM_SLOT_SIZE = 4 x 256 KiB; small ones: 2 x 16 KiB.
constexpr long long kFifoFixed = 256 + 64 * 512;
constexpr long long kFullFifo = kFifoFixed + 4 * 262144;
constexpr long long kSmallFifo = kFifoFixed + 2 * 16384;

// Whether rank r of an n-rank single-node communicator receives bulk data
// from p: the ring's previous rank, and its parent and children in both
// trees of the double binary tree (tree 1 is tree 0 on mirrored ranks).
bool receivesBulk(int r, int p, int n) {
  if (p == (r + n - 1) % n) return true;
  for (int mirrored = 0; mirrored < 2; ++mirrored) {
    auto flip = [&](int x) { return mirrored ? n - 1 - x : x; };
    const int pos = flip(r), q = flip(p);
    if (pos > 0 && q == (pos - 1) / 2) return true;
    if (q == 2 * pos + 1 || q == 2 * pos + 2) return true;
  }
  return false;
}

// One node: the rank's status line (128 bytes), the publish ring, then one FIFO per peer.
long long expectedSegmentBytes(int r, int n) {
  long long bytes = 128 + kFullFifo;
  for (int p = 0; p < n; ++p)
    if (p != r) bytes += receivesBulk(r, p, n) ? kFullFifo : kSmallFifo;
  return bytes;
}

void checkMemory(MPI_Comm comm, const char *name) {
  int rank = 0, n = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  const chorus::Context *ctx = chorus::contextFind(comm);
  const long long bytes = ctx ? (long long)ctx->shmSegmentBytes : -1;
  const long long expected = expectedSegmentBytes(rank, n);
  char what[160];
  std::snprintf(what, sizeof what, "%s: shm segment of every rank is the publish ring + full FIFOs from its ring "
                "and tree neighbours + small FIFOs from the rest", name);
  expect(comm, bytes == expected, what, bytes);
  long long most = 0, total = 0;
  MPI_Allreduce(&bytes, &most, 1, MPI_LONG_LONG, MPI_MAX, comm);
  MPI_Allreduce(&bytes, &total, 1, MPI_LONG_LONG, MPI_SUM, comm);
  std::snprintf(what, sizeof what, "%s: at most 8 MiB of shared memory per rank (largest, bytes)", name);
  expect(comm, bytes > 0 && bytes <= 8ll * 1024 * 1024, what, most);
  if (rank == 0)
    std::printf("%s: %d ranks, shm segments %.2f MiB per rank at most, %.1f MiB in all\n", name, n,
                most / 1048576.0, total / 1048576.0);
}

}  // namespace

int main(int argc, char **argv) {
  int rank = 0, size = 1;
  initRanks(&argc, &argv, &rank, &size);
  if (std::getenv("CHORUS_SHM_SLOTS") || std::getenv("CHORUS_SHM_SLOT_SIZE") || std::getenv("CHORUS_HOSTID")) {
    if (rank == 0) std::printf("FAIL: run with the default FIFO settings on one node\n");
    MPI_Finalize();
    return 1;
  }
  collectives(MPI_COMM_WORLD, "world");
  checkMemory(MPI_COMM_WORLD, "world");
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  const char *halfName = rank % 2 ? "odd ranks" : "even ranks";
  collectives(half, halfName);
  checkMemory(half, halfName);
  MPI_Comm_free(&half);
  MPI_Finalize();
  return g_failures ? 1 : 0;
}
