/* A plain MPI program (no chorus.h) for interpose-hostile.sh, with
 * libchorus_mpi.so preloaded and CHORUS_INTERPOSE=all (issue 33, item 6).
 *
 *   test_interpose_hostile negative-count: MPI_Allreduce with count -1 on a
 *     derived type that the interposer stages (a vector: not dense) must
 *     reach the communicator's error handler, as MPI's own checks do, with
 *     MPI_ERR_COUNT, not return MPI_ERR_NO_MEM unseen.
 *   test_interpose_hostile full-shm: Chorus cannot set up (full_shm.so makes
 *     /dev/shm look full to it): the collectives fall back to MPI on every
 *     rank and give MPI's results, and the program does not abort.
 *
 * One PASS or FAIL line per rank. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int g_handled = 0, g_lastCode = MPI_SUCCESS;

static void countErrors(MPI_Comm *comm, int *code, ...) {
  (void)comm;
  ++g_handled;
  g_lastCode = *code;
}

static int negativeCount(int rank, char *why, size_t len) {
  MPI_Errhandler handler;
  MPI_Comm_create_errhandler(countErrors, &handler);
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, handler);
  MPI_Datatype strided;
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  int in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {0};
  int bad = 0;
  const int calls[] = {0, 1, 2};
  for (int k = 0; k < 3 && !bad; ++k) {
    g_handled = 0;
    g_lastCode = MPI_SUCCESS;
    int rc = MPI_SUCCESS;
    const char *what = "";
    switch (calls[k]) {
      case 0: what = "MPI_Allreduce"; rc = MPI_Allreduce(in, out, -1, strided, MPI_SUM, c); break;
      case 1: what = "MPI_Bcast"; rc = MPI_Bcast(out, -1, strided, 0, c); break;
      case 2: what = "MPI_Reduce"; rc = MPI_Reduce(in, out, -1, strided, MPI_SUM, 0, c); break;
    }
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    if (rc == MPI_SUCCESS) {
      snprintf(why, len, "%s with count -1 returned MPI_SUCCESS", what);
      bad = 1;
    } else if (g_handled != 1) {
      snprintf(why, len, "%s with count -1 returned %d without calling the error handler (%d calls)", what, rc,
               g_handled);
      bad = 1;
    } else if (cls == MPI_ERR_NO_MEM) {
      snprintf(why, len, "%s with count -1 reported MPI_ERR_NO_MEM", what);
      bad = 1;
    }
  }
  /* The communicator still works, through the staged path. */
  if (!bad) {
    int a[4] = {rank, -1, rank, -1}, r[4] = {0, -5, 0, -5}, size = 1;
    MPI_Comm_size(c, &size);
    if (MPI_Allreduce(a, r, 1, strided, MPI_SUM, c) != MPI_SUCCESS || r[0] != size * (size - 1) / 2 ||
        r[2] != size * (size - 1) / 2 || r[1] != -5) {
      snprintf(why, len, "a valid staged allreduce afterwards went wrong (%d %d %d)", r[0], r[1], r[2]);
      bad = 1;
    }
  }
  MPI_Type_free(&strided);
  MPI_Comm_free(&c);
  MPI_Errhandler_free(&handler);
  return bad;
}

static int fullShm(int rank, int size, char *why, size_t len) {
  int bad = 0;
  for (int round = 0; round < 3 && !bad; ++round) {
    long in[1000], out[1000];
    for (int i = 0; i < 1000; ++i) in[i] = rank + i + round, out[i] = -1;
    if (MPI_Allreduce(in, out, 1000, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) {
      snprintf(why, len, "MPI_Allreduce failed");
      bad = 1;
    }
    for (int i = 0; i < 1000 && !bad; ++i)
      if (out[i] != (long)size * (size - 1) / 2 + (long)size * (i + round)) {
        snprintf(why, len, "MPI_Allreduce round %d: element %d is %ld", round, i, out[i]);
        bad = 1;
      }
  }
  if (!bad && MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS) {
    snprintf(why, len, "MPI_Barrier failed");
    bad = 1;
  }
  return bad;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char why[256] = "";
  int bad = 1;
  if (argc > 1 && strcmp(argv[1], "negative-count") == 0)
    bad = negativeCount(rank, why, sizeof why);
  else if (argc > 1 && strcmp(argv[1], "full-shm") == 0)
    bad = fullShm(rank, size, why, sizeof why);
  else
    snprintf(why, sizeof why, "usage: test_interpose_hostile negative-count | full-shm");
  printf("%s rank %d%s%s\n", bad ? "FAIL" : "PASS", rank, bad ? ": " : "", why);
  fflush(stdout);
  MPI_Finalize();
  return bad;
}
