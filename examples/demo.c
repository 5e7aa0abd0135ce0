/*
 * Chorus demo: MPIX_Allreduce_gpu next to MPI_Allreduce on the same host
 * buffers, for sizes from 8 B to 16 MiB.  For each size it checks that both
 * give the same floats and prints the time of each (the slowest rank's
 * average over the iterations).
 *
 *   mpirun -np 4 ./demo
 */
#include <chorus.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double time_calls(int use_chorus, const float *send, float *recv, MPI_Count count, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    if (use_chorus)
      MPIX_Allreduce_gpu(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else
      MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  double mine = (MPI_Wtime() - start) / iters, slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const MPI_Count max_count = (16 << 20) / sizeof(float);
  float *send = malloc(max_count * sizeof(float));
  float *chorus_out = malloc(max_count * sizeof(float));
  float *mpi_out = malloc(max_count * sizeof(float));
  /* Small integers: every summation order gives the same float. */
  for (MPI_Count i = 0; i < max_count; ++i) send[i] = (float)((i * 7 + rank * 3) % 101);

  if (rank == 0) {
    printf("%s, %d ranks, float sum, host memory\n", MPIX_Gpu_version_string(), size);
    printf("%12s %10s %14s %14s %8s\n", "bytes", "correct", "chorus (us)", "MPI (us)", "MPI/chorus");
  }
  int all_correct = 1;
  for (MPI_Count count = 2; count <= max_count; count *= 4) {
    memset(chorus_out, 0, count * sizeof(float));
    MPIX_Allreduce_gpu(send, chorus_out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(send, mpi_out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    int correct = memcmp(chorus_out, mpi_out, count * sizeof(float)) == 0, everywhere = 0;
    MPI_Allreduce(&correct, &everywhere, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    all_correct &= everywhere;
    const int iters = count * sizeof(float) < (1 << 20) ? 200 : 10;
    double t_chorus = time_calls(1, send, chorus_out, count, iters);
    double t_mpi = time_calls(0, send, mpi_out, count, iters);
    if (rank == 0)
      printf("%12lld %10s %14.1f %14.1f %8.2f\n", (long long)(count * sizeof(float)), everywhere ? "yes" : "NO",
             t_chorus * 1e6, t_mpi * 1e6, t_mpi / t_chorus);
  }
  if (rank == 0) printf("%s\n", all_correct ? "all results match MPI_Allreduce" : "MISMATCH against MPI_Allreduce");
  free(send);
  free(chorus_out);
  free(mpi_out);
  MPI_Finalize();
  return all_correct ? 0 : 1;
}
