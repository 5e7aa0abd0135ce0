/* A plain MPI program (no chorus.h) linked with CMake's Chorus::chorus_mpi:
 * its MPI_Allreduce goes to Chorus (CHORUS_INTERPOSE=all, set by the test)
 * and must match PMPI_Allreduce on the same data. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  enum { N = 1000 };
  double in[N], routed[N], plain[N];
  int wrong = 0, anyWrong = 0;
  for (int i = 0; i < N; ++i) in[i] = rank * 0.5 + i;
  MPI_Allreduce(in, routed, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  PMPI_Allreduce(in, plain, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) wrong += routed[i] != plain[i];
  PMPI_Allreduce(&wrong, &anyWrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("MPI_Allreduce via Chorus::chorus_mpi: %d wrong elements\n", anyWrong);
  MPI_Finalize();
  return anyWrong != 0;
}
