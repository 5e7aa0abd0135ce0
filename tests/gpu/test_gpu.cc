// GPU tier: every collective on device buffers, checked bit for bit against
// MPI's own collective on host copies of the same data, plus the enqueue
// variant on a stream, CUDA graph capture of MPIX_Allreduce_gpu_enqueue and
// the clear error for mixed host/device buffers.  Several ranks may share
// one GPU (rank r uses device r % ndevices): that is the one-GPU CI setup.
//
// Exit status: 0 pass, 1 fail, 77 "skipped: no GPU" (Automake SKIP) when
// cudaGetDeviceCount fails or finds no device.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "chorus.h"

namespace {

int g_rank = 0, g_size = 1, g_failures = 0;

#define CUDA_OK(call)                                                                                 \
  do {                                                                                                \
    cudaError_t e_ = (call);                                                                          \
    if (e_ != cudaSuccess) {                                                                          \
      fprintf(stderr, "rank %d: %s:%d: %s failed: %s\n", g_rank, __FILE__, __LINE__, #call,          \
              cudaGetErrorString(e_));                                                                \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                   \
    }                                                                                                 \
  } while (0)

struct TypeCase {
  MPI_Datatype type;
  size_t size;
  const char *name;
};

// Small integers, exact in every type and whatever the reduction order.
void fill(std::vector<char> &buf, const TypeCase &t, size_t count, int seed) {
  buf.resize(count * t.size);
  for (size_t i = 0; i < count; ++i) {
    const int v = int((i * 7 + size_t(seed) * 13) % 11) - 5 + (seed % 3);
    char *p = buf.data() + i * t.size;
    if (t.type == MPI_FLOAT) { float x = float(v); memcpy(p, &x, 4); }
    else if (t.type == MPI_DOUBLE) { double x = v; memcpy(p, &x, 8); }
    else if (t.type == MPI_INT) { int32_t x = v; memcpy(p, &x, 4); }
    else if (t.type == MPI_INT64_T) { int64_t x = v; memcpy(p, &x, 8); }
    else if (t.type == MPI_UINT8_T) { uint8_t x = uint8_t(v); memcpy(p, &x, 1); }
  }
}

void *toDevice(const std::vector<char> &h) {
  void *d = nullptr;
  CUDA_OK(cudaMalloc(&d, h.size() ? h.size() : 1));
  if (!h.empty()) CUDA_OK(cudaMemcpy(d, h.data(), h.size(), cudaMemcpyHostToDevice));
  return d;
}

std::vector<char> toHost(const void *d, size_t bytes) {
  std::vector<char> h(bytes);
  if (bytes) CUDA_OK(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost));
  return h;
}

void check(bool ok, const char *what, const TypeCase &t, const char *op, size_t count) {
  int bad = ok ? 0 : 1, anyBad = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (bad) fprintf(stderr, "rank %d: FAIL %s %s %s count %zu\n", g_rank, what, t.name, op, count);
  if (anyBad) ++g_failures;
}

