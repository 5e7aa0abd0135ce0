// Kernel group 4 of the instantiation table (kernel_table.h).
#define CHORUS_CUDA_GROUP 4
#include "cuda/kernels_impl.cuh"
