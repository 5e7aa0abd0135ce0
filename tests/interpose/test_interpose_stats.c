/*
 * A plain MPI program for interpose-stats.sh: a known number of collectives
 * on host buffers, each result checked against the value computed here, and
 * one call Chorus refuses under every setting (a user-defined op).  Rank 0
 * prints what the CHORUS_STATS "total" line of every rank must say:
 *
 *   calls: N supported S gpu G
 *
 * N calls in all, S of them ones Chorus supports, G whether some rank sees
 * a GPU (then the default CHORUS_INTERPOSE=device agrees per call and finds
 * host buffers, instead of routing nothing for the whole job).
 */
#include <mpi.h>
#include <stdio.h>

enum { N = 16 };
static int rank, size, calls, supported, failures;

/* The interposer's answer to "does this process see a GPU" (weak: this
 * program does not link Chorus). */
extern int chorus_interpose_local_device(void) __attribute__((weak));

static void want(const char *what, long got, long expected) {
  if (got != expected) {
    fprintf(stderr, "rank %d: FAIL %s: %ld, expected %ld\n", rank, what, got, expected);
    failures++;
  }
}

static void maxAbs(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  for (int i = 0; i < *len; ++i) {
    const int a = ((int *)in)[i], b = ((int *)inout)[i];
    ((int *)inout)[i] = (a < 0 ? -a : a) > (b < 0 ? -b : b) ? a : b;
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 8) {
    if (rank == 0) fprintf(stderr, "FAIL: the buffers hold 8 ranks' blocks, not %d\n", size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int device = chorus_interpose_local_device ? chorus_interpose_local_device() : 0, jobDevice = 0;
  PMPI_Allreduce(&device, &jobDevice, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

  int in[N * 8], out[N * 8];
  long sumRanks = (long)size * (size - 1) / 2;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < N; ++i) in[i] = rank + i + round;
    MPI_Allreduce(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < N; ++i) want("MPI_Allreduce", out[i], sumRanks + (long)size * (i + round));
    calls++, supported++;
  }
  for (int i = 0; i < N; ++i) in[i] = rank == 1 ? 7 * i : -1;
  MPI_Bcast(in, N, MPI_INT, 1 % size, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) want("MPI_Bcast", in[i], size > 1 ? 7 * i : -1);
  calls++, supported++;
  for (int i = 0; i < N; ++i) in[i] = rank * i;
  MPI_Reduce(in, out, N, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    for (int i = 0; i < N; ++i) want("MPI_Reduce", out[i], (long)(size - 1) * i);
  calls++, supported++;
  for (int i = 0; i < N; ++i) in[i] = 100 * rank + i;
  MPI_Allgather(in, N, MPI_INT, out, N, MPI_INT, MPI_COMM_WORLD);
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < N; ++i) want("MPI_Allgather", out[r * N + i], 100 * r + i);
  calls++, supported++;
  for (int i = 0; i < N * size; ++i) in[i] = i + rank;
  MPI_Reduce_scatter_block(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) want("MPI_Reduce_scatter_block", out[i], (long)size * (rank * N + i) + sumRanks);
  calls++, supported++;
  for (int i = 0; i < N * size; ++i) in[i] = 1000 * rank + i;
  MPI_Alltoall(in, N, MPI_INT, out, N, MPI_INT, MPI_COMM_WORLD);
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < N; ++i) want("MPI_Alltoall", out[r * N + i], 1000 * r + rank * N + i);
  calls++, supported++;
  MPI_Barrier(MPI_COMM_WORLD);
  calls++, supported++;
  /* Chorus reduces with its own ops only: this one is MPI's everywhere. */
  MPI_Op op;
  MPI_Op_create(maxAbs, 1, &op);
  /* Distinct magnitudes, the largest on the last rank: no tie to break. */
  for (int i = 0; i < N; ++i) in[i] = (rank % 2 ? -1 : 1) * (rank * N + i);
  MPI_Allreduce(in, out, N, MPI_INT, op, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i)
    want("MPI_Allreduce (user op)", out[i], ((size - 1) % 2 ? -1L : 1L) * ((size - 1) * N + i));
  calls++;
  MPI_Op_free(&op);

  int all = 0;
  PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("calls: %d supported %d gpu %d\n", calls, supported, jobDevice);
    printf("%s: %d wrong results over %d ranks\n", all ? "FAIL" : "PASS", all, size);
  }
  MPI_Finalize();
  return all ? 1 : 0;
}
