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
#include <stddef.h>
#include <string.h>

enum { ALLREDUCE, REDUCE, BCAST, ALLGATHER, RSB, ALLTOALL, BARRIER,
       IALLREDUCE, IREDUCE, IBCAST, IALLGATHER, IRSB, IALLTOALL, IBARRIER, NCOLL };
static const char *names[NCOLL] = {"MPI_Allreduce", "MPI_Reduce", "MPI_Bcast", "MPI_Allgather",
                                   "MPI_Reduce_scatter_block", "MPI_Alltoall", "MPI_Barrier",
                                   "MPI_Iallreduce", "MPI_Ireduce", "MPI_Ibcast", "MPI_Iallgather",
                                   "MPI_Ireduce_scatter_block", "MPI_Ialltoall", "MPI_Ibarrier"};
static int expectChorus[NCOLL], expectMpi[NCOLL];
static int routable; /* CHORUS_INTERPOSE=all: supported host calls go to Chorus */
/* ... and the MPI_I* forms too: MPI_THREAD_MULTIPLE, and no rank of the job
 * can hold device memory (else the interposer agrees per call, which a
 * nonblocking call cannot; README, "Zero code change"). */
static int routableNonblocking;
/* Whether some rank sees a GPU: then the interposer agrees per call and
 * leaves types that need staging (strided ones) to MPI. */
static int jobDevice;
static int rank, size, failures;

/* The interposer's own answer to "does this process see a GPU", when it is
 * loaded (weak: this program does not link Chorus). */
extern int chorus_interpose_local_device(void) __attribute__((weak));