void testReductions(const TypeCase &t, MPI_Op op, const char *opName, size_t count) {
  std::vector<char> in, ref(count * t.size);
  fill(in, t, count, g_rank);
  void *dIn = toDevice(in);
  void *dOut = nullptr;
  CUDA_OK(cudaMalloc(&dOut, in.size() + 1));

  // Allreduce, out of place and in place.
  MPI_Allreduce(in.data(), ref.data(), int(count), t.type, op, MPI_COMM_WORLD);
  int rc = MPIX_Allreduce_gpu(dIn, dOut, MPI_Count(count), t.type, op, MPI_COMM_WORLD);
  check(rc == MPI_SUCCESS && toHost(dOut, ref.size()) == ref, "allreduce", t, opName, count);
  CUDA_OK(cudaMemcpy(dOut, in.data(), in.size(), cudaMemcpyHostToDevice));
  rc = MPIX_Allreduce_gpu(MPI_IN_PLACE, dOut, MPI_Count(count), t.type, op, MPI_COMM_WORLD);
  check(rc == MPI_SUCCESS && toHost(dOut, ref.size()) == ref, "allreduce in place", t, opName, count);

  // Reduce to the last rank.
  const int root = g_size - 1;
  MPI_Reduce(in.data(), ref.data(), int(count), t.type, op, root, MPI_COMM_WORLD);
  rc = MPIX_Reduce_gpu(dIn, g_rank == root ? dOut : nullptr, MPI_Count(count), t.type, op, root, MPI_COMM_WORLD);
  check(rc == MPI_SUCCESS && (g_rank != root || toHost(dOut, ref.size()) == ref), "reduce", t, opName, count);

  // Reduce-scatter-block: `count` per rank, so the input is count * size.
  std::vector<char> rsIn, rsRef(count * t.size);
  fill(rsIn, t, count * g_size, g_rank + 1);
  void *dRsIn = toDevice(rsIn);
  MPI_Reduce_scatter_block(rsIn.data(), rsRef.data(), int(count), t.type, op, MPI_COMM_WORLD);
  rc = MPIX_Reduce_scatter_block_gpu(dRsIn, dOut, MPI_Count(count), t.type, op, MPI_COMM_WORLD);
  check(rc == MPI_SUCCESS && toHost(dOut, rsRef.size()) == rsRef, "reduce_scatter_block", t, opName, count);

  // The enqueue variant on a user stream.
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  MPI_Allreduce(in.data(), ref.data(), int(count), t.type, op, MPI_COMM_WORLD);
  rc = MPIX_Allreduce_gpu_enqueue(dIn, dOut, MPI_Count(count), t.type, op, MPI_COMM_WORLD, s);
  CUDA_OK(cudaStreamSynchronize(s));
  check(rc == MPI_SUCCESS && toHost(dOut, ref.size()) == ref, "allreduce_enqueue", t, opName, count);
  CUDA_OK(cudaStreamDestroy(s));

  cudaFree(dIn);
  cudaFree(dOut);
  cudaFree(dRsIn);
}

void testCopies(const TypeCase &t, size_t count) {
  std::vector<char> in, ref(count * t.size * g_size);
  fill(in, t, count, g_rank + 5);
  void *dIn = toDevice(in);
  void *dOut = nullptr;
  CUDA_OK(cudaMalloc(&dOut, ref.size() + 1));

  // Bcast from rank 0 (in place by nature).
  std::vector<char> b = in;
  MPI_Bcast(b.data(), int(count), t.type, 0, MPI_COMM_WORLD);
  void *dB = toDevice(in);
  int rc = MPIX_Bcast_gpu(dB, MPI_Count(count), t.type, 0, MPI_COMM_WORLD);
  check(rc == MPI_SUCCESS && toHost(dB, b.size()) == b, "bcast", t, "-", count);

  MPI_Allgather(in.data(), int(count), t.type, ref.data(), int(count), t.type, MPI_COMM_WORLD);
  rc = MPIX_Allgather_gpu(dIn, MPI_Count(count), t.type, dOut, MPI_Count(count), t.type, MPI_COMM_WORLD);
  check(rc == MPI_SUCCESS && toHost(dOut, ref.size()) == ref, "allgather", t, "-", count);

  std::vector<char> a2a;
  fill(a2a, t, count * g_size, g_rank + 9);
  void *dA = toDevice(a2a);
  MPI_Alltoall(a2a.data(), int(count), t.type, ref.data(), int(count), t.type, MPI_COMM_WORLD);
  rc = MPIX_Alltoall_gpu(dA, MPI_Count(count), t.type, dOut, MPI_Count(count), t.type, MPI_COMM_WORLD);
  check(rc == MPI_SUCCESS && toHost(dOut, ref.size()) == ref, "alltoall", t, "-", count);

  cudaFree(dIn);
  cudaFree(dOut);
  cudaFree(dB);
  cudaFree(dA);
}

