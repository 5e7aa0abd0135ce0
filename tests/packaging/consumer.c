/* A program built against an installed Chorus (CMake's find_package,
 * pkg-config, plain flags): its allreduce must match MPI_Allreduce on the
 * same data. */
#include <chorus.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  enum { N = 1000 };
  int in[N], ours[N], mpis[N], wrong = 0, anyWrong = 0;
  for (int i = 0; i < N; ++i) in[i] = rank * 7919 + i;
  int rc = MPIX_Allreduce_gpu(in, ours, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(in, mpis, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) wrong += ours[i] != mpis[i];
  MPI_Allreduce(&wrong, &anyWrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%s, built against the install: rc %d, %d wrong elements\n", MPIX_Gpu_version_string(), rc, anyWrong);
  MPI_Finalize();
  return rc != MPI_SUCCESS || anyWrong != 0;
}
