/* setup_cost.c - what a communicator spanning nodes costs a rank to set
 * up: the time of its first collective (the context and, with
 * CHORUS_NET_CONNECT=eager, every connection to other nodes), the memory
 * it adds (VmRSS), and the same again for the first alltoall, which links
 * every peer.  For perf/RESULTS.md, every rank its own played node.  Not
 * built by make:
 *
 *   mpicc -O2 -Iinclude perf/setup_cost.c -o setup_cost -L_build/src/.libs -lchorus
 *   for n in 16 32 64; do for c in lazy eager; do
 *     CHORUS_NET_CONNECT=$c CHORUS_TEST_LAYOUT=each UCX_TLS=tcp mpirun -np $n --oversubscribe \
 *       -x CHORUS_NET_CONNECT -x CHORUS_TEST_LAYOUT -x UCX_TLS tests/mpi/hostid-wrap.sh ./setup_cost </dev/null
 *   done; done
 *
 * Prints one line from rank 0: the largest and the mean over ranks of each
 * figure.  A first collective's time is set-up, not bandwidth: 8 B each.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chorus.h"

/* This process's resident memory in KiB (0 when /proc says nothing). */
static long residentKiB(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = 0;
  if (!f) return 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) kib = atol(line + 6);
  fclose(f);
  return kib;
}

static void report(const char *what, double value, int rank, int size) {
  double max = 0, sum = 0;
  MPI_Reduce(&value, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf(" %s max %.1f mean %.1f;", what, max, sum / size);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* Warm MPI itself (its own connections) so that only Chorus is timed. */
  int *sendAll = calloc((size_t)size, sizeof(int)), *recvAll = calloc((size_t)size, sizeof(int));
  MPI_Alltoall(sendAll, 1, MPI_INT, recvAll, 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Barrier(MPI_COMM_WORLD);
  const long before = residentKiB();
  double in = rank, out = 0, t = MPI_Wtime();
  int rc = MPIX_Allreduce_gpu(&in, &out, 1, MPI_DOUBLE, MPI_SUM, comm);
  const double firstMs = (MPI_Wtime() - t) * 1e3;
  const long afterFirst = residentKiB();
  t = MPI_Wtime();
  rc |= MPIX_Allreduce_gpu(&in, &out, 1, MPI_DOUBLE, MPI_SUM, comm);
  const double secondMs = (MPI_Wtime() - t) * 1e3;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int p = 0; p < size; ++p) sendAll[p] = rank * size + p;
  t = MPI_Wtime();
  rc |= MPIX_Alltoall_gpu(sendAll, 1, MPI_INT, recvAll, 1, MPI_INT, comm);
  const double alltoallMs = (MPI_Wtime() - t) * 1e3;
  const long afterAll = residentKiB();
  int wrong = rc != MPI_SUCCESS || out != (double)size * (size - 1) / 2;
  for (int p = 0; p < size; ++p) wrong |= recvAll[p] != p * size + rank;
  int anyWrong = 0;
  MPI_Reduce(&wrong, &anyWrong, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
  const char *mode = getenv("CHORUS_NET_CONNECT");
  if (rank == 0) printf("%d ranks, CHORUS_NET_CONNECT=%s:", size, mode ? mode : "lazy (default)");
  report("first allreduce ms", firstMs, rank, size);
  report("second ms", secondMs, rank, size);
  report("its KiB", (double)(afterFirst - before), rank, size);
  report("first alltoall ms", alltoallMs, rank, size);
  report("then KiB in all", (double)(afterAll - before), rank, size);
  if (rank == 0) printf(" %s\n", anyWrong ? "WRONG RESULTS" : "results right");
  MPIX_Comm_gpu_free(comm);
  MPI_Comm_free(&comm);
  free(sendAll);
  free(recvAll);
  MPI_Finalize();
  return anyWrong;
}
