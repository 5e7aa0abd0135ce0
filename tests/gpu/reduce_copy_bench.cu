// reduce_copy_bench - throughput of Chorus's device reduce-copy loop
// (devprims::reduceCopy, the inner loop of every Simple-protocol primitive)
// against cudaMemcpy device-to-device bandwidth on the same GPU.
//
// For fp32 and bf16: out = in0 + in1 over 1 GiB per buffer.  Reported:
// "bytes moved" = 2 reads + 1 write per element, in GB/s, next to
// cudaMemcpy's 1 read + 1 write.  A reduce-copy near the copy's bandwidth
// means the loop is memory bound, as it should be.
//
// Build: make -C tests/gpu bench (or nvcc -std=c++17 -O2 -Isrc -Iinclude
// tests/gpu/reduce_copy_bench.cu).  Exits 77 with "skipped: no GPU" when
// there is none.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "cuda/device_channel.h"
#include "cuda/reduce_copy.cuh"

using namespace chorus;

#define CHECK(call)                                                                                    \
  do {                                                                                                 \
    cudaError_t e_ = (call);                                                                           \
    if (e_ != cudaSuccess) {                                                                           \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));   \
      exit(1);                                                                                         \
    }                                                                                                  \
  } while (0)

template <typename T>
__global__ void __launch_bounds__(kCudaThreads, 1) reduceCopyKernel(const T *a, const T *b, T *out, size_t n) {
  // Each block takes a contiguous piece, like a channel does.
  const size_t per = (n + gridDim.x - 1) / gridDim.x;
  const size_t per16 = (per + 15) / 16 * 16;
  const size_t off = min(size_t(blockIdx.x) * per16, n);
  const size_t len = min(per16, n - off);
  const T *in[2] = {a + off, b + off};
  T *outs[1] = {out + off};
  devprims::reduceCopy<T, FuncSum<T>>(in, 2, outs, 1, len, false, 1);
}

template <typename T>
double timeReduceCopy(const T *a, const T *b, T *out, size_t n, int blocks, int iters) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  reduceCopyKernel<T><<<blocks, kCudaThreads>>>(a, b, out, n);  // warm-up
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(start));
  for (int i = 0; i < iters; ++i) reduceCopyKernel<T><<<blocks, kCudaThreads>>>(a, b, out, n);
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms / 1e3 / iters;
}

double timeMemcpy(void *dst, const void *src, size_t bytes, int iters) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
  CHECK(cudaEventRecord(start));
  for (int i = 0; i < iters; ++i) CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice));
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms / 1e3 / iters;
}

template <typename T>
void run(const char *name, void *a, void *b, void *out, size_t bytes, int sms, int iters) {
  const size_t n = bytes / sizeof(T);
  printf("%-6s %8s %12s %12s\n", "type", "blocks", "time (ms)", "GB/s (3 x)");
  for (int blocks : {sms, 2 * sms, 4 * sms}) {
    const double t = timeReduceCopy(static_cast<const T *>(a), static_cast<const T *>(b), static_cast<T *>(out), n,
                                    blocks, iters);
    printf("%-6s %8d %12.3f %12.1f\n", name, blocks, t * 1e3, 3.0 * bytes / t / 1e9);
  }
}

int main() {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("skipped: no GPU\n");
    return 77;
  }
  const size_t bytes = size_t(1) << 30;
  const int iters = 10;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  void *a, *b, *out;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMalloc(&out, bytes));
  CHECK(cudaMemset(a, 0, bytes));
  CHECK(cudaMemset(b, 0, bytes));
  printf("GPU: %s, %d SMs; buffers of %zu MiB, %d iterations\n", prop.name, prop.multiProcessorCount, bytes >> 20,
         iters);
  const double tc = timeMemcpy(out, a, bytes, iters);
  printf("cudaMemcpy D2D: %.3f ms, %.1f GB/s (2 x bytes: 1 read + 1 write)\n", tc * 1e3, 2.0 * bytes / tc / 1e9);
  run<float>("fp32", a, b, out, bytes, prop.multiProcessorCount, iters);
  run<BFloat16>("bf16", a, b, out, bytes, prop.multiProcessorCount, iters);
  return 0;
}
