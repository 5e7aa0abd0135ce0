// What every GPU test program does first: abort on a failed CUDA call, and
// pick a GPU for this rank (round robin by rank within the node, so
// several ranks may share one) or skip the whole run when any rank has none.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>

#define CUDA_OK(call)                                                                                 \
  do {                                                                                                \
    cudaError_t e_ = (call);                                                                          \
    if (e_ != cudaSuccess) {                                                                          \
      int r_ = 0;                                                                                     \
      MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                                             \
      fprintf(stderr, "rank %d: %s:%d: %s failed: %s\n", r_, __FILE__, __LINE__, #call,               \
              cudaGetErrorString(e_));                                                                \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                   \
    }                                                                                                 \
  } while (0)

// Sets this rank's device.  Returns false (after MPI_Finalize, with
// "skipped: no GPU" printed by rank 0) when some rank has no GPU: the
// caller then exits 77, which the harness counts as skipped.
inline bool selectGpuOrSkip(int *device, int *ndevices) {
  int rank = 0, ndev = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int haveGpu = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0;
  int allHave = 0;
  MPI_Allreduce(&haveGpu, &allHave, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!allHave) {
    if (rank == 0) printf("skipped: no GPU\n");
    MPI_Finalize();
    return false;
  }
  MPI_Comm node;
  int nodeRank = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &nodeRank);
  MPI_Comm_free(&node);
  CUDA_OK(cudaSetDevice(nodeRank % ndev));
  *device = nodeRank % ndev;
  *ndevices = ndev;
  return true;
}