// Two chained allreduces captured into one graph, replayed three times.
void testGraphCapture() {
  const size_t count = 4099;
  std::vector<float> a(count);
  for (size_t i = 0; i < count; ++i) a[i] = float(int(i % 5) + g_rank);
  float *dA, *dB, *dC;
  CUDA_OK(cudaMalloc(&dA, count * 4));
  CUDA_OK(cudaMalloc(&dB, count * 4));
  CUDA_OK(cudaMalloc(&dC, count * 4));
  CUDA_OK(cudaMemcpy(dA, a.data(), count * 4, cudaMemcpyHostToDevice));
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  int rc1 = MPIX_Allreduce_gpu_enqueue(dA, dB, MPI_Count(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, s);
  int rc2 = MPIX_Allreduce_gpu_enqueue(dB, dC, MPI_Count(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, s);
  CUDA_OK(cudaStreamEndCapture(s, &graph));
  check(rc1 == MPI_SUCCESS && rc2 == MPI_SUCCESS, "graph capture", TypeCase{MPI_FLOAT, 4, "float"}, "sum", count);
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  std::vector<float> want(count);
  for (size_t i = 0; i < count; ++i) {
    float sum = 0;
    for (int r = 0; r < g_size; ++r) sum += float(int(i % 5) + r);
    want[i] = sum * float(g_size);
  }
  for (int replay = 0; replay < 3; ++replay) {
    CUDA_OK(cudaMemset(dC, 0, count * 4));
    CUDA_OK(cudaGraphLaunch(exec, s));
    CUDA_OK(cudaStreamSynchronize(s));
    std::vector<float> got(count);
    CUDA_OK(cudaMemcpy(got.data(), dC, count * 4, cudaMemcpyDeviceToHost));
    check(got == want, "graph replay", TypeCase{MPI_FLOAT, 4, "float"}, "sum", count);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
}

// Host sendbuf with device recvbuf: a clear error, not a crash.
void testMixedBuffers() {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::vector<float> h(16, 1.0f);
  float *d;
  CUDA_OK(cudaMalloc(&d, 16 * 4));
  int rc = MPIX_Allreduce_gpu(h.data(), d, 16, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
  const bool ok = rc != MPI_SUCCESS && strstr(msg, "host memory") && strstr(msg, "device memory");
  if (!ok) fprintf(stderr, "rank %d: mixed buffers gave rc %d, \"%s\"\n", g_rank, rc, msg);
  check(ok, "mixed host/device error", TypeCase{MPI_FLOAT, 4, "float"}, "sum", 16);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  cudaFree(d);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);

  int ndev = 0;
  const int haveGpu = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0;
  int allHave = 0;
  MPI_Allreduce(&haveGpu, &allHave, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!allHave) {
    if (g_rank == 0) printf("skipped: no GPU\n");
    MPI_Finalize();
    return 77;
  }
  MPI_Comm node;
  int nodeRank = 0, nodeSize = 1;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &nodeRank);
  MPI_Comm_size(node, &nodeSize);
  MPI_Comm_free(&node);
  CUDA_OK(cudaSetDevice(nodeRank % ndev));
  if (g_rank == 0)
    printf("%d ranks on %d GPU(s)%s\n", g_size, ndev, nodeSize > ndev ? " (several ranks share a GPU)" : "");

  const TypeCase types[] = {{MPI_FLOAT, 4, "float"}, {MPI_DOUBLE, 8, "double"}, {MPI_INT, 4, "int32"},
                            {MPI_INT64_T, 8, "int64"}};
  const struct { MPI_Op op; const char *name; } ops[] = {{MPI_SUM, "sum"}, {MPI_MAX, "max"}, {MPI_MIN, "min"}};
  // Sizes: 1, odd, around the LL/Simple switch, several channels.
  const size_t counts[] = {1, 7, 1000, 16387, (1u << 20) + 5};
  for (const TypeCase &t : types)
    for (const auto &o : ops)
      for (size_t c : counts) testReductions(t, o.op, o.name, c);
  const TypeCase copyTypes[] = {{MPI_UINT8_T, 1, "uint8"}, {MPI_FLOAT, 4, "float"}};
  for (const TypeCase &t : copyTypes)
    for (size_t c : counts) testCopies(t, c);
  testGraphCapture();
  testMixedBuffers();
  // Barrier takes no buffer: the host path, still fine with a GPU context up.
  if (MPIX_Barrier_gpu(MPI_COMM_WORLD) != MPI_SUCCESS) ++g_failures;

  if (g_rank == 0) printf("%s: %d failure(s)\n", g_failures ? "FAIL" : "PASS", g_failures);
  MPI_Finalize();
  return g_failures ? 1 : 0;
}
