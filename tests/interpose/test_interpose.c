/*
 * A plain MPI program (it knows nothing of Chorus) for libchorus_mpi.so: each
 * of the seven collectives is called through its MPI_ name, which the
 * preloaded interposer may send to Chorus, and again through its PMPI_ name,
 * which always reaches MPI; the results must be identical.  Rank 0 prints
 * the routing the run must report at MPI_Finalize ("expect: NAME chorus=C
 * mpi=M"), for interpose.sh to compare with the CHORUS_DEBUG=INFO lines.
 *
 *   test_interpose          the checks (exit 1 on any wrong result)
 *   test_interpose --bench  time the agreement and a small allreduce
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ALLREDUCE, REDUCE, BCAST, ALLGATHER, RSB, ALLTOALL, BARRIER, NCOLL };
static const char *names[NCOLL] = {"MPI_Allreduce", "MPI_Reduce", "MPI_Bcast", "MPI_Allgather",
                                   "MPI_Reduce_scatter_block", "MPI_Alltoall", "MPI_Barrier"};
static int expectChorus[NCOLL], expectMpi[NCOLL];
static int routable; /* CHORUS_INTERPOSE=all: supported host calls go to Chorus */
static int rank, size, failures;

/* One more call of `coll` that Chorus supports (1) or must leave to MPI (0). */
static void expect(int coll, int supported) {
  if (supported && routable)
    expectChorus[coll]++;
  else
    expectMpi[coll]++;
}

static void check(const char *what, const void *got, const void *want, size_t bytes) {
  if (memcmp(got, want, bytes) != 0) {
    fprintf(stderr, "rank %d: FAIL %s: result differs from PMPI's\n", rank, what);
    failures++;
  }
}

/* Inputs whose sums are exact in any order. */
static void fill(int *ip, double *dp, size_t n, int salt) {
  for (size_t i = 0; i < n; ++i) {
    ip[i] = (int)((i * 7 + (size_t)rank * 13 + (size_t)salt) % 1000) - 500;
    dp[i] = (double)ip[i] * 0.5;
  }
}

static void userSum(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  for (int i = 0; i < *len; ++i) ((int *)inout)[i] += ((int *)in)[i];
}

static void testSizes(MPI_Comm comm, const char *label) {
  int crank, csize;
  MPI_Comm_rank(comm, &crank);
  MPI_Comm_size(comm, &csize);
  const size_t counts[] = {1, 1000, 70001};
  for (int k = 0; k < 3; ++k) {
    const size_t n = counts[k], total = n * (size_t)csize;
    int *ia = malloc(total * sizeof(int)), *ib = malloc(total * sizeof(int)), *ic = malloc(total * sizeof(int));
    double *da = malloc(total * sizeof(double)), *db = malloc(total * sizeof(double));
    double *dc = malloc(total * sizeof(double));
    char what[96];
    fill(ia, da, total, k);
    snprintf(what, sizeof what, "%s allreduce double n=%zu", label, n);
    MPI_Allreduce(da, db, (int)n, MPI_DOUBLE, MPI_SUM, comm);
    PMPI_Allreduce(da, dc, (int)n, MPI_DOUBLE, MPI_SUM, comm);
    check(what, db, dc, n * sizeof(double));
    expect(ALLREDUCE, 1);
    snprintf(what, sizeof what, "%s allreduce in place int max n=%zu", label, n);
    memcpy(ib, ia, n * sizeof(int));
    memcpy(ic, ia, n * sizeof(int));
    MPI_Allreduce(MPI_IN_PLACE, ib, (int)n, MPI_INT, MPI_MAX, comm);
    PMPI_Allreduce(MPI_IN_PLACE, ic, (int)n, MPI_INT, MPI_MAX, comm);
    check(what, ib, ic, n * sizeof(int));
    expect(ALLREDUCE, 1);
    snprintf(what, sizeof what, "%s reduce int n=%zu", label, n);
    memset(ib, 0, n * sizeof(int));
    memset(ic, 0, n * sizeof(int));
    MPI_Reduce(ia, ib, (int)n, MPI_INT, MPI_SUM, csize - 1, comm);
    PMPI_Reduce(ia, ic, (int)n, MPI_INT, MPI_SUM, csize - 1, comm);
    check(what, ib, ic, n * sizeof(int));
    expect(REDUCE, 1);
    snprintf(what, sizeof what, "%s bcast n=%zu", label, n);
    memcpy(db, da, n * sizeof(double));
    memcpy(dc, da, n * sizeof(double));
    MPI_Bcast(db, (int)n, MPI_DOUBLE, 0, comm);
    PMPI_Bcast(dc, (int)n, MPI_DOUBLE, 0, comm);
    check(what, db, dc, n * sizeof(double));
    expect(BCAST, 1);
    snprintf(what, sizeof what, "%s allgather n=%zu", label, n);
    MPI_Allgather(ia, (int)n, MPI_INT, ib, (int)n, MPI_INT, comm);
    PMPI_Allgather(ia, (int)n, MPI_INT, ic, (int)n, MPI_INT, comm);
    check(what, ib, ic, total * sizeof(int));
    expect(ALLGATHER, 1);
    snprintf(what, sizeof what, "%s reduce_scatter_block n=%zu", label, n);
    MPI_Reduce_scatter_block(da, db, (int)n, MPI_DOUBLE, MPI_MIN, comm);
    PMPI_Reduce_scatter_block(da, dc, (int)n, MPI_DOUBLE, MPI_MIN, comm);
    check(what, db, dc, n * sizeof(double));
    expect(RSB, 1);
    snprintf(what, sizeof what, "%s alltoall n=%zu", label, n);
    MPI_Alltoall(ia, (int)n, MPI_INT, ib, (int)n, MPI_INT, comm);
    PMPI_Alltoall(ia, (int)n, MPI_INT, ic, (int)n, MPI_INT, comm);
    check(what, ib, ic, total * sizeof(int));
    expect(ALLTOALL, 1);
    MPI_Barrier(comm);
    expect(BARRIER, 1);
    (void)crank;
    free(ia), free(ib), free(ic), free(da), free(db), free(dc);
  }
}

