// Kernel group 0 of the instantiation table (kernel_table.h).
#define CHORUS_CUDA_GROUP 0
#include "cuda/kernels_impl.cuh"
