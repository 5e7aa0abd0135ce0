// Kernel group 1 of the instantiation table (kernel_table.h).
#define CHORUS_CUDA_GROUP 1
#include "cuda/kernels_impl.cuh"
