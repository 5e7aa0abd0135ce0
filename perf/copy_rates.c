/* copy_rates.c - how fast a process can copy a peer's memory with CMA
 * (process_vm_readv, Open MPI vader's single-copy mechanism) against a
 * plain memcpy of its own, for perf/RESULTS.md.  Not built by make:
 *
 *   mpicc -O2 perf/copy_rates.c -o copy_rates
 *   for n in 65536 524288 2097152 8388608; do mpirun -np 2 ./copy_rates $n; done
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2 || argc != 2 || atol(argv[1]) <= 0) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 %s BYTES\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const size_t n = (size_t)atol(argv[1]);
  char *mine = malloc(n), *dst = malloc(n);
  if (!mine || !dst) MPI_Abort(MPI_COMM_WORLD, 2);
  memset(mine, rank + 1, n);
  memset(dst, 0, n);
  struct { pid_t pid; void *addr; } me = {getpid(), mine}, peer;
  MPI_Sendrecv(&me, sizeof me, MPI_BYTE, 1 - rank, 0, &peer, sizeof peer, MPI_BYTE, 1 - rank, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  const int iters = 200;
  int ok = 1;
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters && ok; ++i) {
    struct iovec local = {dst, n}, remote = {peer.addr, n};
    if (process_vm_readv(peer.pid, &local, 1, &remote, 1, 0) != (ssize_t)n) {
      perror("process_vm_readv");
      ok = 0;
    }
  }
  const double cma = (MPI_Wtime() - t0) / iters;
  MPI_Barrier(MPI_COMM_WORLD); /* the peer must not free (or exit) while we read it */
  if (ok && dst[n - 1] != 2 - rank) ok = 0; /* the peer's fill byte */
  t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) memcpy(dst, mine, n);
  const double copy = (MPI_Wtime() - t0) / iters;
  printf("rank %d, %zu B: CMA %.1f us (%.1f GB/s), memcpy %.1f us (%.1f GB/s)%s\n", rank, n, cma * 1e6,
         n / cma / 1e9, copy * 1e6, n / copy / 1e9, ok ? "" : "  [CMA FAILED]");
  free(mine);
  free(dst);
  MPI_Finalize();
  return ok ? 0 : 1;
}
