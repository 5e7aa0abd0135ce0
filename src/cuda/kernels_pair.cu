// Kernel group 5 of the instantiation table (coll/type_table.h): MINLOC/MAXLOC pairs.
#define CHORUS_CUDA_GROUP 5
#include "cuda/kernels_impl.cuh"
