// Two spellings of CUDA's device language that g++ cannot parse, so that the
// kernels also compile against the CPU emulation (src/cuda/emu), whose
// cuda_runtime.h defines them its own way first.
//
//   CHORUS_LAUNCH(kernel, grid, block, sharedBytes, stream, args...)
//       kernel<<<grid, block, sharedBytes, stream>>>(args...); a kernel
//       template's name goes in parentheses: CHORUS_LAUNCH((k<A, B>), ...).
//   CHORUS_BLOCK_SHARED(Type, name)
//       __shared__ Type name;  one per block, uninitialised.
#pragma once

#include <cuda_runtime.h>

#ifndef CHORUS_LAUNCH
#define CHORUS_LAUNCH(kernel, grid, block, sharedBytes, stream, ...) \
  kernel<<<grid, block, sharedBytes, stream>>>(__VA_ARGS__)
#endif

#ifndef CHORUS_BLOCK_SHARED
#define CHORUS_BLOCK_SHARED(Type, name) __shared__ Type name
#endif
