// Kernel group 2 of the instantiation table (kernel_table.h).
#define CHORUS_CUDA_GROUP 2
#include "cuda/kernels_impl.cuh"