/* One more call of `coll` that Chorus supports (1) or must leave to MPI (0). */
static void expect(int coll, int supported) {
  if (supported && (coll >= IALLREDUCE ? routableNonblocking : routable))
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

/* MPI lets ranks differ here; the routing must not.  It is decided from
 * the type signature: both ranks below route (Chorus moves n ints; in a
 * job with a GPU the strided ones go to MPI on every rank). */
static void testFallbacks(void) {
  int in[8], got[8], want[8];
  double dummy = 0;
  fill(in, &dummy, 1, 0);
  for (int i = 0; i < 8; ++i) in[i] = rank * 10 + i;
  /* Odd ranks: one contiguous type of 4 ints; even ranks: MPI_INT x 4. */
  MPI_Datatype four;
  MPI_Type_contiguous(4, MPI_INT, &four);
  MPI_Type_commit(&four);
  const int odd = rank % 2;
  memcpy(got, in, sizeof got);
  memcpy(want, in, sizeof want);
  MPI_Bcast(got, odd ? 1 : 4, odd ? four : MPI_INT, 0, MPI_COMM_WORLD);
  PMPI_Bcast(want, 4, MPI_INT, 0, MPI_COMM_WORLD);
  check("bcast, contiguous type on odd ranks", got, want, sizeof got);
  expect(BCAST, 1);
  int *all = malloc(8 * (size_t)size * sizeof(int)), *ref = malloc(8 * (size_t)size * sizeof(int));
  MPI_Allgather(in, odd ? 1 : 4, odd ? four : MPI_INT, all, 4, MPI_INT, MPI_COMM_WORLD);
  PMPI_Allgather(in, 4, MPI_INT, ref, 4, MPI_INT, MPI_COMM_WORLD);
  check("allgather, contiguous send type on odd ranks", all, ref, 4 * (size_t)size * sizeof(int));
  expect(ALLGATHER, 1);
  MPI_Type_free(&four);
  /* Odd ranks: every other int of 8 (a vector, not dense: staged by the
   * interposer); even ranks: MPI_INT x 4.  The gaps must stay untouched. */
  MPI_Datatype strided;
  MPI_Type_vector(4, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  for (int i = 0; i < 8; ++i) got[i] = want[i] = rank == 0 ? 100 + i : -1 - i;
  MPI_Bcast(got, odd ? 1 : 4, odd ? strided : MPI_INT, 0, MPI_COMM_WORLD);
  PMPI_Bcast(want, odd ? 1 : 4, odd ? strided : MPI_INT, 0, MPI_COMM_WORLD);
  check("bcast, strided type on odd ranks", got, want, sizeof got);
  expect(BCAST, !jobDevice);
  for (size_t i = 0; i < 8 * (size_t)size; ++i) all[i] = ref[i] = -7;
  MPI_Allgather(in, 4, MPI_INT, all, odd ? 1 : 4, odd ? strided : MPI_INT, MPI_COMM_WORLD);
  PMPI_Allgather(in, 4, MPI_INT, ref, odd ? 1 : 4, odd ? strided : MPI_INT, MPI_COMM_WORLD);
  check("allgather, strided receive type on odd ranks", all, ref, 8 * (size_t)size * sizeof(int));
  expect(ALLGATHER, !jobDevice);
  /* (A strided block spans 7 ints: block j starts at int 7j.) */
  int *src = malloc(8 * (size_t)size * sizeof(int));
  for (size_t i = 0; i < 8 * (size_t)size; ++i) src[i] = rank * 1000 + (int)i;
  MPI_Alltoall(src, odd ? 1 : 4, odd ? strided : MPI_INT, all, 4, MPI_INT, MPI_COMM_WORLD);
  PMPI_Alltoall(src, odd ? 1 : 4, odd ? strided : MPI_INT, ref, 4, MPI_INT, MPI_COMM_WORLD);
  check("alltoall, strided send type on odd ranks", all, ref, 4 * (size_t)size * sizeof(int));
  expect(ALLTOALL, !jobDevice);
  MPI_Type_free(&strided);
  free(all), free(ref), free(src);
  /* An int and a double: not one predefined type repeated, on every rank
   * alike (equal signatures), so MPI's everywhere. */
  struct { int i; double d; } pair = {rank == 0 ? 5 : 0, rank == 0 ? 2.5 : 0}, pairRef = pair;
  MPI_Datatype mixed;
  int lengths[2] = {1, 1};
  MPI_Aint displs[2] = {offsetof(__typeof__(pair), i), offsetof(__typeof__(pair), d)};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, lengths, displs, types, &mixed);
  MPI_Type_commit(&mixed);
  MPI_Bcast(&pair, 1, mixed, 0, MPI_COMM_WORLD);
  PMPI_Bcast(&pairRef, 1, mixed, 0, MPI_COMM_WORLD);
  check("bcast, struct of an int and a double", &pair, &pairRef, sizeof pair);
  expect(BCAST, 0);
  MPI_Type_free(&mixed);
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
#ifdef MPICH_VERSION
  /* MPICH 4.0.2 does not check a negative count here (it crashes in its
   * pack code, with or without this library); a null datatype it refuses. */
  int rc = MPI_Allreduce(in, got, 8, MPI_DATATYPE_NULL, MPI_SUM, comm);
  if (rc == MPI_SUCCESS) {
    fprintf(stderr, "rank %d: FAIL MPI_DATATYPE_NULL: MPI_SUCCESS, an error expected\n", rank);
    failures++;
  }
#else
  int rc = MPI_Allreduce(in, got, -1, MPI_INT, MPI_SUM, comm), cls = MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  if (cls != MPI_ERR_COUNT) {
    fprintf(stderr, "rank %d: FAIL count -1: error class %d, MPI_ERR_COUNT expected\n", rank, cls);
    failures++;
  }
#endif
  expect(ALLREDUCE, 0);
  MPI_Comm_free(&comm);
}

/* The MPI_I* forms, each against the PMPI_ call on the same data, in one
 * request array with MPI's own point-to-point requests. */
static void testNonblocking(void) {
  const int n = 1000;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  /* No Chorus context on a new communicator yet (setting one up blocks): MPI's. */
  int x = rank + 1, sum = 0, sumRef = 0;
  MPI_Request req[6];
  MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm, &req[0]);
  MPI_Wait(&req[0], MPI_STATUS_IGNORE);
  PMPI_Allreduce(&x, &sumRef, 1, MPI_INT, MPI_SUM, comm);
  check("iallreduce on a new communicator", &sum, &sumRef, sizeof sum);
  expect(IALLREDUCE, 0);
  MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm); /* sets it up */
  check("allreduce on that communicator", &sum, &sumRef, sizeof sum);
  expect(ALLREDUCE, 1);

  const size_t total = (size_t)n * (size_t)size;
  int *ia = malloc(total * sizeof(int)), *ib = malloc(total * sizeof(int)), *ic = malloc(total * sizeof(int));
  double *da = malloc(total * sizeof(double)), *db = malloc(total * sizeof(double));
  double *dc = malloc(total * sizeof(double));
  fill(ia, da, total, 3);
  /* A ring of point-to-point messages overlapping two collectives. */
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int tokenOut = rank * 7, tokenIn = -1;
  double *bc = malloc((size_t)n * sizeof(double)), *bcRef = malloc((size_t)n * sizeof(double));
  memcpy(bc, da, (size_t)n * sizeof(double));
  memcpy(bcRef, da, (size_t)n * sizeof(double));
  MPI_Iallreduce(da, db, n, MPI_DOUBLE, MPI_SUM, comm, &req[0]);
  expect(IALLREDUCE, 1);
  MPI_Irecv(&tokenIn, 1, MPI_INT, left, 7, comm, &req[1]);
  MPI_Isend(&tokenOut, 1, MPI_INT, right, 7, comm, &req[2]);
  MPI_Ibcast(bc, n, MPI_DOUBLE, size - 1, comm, &req[3]);
  expect(IBCAST, 1);
  MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
  PMPI_Allreduce(da, dc, n, MPI_DOUBLE, MPI_SUM, comm);
  check("iallreduce double", db, dc, (size_t)n * sizeof(double));
  PMPI_Bcast(bcRef, n, MPI_DOUBLE, size - 1, comm);
  check("ibcast double", bc, bcRef, (size_t)n * sizeof(double));
  if (tokenIn != left * 7) {
    fprintf(stderr, "rank %d: FAIL the ring's token came as %d, not %d\n", rank, tokenIn, left * 7);
    failures++;
  }
  /* Rank 0 sends rank 1 a message that needs a matching receive (1 MiB:
   * rendezvous) after starting the allreduce; rank 1 receives it before
   * starting its own.  Fine with MPI; a nonblocking call that waited for
   * its peers at the start would deadlock here. */
  if (size >= 2) {
    const int big = 1 << 17;
    double *msg = malloc((size_t)big * sizeof(double));
    for (int i = 0; i < big; ++i) msg[i] = i;
    if (rank == 0) {
      MPI_Iallreduce(da, db, n, MPI_DOUBLE, MPI_SUM, comm, &req[0]);
      MPI_Send(msg, big, MPI_DOUBLE, 1, 8, comm);
    } else {
      if (rank == 1) MPI_Recv(msg, big, MPI_DOUBLE, 0, 8, comm, MPI_STATUS_IGNORE);
      MPI_Iallreduce(da, db, n, MPI_DOUBLE, MPI_SUM, comm, &req[0]);
    }
    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    check("iallreduce started before a rendezvous send", db, dc, (size_t)n * sizeof(double));
    expect(IALLREDUCE, 1);
    free(msg);
  }
  /* The other five, completed by MPI_Testany among a point-to-point pair. */
  MPI_Datatype strided;
  MPI_Type_vector(n, 1, 2, MPI_INT, &strided); /* not dense: staged */
  MPI_Type_commit(&strided);
  int *sparse = malloc(2 * total * sizeof(int)), *sparseRef = malloc(2 * total * sizeof(int));
  for (size_t i = 0; i < 2 * total; ++i) sparse[i] = sparseRef[i] = -3;
  const int odd = rank % 2;
  int *red = malloc((size_t)n * sizeof(int)), *redRef = malloc((size_t)n * sizeof(int));
  memset(red, 0, (size_t)n * sizeof(int));
  memset(redRef, 0, (size_t)n * sizeof(int));
  MPI_Ireduce(ia, red, n, MPI_INT, MPI_MAX, 0, comm, &req[0]);
  expect(IREDUCE, 1);
  MPI_Iallgather(ia, n, MPI_INT, odd ? (void *)sparse : (void *)ib, odd ? 1 : n, odd ? strided : MPI_INT, comm,
                 &req[1]);
  expect(IALLGATHER, 1);
  MPI_Ireduce_scatter_block(da, db, n, MPI_DOUBLE, MPI_SUM, comm, &req[2]);
  expect(IRSB, 1);
  MPI_Ialltoall(ia, n, MPI_INT, ic, n, MPI_INT, comm, &req[3]);
  expect(IALLTOALL, 1);
  MPI_Irecv(&tokenIn, 1, MPI_INT, left, 9, comm, &req[4]);
  MPI_Isend(&tokenOut, 1, MPI_INT, right, 9, comm, &req[5]);
  for (int done = 0; done < 6; ++done) {
    int index = MPI_UNDEFINED, flag = 0;
    while (!flag) MPI_Testany(6, req, &index, &flag, MPI_STATUS_IGNORE);
  }
  MPI_Type_free(&strided); /* freed after completion here; the interposer keeps its own handle */
  PMPI_Reduce(ia, redRef, n, MPI_INT, MPI_MAX, 0, comm);
  if (rank == 0) check("ireduce int max", red, redRef, (size_t)n * sizeof(int));
  int *gathered = malloc(total * sizeof(int));
  PMPI_Allgather(ia, n, MPI_INT, gathered, n, MPI_INT, comm);
  if (odd) {
    MPI_Datatype sp;
    MPI_Type_vector(n, 1, 2, MPI_INT, &sp);
    MPI_Type_commit(&sp);
    PMPI_Allgather(ia, n, MPI_INT, sparseRef, 1, sp, comm);
    MPI_Type_free(&sp);
    check("iallgather into a strided type", sparse, sparseRef, 2 * total * sizeof(int));
  } else {
    PMPI_Allgather(ia, n, MPI_INT, sparseRef, n, MPI_INT, comm); /* the odd ranks' reference call */
    check("iallgather int", ib, gathered, total * sizeof(int));
  }
  PMPI_Reduce_scatter_block(da, dc, n, MPI_DOUBLE, MPI_SUM, comm);
  check("ireduce_scatter_block double", db, dc, (size_t)n * sizeof(double));
  PMPI_Alltoall(ia, n, MPI_INT, ib, n, MPI_INT, comm);
  check("ialltoall int", ic, ib, total * sizeof(int));
  MPI_Ibarrier(comm, &req[0]);
  MPI_Wait(&req[0], MPI_STATUS_IGNORE);
  expect(IBARRIER, 1);
  free(ia), free(ib), free(ic), free(da), free(db), free(dc), free(bc), free(bcRef);
  free(sparse), free(sparseRef), free(red), free(redRef), free(gathered);
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
  /* TEST_INTERPOSE_THREADS=multiple: MPI_THREAD_MULTIPLE, where the MPI_I*
   * forms may go to Chorus. */
  const char *threads = getenv("TEST_INTERPOSE_THREADS");
  int provided = MPI_THREAD_SINGLE;
  if (threads && strcmp(threads, "multiple") == 0)
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  else
    MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *mode = getenv("CHORUS_INTERPOSE");
  routable = mode && strcmp(mode, "all") == 0;
  int device = chorus_interpose_local_device ? chorus_interpose_local_device() : 0;
  PMPI_Allreduce(&device, &jobDevice, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  routableNonblocking = routable && provided == MPI_THREAD_MULTIPLE && !jobDevice;
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
  testNonblocking();
  int all = 0;
  PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int c = 0; c < NCOLL; ++c) printf("expect: %s chorus=%d mpi=%d\n", names[c], expectChorus[c], expectMpi[c]);
    printf("%s: %d wrong results over %d ranks\n", all ? "FAIL" : "PASS", all, size);
  }
  MPI_Finalize();
  return all ? 1 : 0;
}
