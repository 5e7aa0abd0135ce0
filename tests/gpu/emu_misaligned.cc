// The CPU emulation's alignment trap (src/cuda/emu/include/cuda_emu_device.h):
// a GPU faults on a 16-byte load from an address that is not a multiple of
// 16, x86 does not, so the emulation must abort there, naming the kernel
// and the address, or a misaligned vector access in Chorus's kernels would
// pass the emulated suite silently.  An aligned load first (it must not
// trap), then one 8 bytes off: the process must die in it.
// Built with the emulation only (tests/gpu/Makefile.am); run by misaligned.sh.
#include <cuda_runtime.h>

#include <cstdio>

__global__ void loadVector(const uint4 *p, uint4 *out) { *out = __ldcv(p); }

int main() {
  char *buf = nullptr;
  uint4 *out = nullptr;
  if (cudaMalloc(reinterpret_cast<void **>(&buf), 64) != cudaSuccess ||
      cudaMalloc(reinterpret_cast<void **>(&out), sizeof(uint4)) != cudaSuccess) {
    printf("FAIL: cudaMalloc\n");
    return 1;
  }
  CHORUS_LAUNCH(loadVector, 1, 1, 0, nullptr, reinterpret_cast<const uint4 *>(buf), out);
  cudaDeviceSynchronize();
  printf("aligned 16-byte load: no trap\n");
  fflush(stdout);
  CHORUS_LAUNCH(loadVector, 1, 1, 0, nullptr, reinterpret_cast<const uint4 *>(buf + 8), out);
  cudaDeviceSynchronize();
  printf("FAIL: a 16-byte load 8 bytes off its alignment did not trap\n");
  return 1;
}
