// A rank killed in the middle of a run of collectives (SIGKILL: no handler,
// no goodbye): every survivor must get an error, not a hang, within
// CHORUS_TIMEOUT plus a margin, naming a rank; a survivor that waited on the
// dead rank itself must name it.  Run by kill-*.test under several node
// layouts, so the dead rank is reached over UCX (its endpoint fails) or
// shared memory (the timeout fires).  MPI cannot be trusted after a rank
// died, so there is no Boost.Test here: each survivor prints one PASS or
// FAIL line, waits until every survivor has had the time to print its own
// (mpirun ends the whole job when the first rank leaves), then aborts; the
// script counts the lines.
//
// Built with KILL_ON_DEVICE (tests/gpu: test_kill_gpu), the allreduces run
// on device buffers: across nodes the kernels' links to the dead rank go
// through the device proxy (transport/ucx/ucx_proxy.h), which must see the
// death and stop the kernels.
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "chorus.h"
#include "rank_test.h"
#ifdef KILL_ON_DEVICE
#include "../gpu/gpu_test_env.h"
#endif

int main(int argc, char **argv) {
  int rank = 0, size = 1;
  initRanks(&argc, &argv, &rank, &size);
#ifdef KILL_ON_DEVICE
  // A GPU per rank (shared round robin), or the whole run skips
  // ("skipped: no GPU", which run-kill.sh reads).
  int device = 0, ndevices = 0;
  if (!selectGpuOrSkip(&device, &ndevices)) return 77;
#endif
  MPI_Comm c = dupReturningErrors();
  const char *t = std::getenv("CHORUS_TIMEOUT");
  const double timeout = t ? std::atof(t) : 300;
  // CHORUS_TEST_VICTIM=none: nobody dies (the job run-kill.sh starts right
  // after a killed one, which must work and end in MPI_Finalize).
  const char *v = std::getenv("CHORUS_TEST_VICTIM");
  const int victim = v && std::string(v) == "none" ? -1 : size - 1;
  // run-kill.sh looks for each rank's segments and trace file by pid.
  printf("START rank %d pid %d\n", rank, int(getpid()));
  fflush(stdout);
  // Set where every survivor shares the victim's machine: the death must be
  // seen within this many seconds (its pid is watched), and named.
  const char *w = std::getenv("CHORUS_TEST_DEATH_WITHIN");
  const double within = w ? std::atof(w) : 0;
  // Set across nodes: every survivor, wherever it waits, must fail within
  // this many seconds (long before CHORUS_TIMEOUT) with an error naming the
  // dead rank: the first rank to see the death tells the others.
  const char *n = std::getenv("CHORUS_TEST_NAMED_WITHIN");
  const double namedWithin = n ? std::atof(n) : 0;
  std::vector<double> in(1 << 16, 1.0), out(in.size());
  double *sendbuf = in.data(), *recvbuf = out.data();
#ifdef KILL_ON_DEVICE
  if (cudaMalloc(&sendbuf, in.size() * sizeof(double)) != cudaSuccess ||
      cudaMalloc(&recvbuf, in.size() * sizeof(double)) != cudaSuccess ||
      cudaMemcpy(sendbuf, in.data(), in.size() * sizeof(double), cudaMemcpyHostToDevice) != cudaSuccess) {
    printf("FAIL rank %d: no device buffers\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
#endif
  double killedAt = 0;
  // Every survivor's result is printed by then: leave (taking the job down).
  auto leave = [&](int code) {
    fflush(stdout);
    while (MPI_Wtime() < killedAt + (within > 0 ? within : namedWithin > 0 ? namedWithin : timeout) + 8) usleep(100000);
    MPI_Abort(MPI_COMM_SELF, code);
  };
  for (int round = 0; round < 10; ++round) {
    if (round == 5 && victim >= 0) {
      // Every rank has its fifth result first.  A call returns once its
      // part is done here, its last messages possibly still on their way
      // (the progress thread, or the device proxy, finishes them), so a
      // victim that died at once could fail the survivors' fifth call
      // (seen once on the emulated GPUs, the machine busy).
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == victim) raise(SIGKILL);
      killedAt = MPI_Wtime();
    }
    const double t0 = MPI_Wtime();
    const int rc = MPIX_Allreduce_gpu(sendbuf, recvbuf, MPI_Count(in.size()), MPI_DOUBLE, MPI_SUM, c);
    const double waited = MPI_Wtime() - t0;
#ifdef KILL_ON_DEVICE
    if (rc == MPI_SUCCESS) cudaMemcpy(out.data(), recvbuf, out.size() * sizeof(double), cudaMemcpyDeviceToHost);
#endif
    if (rc == MPI_SUCCESS) {
      if (round >= 5 && victim >= 0) {
        printf("FAIL rank %d: allreduce %d succeeded although rank %d is dead\n", rank, round, victim);
        leave(1);
      }
      if (out[0] != double(size)) {
        printf("FAIL rank %d: allreduce %d gave %g, want %d\n", rank, round, out[0], size);
        leave(1);
      }
      continue;
    }
    const std::string text = errorText(rc);
    const std::string dead = "rank " + std::to_string(victim) + " (pid ";
    const bool namesRank = within > 0        ? contains(text, dead) && contains(text, "died")
                           : namedWithin > 0 ? contains(text, "rank " + std::to_string(victim))
                                             : contains(text, "rank ");
    const bool inTime = within > 0 ? waited < within : namedWithin > 0 ? waited < namedWithin : waited < timeout + 10;
    const bool ok = round == 5 && namesRank && inTime;
    printf("%s rank %d: allreduce %d failed after %.1f s: %s\n", ok ? "PASS" : "FAIL", rank, round, waited,
           text.c_str());
    leave(ok ? 0 : 1);
  }
  if (victim < 0) {
    printf("PASS rank %d: 10 allreduces correct\n", rank);
    MPI_Comm_free(&c);
    MPI_Finalize();
    return 0;
  }
  printf("FAIL rank %d: no error in 10 allreduces\n", rank);
  leave(1);
}
