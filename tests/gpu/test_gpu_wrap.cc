// GPU tier: the LL flag wrap and the ordering of launches across streams
// and graphs, each result compared bit for bit with MPI's own collective on
// host copies of the same inputs.
//
//  - wrap: hundreds of back-to-back small allreduces and allgathers, their
//    sizes cycling so that a slot's lines were last written by messages of
//    every other size.  Under CHORUS_LL_FLAG_BITS=4 (ll-wrap.sh) the LL
//    flags wrap every 16 messages of a FIFO, dozens of times here: a stale
//    line whose flag recurs, or a zeroed line read as flag 0, gives a wrong
//    element (or a timeout).
//  - order: a captured allreduce replayed on one stream while eager
//    allreduces go to another, with no host synchronisation between them:
//    the communicator's kernels share its FIFOs, so each must wait for the
//    one launched before it, graph or not.  And two host threads taking
//    turns to enqueue on cudaStreamPerThread: one handle, two streams.
//
// Exit status: 0 pass, 1 fail, 77 "skipped: no GPU".
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test_env.h"
#include "chorus.h"

namespace {

int g_rank = 0, g_size = 1;
CaseCount g_cases;


uint32_t mix(uint64_t x) {  // splitmix64 finaliser, low half
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return uint32_t(x ^ (x >> 31));
}

// One case's verdict, agreed by every rank (gpu_test_env.h).
void check(const std::string &what, const std::string &why) { checkCase(g_cases, what, why); }

std::string errorText(int rc) { return mpiErrorText(rc); }

// The first element where `got` differs from `want`, or "".
std::string firstDifference(const std::vector<int32_t> &got, const std::vector<int32_t> &want, size_t from,
                            size_t n, const char *what) {
  for (size_t i = 0; i < n; ++i)
    if (got[from + i] != want[from + i])
      return std::string(what) + ": element " + std::to_string(i) + " is " + std::to_string(got[from + i]) +
             ", MPI says " + std::to_string(want[from + i]);
  return "";
}

// Sizes (int32 elements) of LL messages of 1 to thousands of 16-byte
// units, in an order where small ones follow large ones in the same slot.
const size_t kSizes[] = {5000, 1, 33, 2, 777, 4096, 3, 64, 1500, 9, 250, 5001, 17};
constexpr int kIters = 240;

void testWrap() {
  const size_t nsizes = sizeof kSizes / sizeof kSizes[0];
  std::vector<size_t> offset(kIters + 1, 0);
  for (int i = 0; i < kIters; ++i) offset[i + 1] = offset[i] + kSizes[i % nsizes];
  const size_t total = offset[kIters];
  std::vector<int32_t> in(total);
  for (size_t i = 0; i < total; ++i) in[i] = int32_t(mix(uint64_t(g_rank) << 40 ^ i) % 2001) - 1000;
  int32_t *dIn, *dSum, *dAll;
  CUDA_OK(cudaMalloc(&dIn, total * 4));
  CUDA_OK(cudaMalloc(&dSum, total * 4));
  CUDA_OK(cudaMalloc(&dAll, total * 4 * size_t(g_size)));
  CUDA_OK(cudaMemcpy(dIn, in.data(), total * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaDeviceSynchronize());
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // All enqueued back to back, one synchronisation at the end: the FIFOs
  // run as far ahead as their credits allow.
  std::string why;
  for (int i = 0; i < kIters && why.empty(); ++i) {
    const MPI_Count n = MPI_Count(kSizes[i % nsizes]);
    int rc = MPIX_Allreduce_gpu_enqueue(dIn + offset[i], dSum + offset[i], n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, s);
    if (rc == MPI_SUCCESS)
      rc = MPIX_Allgather_gpu_enqueue(dIn + offset[i], n, MPI_INT32_T, dAll + offset[i] * size_t(g_size), n,
                                      MPI_INT32_T, MPI_COMM_WORLD, s);
    if (rc != MPI_SUCCESS) why = "call " + std::to_string(i) + ": " + errorText(rc);
  }
  CUDA_OK(cudaStreamSynchronize(s));
  std::vector<int32_t> sum(total), all(total * size_t(g_size));
  CUDA_OK(cudaMemcpy(sum.data(), dSum, total * 4, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(all.data(), dAll, all.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<int32_t> wantSum(total), wantAll(all.size());
  for (int i = 0; i < kIters && why.empty(); ++i) {
    const size_t n = kSizes[i % nsizes];
    MPI_Allreduce(in.data() + offset[i], wantSum.data() + offset[i], int(n), MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allgather(in.data() + offset[i], int(n), MPI_INT32_T, wantAll.data() + offset[i] * size_t(g_size), int(n),
                  MPI_INT32_T, MPI_COMM_WORLD);
    why = firstDifference(sum, wantSum, offset[i], n, ("allreduce " + std::to_string(i)).c_str());
    if (why.empty())
      why = firstDifference(all, wantAll, offset[i] * size_t(g_size), n * size_t(g_size),
                            ("allgather " + std::to_string(i)).c_str());
  }
  check("wrap: " + std::to_string(kIters) + " x (allreduce + allgather) int32, back to back", why);
  cudaStreamDestroy(s);
  cudaFree(dIn);
  cudaFree(dSum);
  cudaFree(dAll);
}

void testGraphAndEagerOrder() {
  const size_t count = 3001;
  constexpr int kReplays = 4;
  std::vector<int32_t> in(count);
  for (size_t i = 0; i < count; ++i) in[i] = int32_t(mix(uint64_t(g_rank) * 7919 + i) % 1000);
  int32_t *dIn, *dGraph, *dEager;
  CUDA_OK(cudaMalloc(&dIn, count * 4));
  CUDA_OK(cudaMalloc(&dGraph, count * 4));
  CUDA_OK(cudaMalloc(&dEager, kReplays * count * 4));
  CUDA_OK(cudaMemcpy(dIn, in.data(), count * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaDeviceSynchronize());
  cudaStream_t sg, se;
  CUDA_OK(cudaStreamCreateWithFlags(&sg, cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&se, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_OK(cudaStreamBeginCapture(sg, cudaStreamCaptureModeThreadLocal));
  const int rc = MPIX_Allreduce_gpu_enqueue(dIn, dGraph, MPI_Count(count), MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, sg);
  CUDA_OK(cudaStreamEndCapture(sg, &graph));
  std::string why = rc == MPI_SUCCESS ? "" : "capture: " + errorText(rc);
  if (why.empty()) {
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int r = 0; r < kReplays && why.empty(); ++r) {
      CUDA_OK(cudaGraphLaunch(exec, sg));
      const int rce = MPIX_Allreduce_gpu_enqueue(dIn, dEager + size_t(r) * count, MPI_Count(count), MPI_INT32_T,
                                                 MPI_SUM, MPI_COMM_WORLD, se);
      if (rce != MPI_SUCCESS) why = "eager " + std::to_string(r) + ": " + errorText(rce);
    }
    CUDA_OK(cudaStreamSynchronize(sg));
    CUDA_OK(cudaStreamSynchronize(se));
    cudaGraphExecDestroy(exec);
  }
  cudaGraphDestroy(graph);
  std::vector<int32_t> want(count), got(count), eager(kReplays * count);
  MPI_Allreduce(in.data(), want.data(), int(count), MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
  CUDA_OK(cudaMemcpy(got.data(), dGraph, count * 4, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(eager.data(), dEager, eager.size() * 4, cudaMemcpyDeviceToHost));
  if (why.empty()) why = firstDifference(got, want, 0, count, "graph replay");
  for (int r = 0; r < kReplays && why.empty(); ++r) {
    std::vector<int32_t> one(eager.begin() + long(r * count), eager.begin() + long((r + 1) * count));
    why = firstDifference(one, want, 0, count, ("eager " + std::to_string(r)).c_str());
  }
  check("order: graph replays on one stream, eager allreduces on another, unsynchronised", why);
  cudaStreamDestroy(sg);
  cudaStreamDestroy(se);
  cudaFree(dIn);
  cudaFree(dGraph);
  cudaFree(dEager);
}

// Two host threads take turns (never at once: MPI_THREAD_SERIALIZED) to
// enqueue an allreduce on cudaStreamPerThread, synchronising nothing until
// every turn is done.  The handle is the same in both threads, the streams
// are not.
void testPerThreadStreams() {
  const size_t count = 4099;
  constexpr int kTurns = 6;
  std::vector<int32_t> in(count);
  for (size_t i = 0; i < count; ++i) in[i] = int32_t(mix(uint64_t(g_rank) * 104729 + i) % 1000);
  int32_t *dIn, *dOut;
  CUDA_OK(cudaMalloc(&dIn, count * 4));
  CUDA_OK(cudaMalloc(&dOut, kTurns * count * 4));
  CUDA_OK(cudaMemcpy(dIn, in.data(), count * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaDeviceSynchronize());
  int device = 0;
  CUDA_OK(cudaGetDevice(&device));
  std::mutex mu;
  std::condition_variable cv;
  int turn = 0;
  bool allDone = false;
  std::string why;
  auto worker = [&](int self) {
    CUDA_OK(cudaSetDevice(device));
    for (int t = self; t < kTurns; t += 2) {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return turn == t; });
      const int rc = MPIX_Allreduce_gpu_enqueue(dIn, dOut + size_t(t) * count, MPI_Count(count), MPI_INT32_T, MPI_SUM,
                                                MPI_COMM_WORLD, cudaStreamPerThread);
      if (rc != MPI_SUCCESS && why.empty()) why = "turn " + std::to_string(t) + ": " + errorText(rc);
      ++turn;
      cv.notify_all();
    }
    // Alive until every turn is enqueued: the thread's stream is its own.
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return allDone; });
    lock.unlock();
    CUDA_OK(cudaStreamSynchronize(cudaStreamPerThread));
  };
  std::thread a(worker, 0), b(worker, 1);
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return turn == kTurns; });
    allDone = true;
    cv.notify_all();
  }
  a.join();
  b.join();
  std::vector<int32_t> want(count), got(kTurns * count);
  MPI_Allreduce(in.data(), want.data(), int(count), MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
  CUDA_OK(cudaMemcpy(got.data(), dOut, got.size() * 4, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kTurns && why.empty(); ++t) {
    std::vector<int32_t> one(got.begin() + long(t * count), got.begin() + long((t + 1) * count));
    why = firstDifference(one, want, 0, count, ("turn " + std::to_string(t)).c_str());
  }
  check("order: two host threads in turn on cudaStreamPerThread, unsynchronised", why);
  cudaFree(dIn);
  cudaFree(dOut);
}

}  // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  int device = 0, ndev = 0;
  if (!selectGpuOrSkip(&device, &ndev)) return 77;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char *proto = getenv("CHORUS_PROTO"), *bits = getenv("CHORUS_LL_FLAG_BITS");
  // The first call sets the communicator's GPU resources up: not capturable.
  testWrap();
  testGraphAndEagerOrder();
  if (provided >= MPI_THREAD_SERIALIZED) testPerThreadStreams();
  else check("order: two host threads on cudaStreamPerThread", "MPI gives no MPI_THREAD_SERIALIZED: not run");
  if (g_rank == 0) {
    printf("%s: %ld of %ld cases failed (%d ranks, CHORUS_PROTO=%s, CHORUS_LL_FLAG_BITS=%s)\n",
           g_cases.failed ? "FAIL" : "PASS", g_cases.failed, g_cases.checked, g_size, proto ? proto : "auto",
           bits ? bits : "32");
  }
  MPI_Finalize();
  return g_cases.failed ? 1 : 0;
}