/* MPI lets ranks differ here; the routing must not. */
static void testFallbacks(void) {
  int in[8], got[8], want[8];
  double dummy = 0;
  fill(in, &dummy, 1, 0);
  for (int i = 0; i < 8; ++i) in[i] = rank * 10 + i;
  /* Odd ranks: one contiguous type of 4 ints; even ranks: MPI_INT x 4.
   * Same type signature, so MPI allows it; Chorus refuses derived types. */
  MPI_Datatype four;
  MPI_Type_contiguous(4, MPI_INT, &four);
  MPI_Type_commit(&four);
  const int odd = rank % 2;
  memcpy(got, in, sizeof got);
  memcpy(want, in, sizeof want);
  MPI_Bcast(got, odd ? 1 : 4, odd ? four : MPI_INT, 0, MPI_COMM_WORLD);
  PMPI_Bcast(want, 4, MPI_INT, 0, MPI_COMM_WORLD);
  check("bcast, derived type on odd ranks", got, want, sizeof got);
  expect(BCAST, 0);
  int *all = malloc(4 * (size_t)size * sizeof(int)), *ref = malloc(4 * (size_t)size * sizeof(int));
  MPI_Allgather(in, odd ? 1 : 4, odd ? four : MPI_INT, all, 4, MPI_INT, MPI_COMM_WORLD);
  PMPI_Allgather(in, 4, MPI_INT, ref, 4, MPI_INT, MPI_COMM_WORLD);
  check("allgather, derived send type on odd ranks", all, ref, 4 * (size_t)size * sizeof(int));
  expect(ALLGATHER, 0);
  free(all), free(ref);
  MPI_Type_free(&four);
  /* A user op: Chorus refuses it on every rank. */
  MPI_Op op;
  MPI_Op_create(userSum, 1, &op);
  MPI_Allreduce(in, got, 8, MPI_INT, op, MPI_COMM_WORLD);
  PMPI_Allreduce(in, want, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  check("allreduce, user op", got, want, sizeof got);
  expect(ALLREDUCE, 0);
  MPI_Op_free(&op);
  /* An intercommunicator (even ranks with odd ones): Chorus refuses it on
   * every rank, with no agreement to make. */
  if (size > 1) {
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, odd, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, odd ? 0 : 1, 99, &inter);
    MPI_Allreduce(in, got, 8, MPI_INT, MPI_SUM, inter);
    PMPI_Allreduce(in, want, 8, MPI_INT, MPI_SUM, inter);
    check("allreduce on an intercommunicator", got, want, sizeof got);
    expect(ALLREDUCE, 0);
    MPI_Barrier(inter);
    expect(BARRIER, 0);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
  }
  /* A bad argument is MPI's error, raised the MPI way. */
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rc = MPI_Allreduce(in, got, -1, MPI_INT, MPI_SUM, comm), cls = MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  if (cls != MPI_ERR_COUNT) {
    fprintf(stderr, "rank %d: FAIL count -1: error class %d, MPI_ERR_COUNT expected\n", rank, cls);
    failures++;
  }
  expect(ALLREDUCE, 0);
  MPI_Comm_free(&comm);
}

static void bench(void) {
  const int iters = 20000;
  int flag = 7, agreed;
  double x = rank, y;
  double t[3];
  for (int round = 0; round < 2; ++round) { /* the first round warms up */
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) PMPI_Allreduce(&flag, &agreed, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) PMPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double t3 = MPI_Wtime();
    t[0] = t1 - t0, t[1] = t2 - t1, t[2] = t3 - t2;
  }
  if (rank == 0)
    printf("np %d: agreement (PMPI_Allreduce of 1 int, BAND) %.2f us; MPI_Allreduce of 1 double through the "
           "interposer %.2f us; PMPI_Allreduce of 1 double %.2f us (per call, %d calls)\n",
           size, 1e6 * t[0] / iters, 1e6 * t[1] / iters, 1e6 * t[2] / iters, iters);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *mode = getenv("CHORUS_INTERPOSE");
  routable = mode && strcmp(mode, "all") == 0;
  if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
    bench();
    MPI_Finalize();
    return 0;
  }
  testSizes(MPI_COMM_WORLD, "world");
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half); /* reversed order */
  testSizes(half, "split");
  MPI_Comm_free(&half);
  testFallbacks();
  int all = 0;
  PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int c = 0; c < NCOLL; ++c) printf("expect: %s chorus=%d mpi=%d\n", names[c], expectChorus[c], expectMpi[c]);
    printf("%s: %d wrong results over %d ranks\n", all ? "FAIL" : "PASS", all, size);
  }
  MPI_Finalize();
  return all ? 1 : 0;
}
