/* CHORUS_REPRODUCIBLE=exact through libchorus_mpi.so (issue 30): an
 * unmodified program's MPI_Allreduce, MPI_Reduce and
 * MPI_Reduce_scatter_block of doubles give the exact sums.  Element i's
 * contributions are 1e16, 1 and -1e16, on ranks that rotate with i (other
 * ranks hold 0): the exact sum is 1 for every element, which no order of
 * ordinary double additions gives for all three rotations.  MPI_PROD on
 * doubles, refused by the exact mode, still completes (through MPI).
 * Prints PASS or FAIL per rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double contribution(int rank, int i) {
  static const double v[3] = {1e16, 1.0, -1e16};
  return rank < 3 ? v[(rank + i) % 3] : 0.0;
}

static int checkAll(const double *x, int n, const char *what, int rank) {
  for (int i = 0; i < n; ++i)
    if (x[i] != 1.0) {
      printf("FAIL rank %d: %s: element %d is %.17g, the exact sum is 1\n", rank, what, i, x[i]);
      return 1;
    }
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int n = 30; n <= 30000; n *= 10) {  /* the small calls' allgather, and the passes */
    const int count = n - n % size;
    double *in = malloc(sizeof(double) * (size_t)count), *out = malloc(sizeof(double) * (size_t)count);
    for (int i = 0; i < count; ++i) in[i] = contribution(rank, i);
    MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    bad |= checkAll(out, count, "MPI_Allreduce", rank);
    MPI_Reduce(in, out, count, MPI_DOUBLE, MPI_SUM, size - 1, MPI_COMM_WORLD);
    if (rank == size - 1) bad |= checkAll(out, count, "MPI_Reduce", rank);
    MPI_Reduce_scatter_block(in, out, count / size, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    bad |= checkAll(out, count / size, "MPI_Reduce_scatter_block", rank);
    free(in);
    free(out);
  }
  double p = 1.5, q = 0;
  MPI_Allreduce(&p, &q, 1, MPI_DOUBLE, MPI_PROD, MPI_COMM_WORLD);
  double want = 1;
  for (int r = 0; r < size; ++r) want *= 1.5;
  if (q != want) {
    printf("FAIL rank %d: MPI_PROD gave %g, not %g\n", rank, q, want);
    bad = 1;
  }
  if (!bad) printf("PASS rank %d\n", rank);
  fflush(stdout);
  MPI_Finalize();
  return bad;
}
