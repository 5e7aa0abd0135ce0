// GPU tier: communicators set up and freed in a loop while another
// communicator's kernel waits for a peer (issue 29, item 3).
//
// Each round a fresh communicator A (a dup of the world) runs one allreduce
// on device buffers, which sets up its CUDA state, and is freed.  Around
// that free, one rank (a different one each round: both orders on two
// ranks) has already enqueued an allreduce on the long-lived communicator
// W, whose kernel waits for the other ranks' half; the others free A,
// meet that rank in an MPI barrier, and only then enqueue their half.  A
// teardown that waited for the whole device (cudaFree, cudaFreeHost) would
// wait there for the W kernel, which waits for ranks that wait in the
// barrier for it: the round ends only when the kernels time out
// (CHORUS_TIMEOUT, 20 s in lifecycle.sh), and W's results are errors.
// Every round's results, A's and W's, are compared with MPI_Allreduce on
// host copies of the same inputs; A's FIFO memory comes back from the pool
// each round (the next A reuses it), so a stray store of a freed
// communicator into it would show as a wrong sum or a timeout.
//
// Exit status: 0 pass, 1 fail, 77 "skipped: no GPU".
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpu_test_env.h"
#include "chorus.h"

namespace {

int g_rank = 0, g_size = 1;
CaseCount g_cases;

void check(const std::string &what, const std::string &why) { checkCase(g_cases, what, why); }

std::string errorText(int rc) { return mpiErrorText(rc); }

// The inputs of round `round` on this rank, and MPI's sum of every rank's.
std::vector<int32_t> inputs(int round, size_t count, int salt) {
  std::vector<int32_t> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = int32_t((i * 2654435761u) ^ uint32_t(round * 977 + salt * 31 + g_rank));
  return v;
}

std::string compare(const int32_t *dResult, const std::vector<int32_t> &in, size_t count) {
  std::vector<int32_t> want(count), got(count);
  MPI_Allreduce(in.data(), want.data(), int(count), MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
  CUDA_OK(cudaMemcpy(got.data(), dResult, count * 4, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < count; ++i)
    if (got[i] != want[i])
      return "element " + std::to_string(i) + " is " + std::to_string(got[i]) + ", MPI says " +
             std::to_string(want[i]);
  return "";
}

// Two sizes: LL and Simple under CHORUS_PROTO=auto, several slots each.
constexpr size_t kCountA = 3000, kCountW = 70000;
constexpr int kRounds = 8;

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  int device = 0, ndev = 0;
  if (!selectGpuOrSkip(&device, &ndev)) return 77;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  MPI_Comm w;
  MPI_Comm_dup(MPI_COMM_WORLD, &w);
  MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
  cudaStream_t sw;
  CUDA_OK(cudaStreamCreateWithFlags(&sw, cudaStreamNonBlocking));
  int32_t *dA = nullptr, *dW = nullptr, *dInW = nullptr;
  CUDA_OK(cudaMalloc(&dA, kCountA * 4 * 2));
  CUDA_OK(cudaMalloc(&dW, kCountW * 4));
  CUDA_OK(cudaMalloc(&dInW, kCountW * 4));
  // W's GPU resources are set up first, outside the loop.
  {
    const std::vector<int32_t> in = inputs(-1, kCountW, 1);
    CUDA_OK(cudaMemcpy(dInW, in.data(), kCountW * 4, cudaMemcpyHostToDevice));
    const int rc = MPIX_Allreduce_gpu(dInW, dW, MPI_Count(kCountW), MPI_INT32_T, MPI_SUM, w);
    check("W's first allreduce", rc == MPI_SUCCESS ? compare(dW, in, kCountW) : errorText(rc));
  }
  // Without W's resources the rounds' enqueued calls would each try to set
  // them up, a collective, while the other ranks wait in MPI_Barrier.
  if (g_cases.failed) {
    if (g_rank == 0) printf("FAIL: W could not be set up; no round run\n");
    MPI_Finalize();
    return 1;
  }

  for (int round = 0; round < kRounds; ++round) {
    const int early = round % g_size;
    const std::string name = "round " + std::to_string(round) + " (rank " + std::to_string(early) + " early)";
    MPI_Comm a;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
    const std::vector<int32_t> inA = inputs(round, kCountA, 2), inW = inputs(round, kCountW, 3);
    CUDA_OK(cudaMemcpy(dA, inA.data(), kCountA * 4, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dInW, inW.data(), kCountW * 4, cudaMemcpyHostToDevice));
    const int rcA = MPIX_Allreduce_gpu(dA, dA + kCountA, MPI_Count(kCountA), MPI_INT32_T, MPI_SUM, a);
    const std::string whyA = rcA == MPI_SUCCESS ? compare(dA + kCountA, inA, kCountA) : errorText(rcA);

    int rcW = MPI_SUCCESS;
    if (g_rank == early)
      rcW = MPIX_Allreduce_gpu_enqueue(dInW, dW, MPI_Count(kCountW), MPI_INT32_T, MPI_SUM, w, sw);
    MPI_Comm_free(&a);  // this rank's W kernel, if enqueued, waits for the others meanwhile
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank != early)
      rcW = MPIX_Allreduce_gpu_enqueue(dInW, dW, MPI_Count(kCountW), MPI_INT32_T, MPI_SUM, w, sw);
    CUDA_OK(cudaStreamSynchronize(sw));
    check(name + ": allreduce on the communicator set up this round", whyA);
    check(name + ": allreduce on W, enqueued around the other communicator's free",
          rcW == MPI_SUCCESS ? compare(dW, inW, kCountW) : errorText(rcW));
  }
  // Ranks whose GPUs hold different numbers of blocks at once: rank 0 gets
  // 2% of the multiprocessors under MPS (2 of the emulation's 132), the
  // others all of them.  The communicator's channels are agreed (the FIFO
  // layout depends on them); lifecycle.sh reads the INFO line that says so.
  // Allgather and allreduce large enough to want every channel.
  if (g_rank == 0) setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "2", 1);
  {
    // What rank 0's share holds (2% of its GPU's multiprocessors, at least
    // one), for lifecycle.sh to find on every rank: 2 of the emulation's
    // 132 or an H100's, 1 on a GPU of fewer than 100.
    int device = 0, sms = 0;
    CUDA_OK(cudaGetDevice(&device));
    CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    int expected = sms * 2 / 100 < 1 ? 1 : sms * 2 / 100;
    MPI_Bcast(&expected, 1, MPI_INT, 0, MPI_COMM_WORLD);
    printf("rank %d: expects %d channels\n", g_rank, expected);
    fflush(stdout);
  }
  {
    MPI_Comm m;
    MPI_Comm_dup(MPI_COMM_WORLD, &m);
    MPI_Comm_set_errhandler(m, MPI_ERRORS_RETURN);
    const std::vector<int32_t> in = inputs(kRounds + 1, kCountW, 5);
    CUDA_OK(cudaMemcpy(dInW, in.data(), kCountW * 4, cudaMemcpyHostToDevice));
    int rc = MPIX_Allreduce_gpu(dInW, dW, MPI_Count(kCountW), MPI_INT32_T, MPI_SUM, m);
    check("allreduce, ranks with different multiprocessor shares", rc == MPI_SUCCESS ? compare(dW, in, kCountW) : errorText(rc));
    const size_t block = kCountW / size_t(g_size);
    int32_t *dAll = nullptr;
    CUDA_OK(cudaMalloc(&dAll, block * size_t(g_size) * 4));
    rc = MPIX_Allgather_gpu(dInW, MPI_Count(block), MPI_INT32_T, dAll, MPI_Count(block), MPI_INT32_T, m);
    std::string why = rc == MPI_SUCCESS ? "" : errorText(rc);
    if (why.empty()) {
      std::vector<int32_t> want(block * size_t(g_size)), got(want.size());
      MPI_Allgather(in.data(), int(block), MPI_INT32_T, want.data(), int(block), MPI_INT32_T, MPI_COMM_WORLD);
      CUDA_OK(cudaMemcpy(got.data(), dAll, got.size() * 4, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < got.size() && why.empty(); ++i)
        if (got[i] != want[i])
          why = "element " + std::to_string(i) + " is " + std::to_string(got[i]) + ", MPI says " +
                std::to_string(want[i]);
    }
    check("allgather, ranks with different multiprocessor shares", why);
    cudaFree(dAll);
    MPI_Comm_free(&m);
  }
  unsetenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
  // An enqueued call's failure is reported by the next call: one more.
  {
    const std::vector<int32_t> in = inputs(kRounds, kCountW, 4);
    CUDA_OK(cudaMemcpy(dInW, in.data(), kCountW * 4, cudaMemcpyHostToDevice));
    const int rc = MPIX_Allreduce_gpu(dInW, dW, MPI_Count(kCountW), MPI_INT32_T, MPI_SUM, w);
    check("W's last allreduce", rc == MPI_SUCCESS ? compare(dW, in, kCountW) : errorText(rc));
  }
  MPI_Comm_free(&w);
  CUDA_OK(cudaStreamDestroy(sw));
  cudaFree(dA);
  cudaFree(dW);
  cudaFree(dInW);
  if (g_rank == 0) {
    const char *proto = getenv("CHORUS_PROTO");
    printf("%s: %ld of %ld cases failed (%d ranks, %d rounds, CHORUS_PROTO=%s)\n", g_cases.failed ? "FAIL" : "PASS",
           g_cases.failed, g_cases.checked, g_size, kRounds, proto ? proto : "auto");
  }
  MPI_Finalize();
  return g_cases.failed ? 1 : 0;
}
