// The GPU tier past the matrix: CUDA graph capture of _enqueue calls, two
// communicators on two streams, a peer that stays away (the kernel's own
// timeout names it), and the clear error for mixed host/device buffers.
#include <cstdlib>
#include <cstring>

#include "gpu_suite.h"
#include "chorus.h"

namespace gpu_test {

// Two chained allreduces captured into one graph, replayed three times
// (100 across nodes, where nothing but the kernels' counters tells the
// device proxy that a replay runs): the FIFO state lives in device memory,
// so replays must keep in step.
void testGraphCapture() {
  const size_t count = 4099;
  std::vector<float> a(count);
  for (size_t i = 0; i < count; ++i) a[i] = float(int(i % 5) + g_rank);
  float *dA, *dB, *dC;
  CUDA_OK(cudaMalloc(&dA, count * 4));
  CUDA_OK(cudaMalloc(&dB, count * 4));
  CUDA_OK(cudaMalloc(&dC, count * 4));
  CUDA_OK(cudaMemcpy(dA, a.data(), count * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaDeviceSynchronize());  // s is non-blocking: not ordered after the legacy stream's copy
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  int rc1 = MPIX_Allreduce_gpu_enqueue(dA, dB, MPI_Count(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, s);
  int rc2 = MPIX_Allreduce_gpu_enqueue(dB, dC, MPI_Count(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, s);
  CUDA_OK(cudaStreamEndCapture(s, &graph));
  const std::string label = std::string("graph capture allreduce float sum proto=") + g_proto + " count=4099";
  // Staged across nodes (CHORUS_NET_DEVICE=staged), device buffers go
  // through host memory by the calling thread, which a graph cannot
  // replay: the call must say so.
  const bool acrossNodes = getenv("CHORUS_TEST_LAYOUT") != nullptr;
  const char *netDevice = getenv("CHORUS_NET_DEVICE");
  if (acrossNodes && netDevice && strcmp(netDevice, "staged") == 0) {
    const std::string text = rc1 != MPI_SUCCESS ? errorText(rc1) : "";
    check(label + " across nodes", rc1 == MPI_SUCCESS ? "succeeded, but a graph cannot replay the staged copies"
                                   : text.find("capture") == std::string::npos ? "error does not name the capture: " + text
                                                                               : "");
    cudaGraphDestroy(graph);
    cudaStreamDestroy(s);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    return;
  }
  check(label, rc1 != MPI_SUCCESS ? errorText(rc1) : rc2 != MPI_SUCCESS ? errorText(rc2) : "");
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  std::vector<float> want(count);
  for (size_t i = 0; i < count; ++i) {
    float sum = 0;
    for (int r = 0; r < g_size; ++r) sum += float(int(i % 5) + r);
    want[i] = sum * float(g_size);
  }
  const int replays = acrossNodes ? 100 : 3;
  for (int replay = 0; replay < replays; ++replay) {
    CUDA_OK(cudaMemsetAsync(dC, 0, count * 4, s));
    CUDA_OK(cudaGraphLaunch(exec, s));
    CUDA_OK(cudaStreamSynchronize(s));
    std::vector<float> got(count);
    CUDA_OK(cudaMemcpy(got.data(), dC, count * 4, cudaMemcpyDeviceToHost));
    check(label + (acrossNodes ? " across nodes" : "") + " replay " + std::to_string(replay),
          firstDifference(reinterpret_cast<char *>(got.data()), reinterpret_cast<char *>(want.data()), count * 4, 0,
                          count * 4, 4, "result"));
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
}

// Two communicators (a duplicate of the world and its even/odd halves), each
// with its own device resources, enqueue allreduces on two streams in
// turn; each communicator's kernels share its FIFOs, the two do not.
void testTwoCommunicators() {
  MPI_Comm dup, half;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
  cudaStream_t s[2];
  CUDA_OK(cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking));
  const size_t count = 70001;  // past one LL slot: two channels under auto
  const int rounds = 3;
  std::vector<int32_t> in(count);
  for (size_t i = 0; i < count; ++i) in[i] = int32_t(hashOf(7, g_rank, i) % 1000);
  int32_t *dIn, *dOut;
  CUDA_OK(cudaMalloc(&dIn, count * 4));
  CUDA_OK(cudaMalloc(&dOut, 2 * rounds * count * 4));
  CUDA_OK(cudaMemcpy(dIn, in.data(), count * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaDeviceSynchronize());
  const MPI_Comm comms[2] = {dup, half};
  std::string why;
  for (int r = 0; r < rounds && why.empty(); ++r)
    for (int c = 0; c < 2 && why.empty(); ++c) {
      const int rc = MPIX_Allreduce_gpu_enqueue(dIn, dOut + (size_t(r) * 2 + c) * count, MPI_Count(count), MPI_INT32_T,
                                                MPI_SUM, comms[c], s[c]);
      if (rc != MPI_SUCCESS) why = errorText(rc);
    }
  CUDA_OK(cudaStreamSynchronize(s[0]));
  CUDA_OK(cudaStreamSynchronize(s[1]));
  for (int c = 0; c < 2 && why.empty(); ++c) {
    std::vector<int32_t> want(count);
    MPI_Allreduce(in.data(), want.data(), int(count), MPI_INT32_T, MPI_SUM, comms[c]);
    for (int r = 0; r < rounds && why.empty(); ++r) {
      const std::vector<char> got = download(reinterpret_cast<char *>(dOut + (size_t(r) * 2 + c) * count), count * 4);
      why = firstDifference(got.data(), reinterpret_cast<const char *>(want.data()), count * 4, 0, count * 4, 4,
                            c == 0 ? "duplicate of the world" : "even/odd half");
    }
  }
  check(std::string("two communicators on two streams allreduce int32 sum proto=") + g_proto + " count=70001", why);
  cudaFree(dIn);
  cudaFree(dOut);
  cudaStreamDestroy(s[0]);
  cudaStreamDestroy(s[1]);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&half);
}

// `test_gpu --stalled-peer` (stalled-peer.sh, CHORUS_TIMEOUT of a few
// seconds): after a first allreduce sets the communicator up, the last rank
// stays away from the second; every other rank must get an error within
// the timeout that names it, from the kernel's own timeout.
void testStalledPeer() {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  const size_t count = 1024;
  float *d;
  CUDA_OK(cudaMalloc(&d, 2 * count * 4));
  CUDA_OK(cudaMemset(d, 0, 2 * count * 4));
  const int absent = g_size - 1;
  int rc = MPIX_Allreduce_gpu(d, d + count, MPI_Count(count), MPI_FLOAT, MPI_SUM, dup);
  check("stalled peer: the first allreduce", rc == MPI_SUCCESS ? "" : errorText(rc));
  std::string why;
  if (g_rank != absent) {
    rc = MPIX_Allreduce_gpu(d, d + count, MPI_Count(count), MPI_FLOAT, MPI_SUM, dup);
    const std::string text = rc == MPI_SUCCESS ? "" : errorText(rc);
    const std::string peer = "waiting for rank " + std::to_string(absent);
    if (rc == MPI_SUCCESS) why = "succeeded without rank " + std::to_string(absent);
    else if (text.find(peer) == std::string::npos) why = "the error does not say \"" + peer + "\": " + text;
  }
  MPI_Barrier(MPI_COMM_WORLD);  // the absent rank waits here for the others' timeout
  check(std::string("stalled peer: allreduce without rank ") + std::to_string(absent) + " proto=" + g_proto, why);
  cudaFree(d);
  MPI_Comm_free(&dup);
}

// Host sendbuf with device recvbuf: a clear error, not a crash.
void testMixedBuffers() {
  std::vector<float> h(16, 1.0f);
  float *d;
  CUDA_OK(cudaMalloc(&d, 16 * 4));
  int rc = MPIX_Allreduce_gpu(h.data(), d, 16, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
  const bool ok = rc != MPI_SUCCESS && strstr(msg, "host memory") && strstr(msg, "device memory");
  check("mixed host/device buffers allreduce float sum count=16",
        ok ? "" : "gave rc " + std::to_string(rc) + ", \"" + msg + "\"");
  cudaFree(d);
}

}  // namespace gpu_test
