// Kernel group 3 of the instantiation table (kernel_table.h).
#define CHORUS_CUDA_GROUP 3
#include "cuda/kernels_impl.cuh"
