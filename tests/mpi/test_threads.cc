// MPI_THREAD_MULTIPLE: several threads per rank, each on its own duplicate
// of MPI_COMM_WORLD, run Chorus collectives at the same time (blocking, and
// nonblocking ones queued behind each other), each result checked bitwise
// against MPI's own collective on the same communicator and data.  The
// contexts of the threads' communicators are also set up concurrently (the
// first collective of each), which exercises the lazy set-up, the lookup
// cache, the type cache and the logging from several threads.
//
//   test_threads [THREADS] [ITERATIONS]     (defaults 3 and 40)
//
// One PASS or FAIL line per rank.
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "chorus.h"
#include "rank_test.h"

namespace {

int g_rank = 0, g_size = 1;

template <class T>
std::vector<T> inputs(size_t n, int salt) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = T(int((i * 11 + size_t(g_rank) * 17 + size_t(salt) * 3) % 89) - 44);
  return v;
}

template <class T>
bool same(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() && memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// One thread's work on its communicator; returns "" or what went wrong.
std::string work(MPI_Comm comm, int thread, int iterations) {
  const size_t p = size_t(g_size);
  for (int it = 0; it < iterations; ++it) {
    const size_t n = size_t(1 + (it * 397 + thread * 131) % 3000);
    const int salt = it * 8 + thread, root = (it + thread) % g_size;
    const std::string at = " (thread " + std::to_string(thread) + ", iteration " + std::to_string(it) + ", count " +
                           std::to_string(n) + ")";
    int rc = MPI_SUCCESS;
    switch (it % 6) {
      case 0: {
        std::vector<int> in = inputs<int>(n, salt), c(n, -1), m(n, -2);
        rc = MPIX_Allreduce_gpu(in.data(), c.data(), MPI_Count(n), MPI_INT, MPI_SUM, comm);
        MPI_Allreduce(in.data(), m.data(), int(n), MPI_INT, MPI_SUM, comm);
        if (rc == MPI_SUCCESS && !same(c, m)) return "allreduce differs from MPI's" + at;
        break;
      }
      case 1: {
        std::vector<double> c = inputs<double>(n, salt), m = c;
        rc = MPIX_Bcast_gpu(c.data(), MPI_Count(n), MPI_DOUBLE, root, comm);
        MPI_Bcast(m.data(), int(n), MPI_DOUBLE, root, comm);
        if (rc == MPI_SUCCESS && !same(c, m)) return "bcast differs from MPI's" + at;
        break;
      }
      case 2: {
        std::vector<float> in = inputs<float>(n, salt), c(n * p, -1), m(n * p, -2);
        rc = MPIX_Allgather_gpu(in.data(), MPI_Count(n), MPI_FLOAT, c.data(), MPI_Count(n), MPI_FLOAT, comm);
        MPI_Allgather(in.data(), int(n), MPI_FLOAT, m.data(), int(n), MPI_FLOAT, comm);
        if (rc == MPI_SUCCESS && !same(c, m)) return "allgather differs from MPI's" + at;
        break;
      }
      case 3: {
        std::vector<long> in = inputs<long>(n * p, salt), c(n * p, -1), m(n * p, -2);
        rc = MPIX_Alltoall_gpu(in.data(), MPI_Count(n), MPI_LONG, c.data(), MPI_Count(n), MPI_LONG, comm);
        MPI_Alltoall(in.data(), int(n), MPI_LONG, m.data(), int(n), MPI_LONG, comm);
        if (rc == MPI_SUCCESS && !same(c, m)) return "alltoall differs from MPI's" + at;
        break;
      }
      case 4: {
        std::vector<int> in = inputs<int>(n * p, salt), c(n, -1), m(n, -2), rin = inputs<int>(n, salt + 1),
                         rc2(n, -1), rm(n, -2);
        rc = MPIX_Reduce_scatter_block_gpu(in.data(), c.data(), MPI_Count(n), MPI_INT, MPI_SUM, comm);
        if (rc == MPI_SUCCESS) rc = MPIX_Reduce_gpu(rin.data(), rc2.data(), MPI_Count(n), MPI_INT, MPI_MIN, root, comm);
        if (rc == MPI_SUCCESS) rc = MPIX_Barrier_gpu(comm);
        MPI_Reduce_scatter_block(in.data(), m.data(), int(n), MPI_INT, MPI_SUM, comm);
        MPI_Reduce(rin.data(), rm.data(), int(n), MPI_INT, MPI_MIN, root, comm);
        if (rc == MPI_SUCCESS && !same(c, m)) return "reduce_scatter_block differs from MPI's" + at;
        if (rc == MPI_SUCCESS && g_rank == root && !same(rc2, rm)) return "reduce differs from MPI's" + at;
        break;
      }
      case 5: {  // three nonblocking ones queued on this thread's communicator
        std::vector<int> a = inputs<int>(n, salt), ac(n, -1), am(n, -2);
        std::vector<double> b = inputs<double>(n, salt + 1), bc(n * p, -1), bm(n * p, -2);
        MPI_Request q[3];
        rc = MPIX_Iallreduce_gpu(a.data(), ac.data(), MPI_Count(n), MPI_INT, MPI_MAX, comm, &q[0]);
        if (rc == MPI_SUCCESS)
          rc = MPIX_Iallgather_gpu(b.data(), MPI_Count(n), MPI_DOUBLE, bc.data(), MPI_Count(n), MPI_DOUBLE, comm, &q[1]);
        if (rc == MPI_SUCCESS) rc = MPIX_Ibarrier_gpu(comm, &q[2]);
        if (rc == MPI_SUCCESS) rc = MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
        MPI_Allreduce(a.data(), am.data(), int(n), MPI_INT, MPI_MAX, comm);
        MPI_Allgather(b.data(), int(n), MPI_DOUBLE, bm.data(), int(n), MPI_DOUBLE, comm);
        if (rc == MPI_SUCCESS && !same(ac, am)) return "Iallreduce differs from MPI's" + at;
        if (rc == MPI_SUCCESS && !same(bc, bm)) return "Iallgather differs from MPI's" + at;
        break;
      }
    }
    if (rc != MPI_SUCCESS) return "a collective failed" + at + ": " + errorText(rc);
  }
  return "";
}

}  // namespace

int main(int argc, char **argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (provided != MPI_THREAD_MULTIPLE) {
    if (g_rank == 0) printf("skipped: MPI_THREAD_MULTIPLE not provided (level %d)\n", provided);
    MPI_Finalize();
    return 0;
  }
  const int nthreads = argc > 1 ? atoi(argv[1]) : 3, iterations = argc > 2 ? atoi(argv[2]) : 40;
  std::vector<MPI_Comm> comms(static_cast<size_t>(nthreads));
  for (MPI_Comm &comm : comms) {  // in the main thread: MPI_Comm_dup in the same order on every rank
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  }
  std::vector<std::string> failures(static_cast<size_t>(nthreads));
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t)
    threads.emplace_back([&, t] { failures[size_t(t)] = work(comms[size_t(t)], t, iterations); });
  for (std::thread &t : threads) t.join();
  std::string failure;
  for (const std::string &f : failures)
    if (failure.empty()) failure = f;
  int bad = !failure.empty(), anyBad = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (bad) printf("FAIL rank %d: %s\n", g_rank, failure.c_str());
  else printf("PASS rank %d: %d threads x %d iterations%s\n", g_rank, nthreads, iterations,
              anyBad ? " (another rank failed)" : "");
  for (MPI_Comm &comm : comms) MPI_Comm_free(&comm);
  MPI_Finalize();
  return anyBad ? 1 : 0;
}
