// What every GPU test program does first: abort on a failed CUDA call, and
// pick a GPU for this rank (round robin by rank within the node, so
// several ranks may share one) or skip the whole run when any rank has none.
// And how the small programs (test_gpu_wrap, test_gpu_lifecycle) record a
// case's verdict; the suite (gpu_suite.h) has its own, which limits what it
// prints over its thousands of cases.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <string>

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

// Cases checked and failed so far, every rank's verdict agreed.
struct CaseCount {
  long checked = 0;
  long failed = 0;
};

// One case's verdict: `why` is empty when it passed on this rank.  Every
// rank counts a failure on any rank; the failing ranks say why on stderr.
inline void checkCase(CaseCount &count, const std::string &what, const std::string &why) {
  const int bad = why.empty() ? 0 : 1;
  int anyBad = 0, rank = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ++count.checked;
  if (bad) fprintf(stderr, "rank %d: FAIL %s: %s\n", rank, what.c_str(), why.c_str());
  if (anyBad) ++count.failed;
}

// MPI's text for an error code.
inline std::string mpiErrorText(int rc) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return text;
}
