// interpose_perf: what libchorus_mpi.so itself adds to a call.
//
//   mpirun -np N env LD_PRELOAD=.../libchorus_mpi.so CHORUS_INTERPOSE=all \
//       perf/interpose_perf [-n CALLS] [-r ROUNDS]
//
// Each line times a call through its MPI_ name (taken by the interposer)
// against the call it becomes, made directly, in alternating rounds of
// CALLS calls, and prints the medians over ROUNDS rounds, per call, of both
// and of their difference (the interposer's cost):
//  - routed:   MPI_Allreduce of 1 double (to Chorus) against MPIX_Allreduce_gpu;
//  - routed:   MPI_Barrier against MPIX_Barrier_gpu;
//  - refused:  MPI_Allreduce with a user op (Chorus refuses, MPI runs it)
//              against PMPI_Allreduce with that op;
//  - and, for scale, what a per-call agreement costs (one PMPI_Allreduce
//    of an int, BAND), which jobs with GPUs pay (README, "Zero code change").
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "chorus.h"

namespace {

int rank = 0, size = 1;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// ns per call of `body`, `calls` times, started together on every rank.
double timeRound(const std::function<void()> &body, int calls) {
  PMPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < calls; ++i) body();
  double t = (MPI_Wtime() - t0) * 1e9 / calls, slowest = 0;
  PMPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

void compare(const char *what, const std::function<void()> &viaInterposer, const std::function<void()> &direct,
             int calls, int rounds) {
  std::vector<double> a, b, diff;
  timeRound(viaInterposer, calls / 10 + 1);  // warm-up (and Chorus's set-up)
  timeRound(direct, calls / 10 + 1);
  for (int r = 0; r < rounds; ++r) {
    // Alternate which goes first, so that drift does not favour one.
    double ta, tb;
    if (r % 2) {
      ta = timeRound(viaInterposer, calls);
      tb = timeRound(direct, calls);
    } else {
      tb = timeRound(direct, calls);
      ta = timeRound(viaInterposer, calls);
    }
    a.push_back(ta), b.push_back(tb), diff.push_back(ta - tb);
  }
  std::sort(diff.begin(), diff.end());
  if (rank == 0)
    printf("%-58s %9.1f %9.1f %9.1f  [%.1f, %.1f]\n", what, median(a), median(b), median(diff), diff.front(),
           diff.back());
}

void userSum(void *in, void *inout, int *len, MPI_Datatype *) {
  for (int i = 0; i < *len; ++i) static_cast<int *>(inout)[i] += static_cast<int *>(in)[i];
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int calls = 200000, rounds = 11;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-n")) calls = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "-r")) rounds = atoi(argv[i + 1]);
  }
  // Who answers MPI_Allreduce: the interposer, or MPI itself.
  Dl_info info{};
  void *sym = dlsym(RTLD_DEFAULT, "MPI_Allreduce");
  const char *owner = sym && dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "?";
  const bool interposed = strstr(owner, "chorus_mpi") != nullptr;
  const char *mode = getenv("CHORUS_INTERPOSE");
  if (rank == 0) {
    printf("# np %d, %d calls x %d rounds; MPI_Allreduce from %s; CHORUS_INTERPOSE=%s\n", size, calls, rounds, owner,
           mode ? mode : "(unset)");
    printf("# %-56s %9s %9s %9s  %s\n", "ns per call", "MPI_*", "direct", "cost", "[min, max] of the cost");
  }
  if (!interposed || !mode || strcmp(mode, "all") != 0) {
    if (rank == 0) fprintf(stderr, "interpose_perf: preload libchorus_mpi.so and set CHORUS_INTERPOSE=all\n");
    MPI_Finalize();
    return 2;
  }
  double x = rank, y = 0;
  compare(
      "routed: MPI_Allreduce(1 double) vs MPIX_Allreduce_gpu",
      [&] { MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); },
      [&] { MPIX_Allreduce_gpu(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); }, calls, rounds);
  compare(
      "routed: MPI_Barrier vs MPIX_Barrier_gpu", [&] { MPI_Barrier(MPI_COMM_WORLD); },
      [&] { MPIX_Barrier_gpu(MPI_COMM_WORLD); }, calls, rounds);
  MPI_Op op;
  MPI_Op_create(userSum, 1, &op);
  int i = rank, j = 0;
  compare(
      "refused: MPI_Allreduce(user op) vs PMPI_Allreduce",
      [&] { MPI_Allreduce(&i, &j, 1, MPI_INT, op, MPI_COMM_WORLD); },
      [&] { PMPI_Allreduce(&i, &j, 1, MPI_INT, op, MPI_COMM_WORLD); }, calls / 4, rounds);
  MPI_Op_free(&op);
  int flag = 7, agreed = 0;
  compare(
      "scale: agreement (PMPI_Allreduce 1 int BAND) vs nothing",
      [&] { PMPI_Allreduce(&flag, &agreed, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD); }, [] {}, calls / 4, rounds);
  MPI_Finalize();
  return 0;
}
