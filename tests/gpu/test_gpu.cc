// GPU tier: the multi-rank suite on device buffers.  Every collective runs
// for every datatype, every op valid on it and a range of sizes, on device
// buffers, and is compared bit for bit with a reference computed on host
// copies of the same inputs: MPI's own collective for MPI's types, Chorus's
// host engine (itself checked against MPI in tests/mpi) for the
// low-precision MPIX_GPU_* types, which MPI cannot reduce.  Then the
// stream-ordered variants, CUDA graph capture of _enqueue calls and the
// clear error for mixed host/device buffers.  Several ranks may share one
// GPU (rank r uses device r % ndevices): that is the one-GPU CI setup.
//
// The protocol is CHORUS_PROTO, which Chorus reads once per process, so one
// run covers one protocol: run-gpu.sh starts this program once per protocol.
//
// Exit status: 0 pass, 1 fail, 77 "skipped: no GPU" (Automake SKIP) when
// cudaGetDeviceCount fails or finds no device.
//
// Built with --enable-cuda-emulation, this same program runs the kernels on
// the CPU emulation of CUDA (src/cuda/emu), where it never skips.  A pass
// there proves the kernels' logic (slicing, FIFOs, flags, credits, channel
// split, folding order), not GPU memory ordering (x86 is stronger, so a
// missing fence can pass), nor NVLink, real CUDA IPC or speed: a run on a
// GPU is still wanted.
//
// This file holds main(); the suite's parts, by theme, are listed in
// gpu_suite.h.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "chorus.h"
#include "gpu_suite.h"

namespace gpu_test {

int g_rank = 0, g_size = 1;
const char *g_proto = "auto";
long g_checked = 0, g_failed = 0;
cudaStream_t g_stream = nullptr;

}  // namespace gpu_test

using namespace gpu_test;

namespace {

// Which GPU each rank drives, printed once by rank 0 in rank order.
void reportDevices(int device, int ndev) {
  char mine[64];
  char bus[32] = "?";
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) cudaGetLastError();
  char host[MPI_MAX_PROCESSOR_NAME] = "";
  int len = 0;
  MPI_Get_processor_name(host, &len);
  snprintf(mine, sizeof mine, "%.24s GPU %d (%s)", host, device, bus);
  std::vector<char> all(size_t(g_size) * sizeof mine);
  MPI_Gather(mine, sizeof mine, MPI_CHAR, all.data(), sizeof mine, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (g_rank != 0) return;
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    snprintf(prop.name, sizeof prop.name, "?");
  }
  printf("test_gpu: %d rank(s), %d GPU(s) per node (%s), CHORUS_PROTO=%s, %s\n", g_size, ndev, prop.name, g_proto,
         MPIX_Gpu_version_string());
  for (int r = 0; r < g_size; ++r) printf("  rank %d: %s\n", r, &all[size_t(r) * sizeof mine]);
  fflush(stdout);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);

  int device = 0, ndev = 0;
  if (!selectGpuOrSkip(&device, &ndev)) return 77;
  const char *proto = getenv("CHORUS_PROTO");
  if (proto && *proto) g_proto = proto;
  reportDevices(device, ndev);
  // A failing call is a failed case, not an abort of the whole run.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CUDA_OK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));

  if (argc > 1 && !strcmp(argv[1], "--stalled-peer")) {
    testStalledPeer();
  } else if (argc > 1 && !strcmp(argv[1], "--geometry")) {
    runGeometrySuite();
  } else {
    runSuite();
    // After the suite: capture needs the GPU resources set up by an earlier call.
    testGraphCapture();
    testTwoCommunicators();
    testMixedBuffers();
    // Barrier takes no buffer: the host path, still fine with a GPU context up.
    const int rc = MPIX_Barrier_gpu(MPI_COMM_WORLD);
    check("barrier", rc == MPI_SUCCESS ? "" : errorText(rc));
  }

  if (g_rank == 0) {
    if (g_failed) printf("FAIL: %ld of %ld cases failed (CHORUS_PROTO=%s, %d ranks)\n", g_failed, g_checked, g_proto,
                         g_size);
    else printf("PASS: %ld cases checked (CHORUS_PROTO=%s, %d ranks)\n", g_checked, g_proto, g_size);
  }
  cudaStreamDestroy(g_stream);
  if (g_send.p) cudaFree(g_send.p);
  if (g_recv.p) cudaFree(g_recv.p);
  MPI_Finalize();
  return g_failed ? 1 : 0;
}
