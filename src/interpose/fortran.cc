// The Fortran entry points of the seven collectives, their nonblocking
// forms, and MPI_INIT and MPI_INIT_THREAD (so that a Fortran program's job
// learns, as a C program's does, whether any rank sees a GPU), for MPIs whose Fortran
// bindings do not reach the C MPI_* functions (and so would bypass
// interpose.cc).  Open MPI 4.1's do not: its mpif.h and `use mpi` procedures
// (mpi_allreduce_ and its aliases in libmpi_mpifh) call PMPI_Allreduce, and
// its `use mpi_f08` procedures (mpi_allreduce_f08_ in libmpi_usempif08) call
// ompi_allreduce_f in libmpi_mpifh, which calls PMPI_Allreduce too.  So each
// collective is defined here under the four names compilers give the
// mpif.h/`use mpi` procedure and under Open MPI's ompi_*_f, which the f08
// procedures reach through the dynamic linker.  Each converts the handles
// and Fortran's MPI_IN_PLACE, and calls the C function of interpose.cc, so a
// Fortran call is routed, counted and reported as a C call is.
//
// MPICH 4's (libmpifort) do reach the C functions: its mpif.h procedures
// (pmpi_allreduce_ and aliases) and its f08 collectives (through
// MPIR_*_cdesc) call MPI_Allreduce, so under MPICH the mpif.h names below
// hand the call to MPICH's own pmpi_*_, which also knows MPICH's Fortran
// MPI_IN_PLACE.  Its f08 MPI_Init, MPI_Init_thread, MPI_Finalize,
// MPI_Barrier and MPI_Ibarrier (mpi_*_f08_) call PMPI_* directly, so those
// five are defined here as well (Open MPI's f08 procedures of the same names
// end in the ompi_*_f below, so both MPIs get the same path).
#include <mpi.h>

extern "C" {
// Open MPI's Fortran MPI_IN_PLACE and MPI_BOTTOM are the addresses of these
// common blocks; weak, so that the library loads under an MPI without them.
extern int mpi_fortran_in_place_ __attribute__((weak));
extern int mpi_fortran_bottom_ __attribute__((weak));
}

namespace {

const void *cBuffer(const void *buf) {
  if (&mpi_fortran_in_place_ && buf == &mpi_fortran_in_place_) return MPI_IN_PLACE;
  if (&mpi_fortran_bottom_ && buf == &mpi_fortran_bottom_) return MPI_BOTTOM;
  return buf;
}
void *cBuffer(void *buf) { return const_cast<void *>(cBuffer(static_cast<const void *>(buf))); }

MPI_Comm comm(const MPI_Fint *f) { return PMPI_Comm_f2c(*f); }
MPI_Datatype type(const MPI_Fint *f) { return PMPI_Type_f2c(*f); }
MPI_Op op(const MPI_Fint *f) { return PMPI_Op_f2c(*f); }
void setError(MPI_Fint *ierr, int rc) {
  if (ierr) *ierr = rc;
}

void allreduceF(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *o, MPI_Fint *c, MPI_Fint *ierr) {
  setError(ierr, MPI_Allreduce(cBuffer(s), cBuffer(r), *n, type(t), op(o), comm(c)));
}
void reduceF(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *o, MPI_Fint *root, MPI_Fint *c, MPI_Fint *ierr) {
  setError(ierr, MPI_Reduce(cBuffer(s), cBuffer(r), *n, type(t), op(o), *root, comm(c)));
}
void bcastF(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *root, MPI_Fint *c, MPI_Fint *ierr) {
  setError(ierr, MPI_Bcast(cBuffer(b), *n, type(t), *root, comm(c)));
}
void allgatherF(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt, MPI_Fint *c,
                MPI_Fint *ierr) {
  setError(ierr, MPI_Allgather(cBuffer(s), *sn, type(st), cBuffer(r), *rn, type(rt), comm(c)));
}
void reduceScatterBlockF(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *o, MPI_Fint *c, MPI_Fint *ierr) {
  setError(ierr, MPI_Reduce_scatter_block(cBuffer(s), cBuffer(r), *n, type(t), op(o), comm(c)));
}
void alltoallF(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt, MPI_Fint *c,
               MPI_Fint *ierr) {
  setError(ierr, MPI_Alltoall(cBuffer(s), *sn, type(st), cBuffer(r), *rn, type(rt), comm(c)));
}
void barrierF(MPI_Fint *c, MPI_Fint *ierr) { setError(ierr, MPI_Barrier(comm(c))); }

// The nonblocking forms: the C request comes back as a Fortran handle.
// (Takes the request by address: read after the call that writes it.)
void setRequest(MPI_Fint *req, MPI_Fint *ierr, int rc, const MPI_Request *r) {
  if (rc == MPI_SUCCESS) *req = PMPI_Request_c2f(*r);
  setError(ierr, rc);
}
void iallreduceF(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *o, MPI_Fint *c, MPI_Fint *q, MPI_Fint *ierr) {
  MPI_Request req = MPI_REQUEST_NULL;
  setRequest(q, ierr, MPI_Iallreduce(cBuffer(s), cBuffer(r), *n, type(t), op(o), comm(c), &req), &req);
}
void ireduceF(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *o, MPI_Fint *root, MPI_Fint *c, MPI_Fint *q,
              MPI_Fint *ierr) {
  MPI_Request req = MPI_REQUEST_NULL;
  setRequest(q, ierr, MPI_Ireduce(cBuffer(s), cBuffer(r), *n, type(t), op(o), *root, comm(c), &req), &req);
}
void ibcastF(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *root, MPI_Fint *c, MPI_Fint *q, MPI_Fint *ierr) {
  MPI_Request req = MPI_REQUEST_NULL;
  setRequest(q, ierr, MPI_Ibcast(cBuffer(b), *n, type(t), *root, comm(c), &req), &req);
}
void iallgatherF(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt, MPI_Fint *c, MPI_Fint *q,
                 MPI_Fint *ierr) {
  MPI_Request req = MPI_REQUEST_NULL;
  setRequest(q, ierr, MPI_Iallgather(cBuffer(s), *sn, type(st), cBuffer(r), *rn, type(rt), comm(c), &req), &req);
}
void ireduceScatterBlockF(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *o, MPI_Fint *c, MPI_Fint *q,
                          MPI_Fint *ierr) {
  MPI_Request req = MPI_REQUEST_NULL;
  setRequest(q, ierr, MPI_Ireduce_scatter_block(cBuffer(s), cBuffer(r), *n, type(t), op(o), comm(c), &req), &req);
}
void ialltoallF(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt, MPI_Fint *c, MPI_Fint *q,
                MPI_Fint *ierr) {
  MPI_Request req = MPI_REQUEST_NULL;
  setRequest(q, ierr, MPI_Ialltoall(cBuffer(s), *sn, type(st), cBuffer(r), *rn, type(rt), comm(c), &req), &req);
}
void ibarrierF(MPI_Fint *c, MPI_Fint *q, MPI_Fint *ierr) {
  MPI_Request req = MPI_REQUEST_NULL;
  setRequest(q, ierr, MPI_Ibarrier(comm(c), &req), &req);
}
// Through interpose.cc's MPI_Init and MPI_Init_thread, which learn whether
// any rank sees a GPU (routing.h).
void initF(MPI_Fint *ierr) { setError(ierr, MPI_Init(nullptr, nullptr)); }
void initThreadF(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) {
  int level = MPI_THREAD_SINGLE;
  const int rc = MPI_Init_thread(nullptr, nullptr, *required, &level);
  if (rc == MPI_SUCCESS) *provided = level;
  setError(ierr, rc);
}
// For the routing report of interpose.cc's MPI_Finalize.
void finalizeF(MPI_Fint *ierr) { setError(ierr, MPI_Finalize()); }

}  // namespace

// Every name of one procedure: gfortran's (one underscore), g77's and
// f2c's (two), IBM's (none), upper case (Cray, Intel on Windows), and Open
// MPI's ompi_*_f.
// Under another MPI (no Open MPI MPI_IN_PLACE to recognise, so an in-place
// call would be wrong) the call goes to that MPI's own pmpi_*_ untouched
// (MPICH's then calls the C function, routed by interpose.cc).
#define CHORUS_FORTRAN(name, lower, upper, params, args, impl)                           \
  extern "C" {                                                                     \
  void p##lower##_ params __attribute__((weak));                                   \
  static void lower##_routed params {                                              \
    if (!&mpi_fortran_in_place_ && p##lower##_) return p##lower##_ args;           \
    impl args;                                                                     \
  }                                                                                \
  void lower##_ params { lower##_routed args; }                                    \
  void lower##__ params { lower##_routed args; }                                   \
  void lower params { lower##_routed args; }                                       \
  void upper params { lower##_routed args; }                                       \
  void ompi_##name##_f params { lower##_routed args; }                            \
  }

#define CHORUS_F_REDUCE (void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *o, MPI_Fint *c, MPI_Fint *ierr)
#define CHORUS_F_BLOCKS \
  (void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt, MPI_Fint *c, MPI_Fint *ierr)
#define CHORUS_F_IREDUCE \
  (void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *o, MPI_Fint *c, MPI_Fint *q, MPI_Fint *ierr)
#define CHORUS_F_IBLOCKS \
  (void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt, MPI_Fint *c, MPI_Fint *q, MPI_Fint *ierr)

CHORUS_FORTRAN(allreduce, mpi_allreduce, MPI_ALLREDUCE, CHORUS_F_REDUCE, (s, r, n, t, o, c, ierr), allreduceF)
CHORUS_FORTRAN(reduce, mpi_reduce, MPI_REDUCE,
               (void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *o, MPI_Fint *root, MPI_Fint *c, MPI_Fint *ierr),
               (s, r, n, t, o, root, c, ierr), reduceF)
CHORUS_FORTRAN(bcast, mpi_bcast, MPI_BCAST,
               (void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *root, MPI_Fint *c, MPI_Fint *ierr),
               (b, n, t, root, c, ierr), bcastF)
CHORUS_FORTRAN(allgather, mpi_allgather, MPI_ALLGATHER, CHORUS_F_BLOCKS, (s, sn, st, r, rn, rt, c, ierr), allgatherF)
CHORUS_FORTRAN(reduce_scatter_block, mpi_reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK, CHORUS_F_REDUCE,
               (s, r, n, t, o, c, ierr), reduceScatterBlockF)
CHORUS_FORTRAN(alltoall, mpi_alltoall, MPI_ALLTOALL, CHORUS_F_BLOCKS, (s, sn, st, r, rn, rt, c, ierr), alltoallF)
CHORUS_FORTRAN(barrier, mpi_barrier, MPI_BARRIER, (MPI_Fint * c, MPI_Fint *ierr), (c, ierr), barrierF)
CHORUS_FORTRAN(finalize, mpi_finalize, MPI_FINALIZE, (MPI_Fint * ierr), (ierr), finalizeF)
CHORUS_FORTRAN(iallreduce, mpi_iallreduce, MPI_IALLREDUCE, CHORUS_F_IREDUCE, (s, r, n, t, o, c, q, ierr), iallreduceF)
CHORUS_FORTRAN(ireduce, mpi_ireduce, MPI_IREDUCE,
               (void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *o, MPI_Fint *root, MPI_Fint *c, MPI_Fint *q,
                MPI_Fint *ierr),
               (s, r, n, t, o, root, c, q, ierr), ireduceF)
CHORUS_FORTRAN(ibcast, mpi_ibcast, MPI_IBCAST,
               (void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *root, MPI_Fint *c, MPI_Fint *q, MPI_Fint *ierr),
               (b, n, t, root, c, q, ierr), ibcastF)
CHORUS_FORTRAN(iallgather, mpi_iallgather, MPI_IALLGATHER, CHORUS_F_IBLOCKS, (s, sn, st, r, rn, rt, c, q, ierr),
               iallgatherF)
CHORUS_FORTRAN(ireduce_scatter_block, mpi_ireduce_scatter_block, MPI_IREDUCE_SCATTER_BLOCK, CHORUS_F_IREDUCE,
               (s, r, n, t, o, c, q, ierr), ireduceScatterBlockF)
CHORUS_FORTRAN(ialltoall, mpi_ialltoall, MPI_IALLTOALL, CHORUS_F_IBLOCKS, (s, sn, st, r, rn, rt, c, q, ierr),
               ialltoallF)
CHORUS_FORTRAN(ibarrier, mpi_ibarrier, MPI_IBARRIER, (MPI_Fint * c, MPI_Fint *q, MPI_Fint *ierr), (c, q, ierr),
               ibarrierF)
CHORUS_FORTRAN(init, mpi_init, MPI_INIT, (MPI_Fint * ierr), (ierr), initF)
CHORUS_FORTRAN(init_thread, mpi_init_thread, MPI_INIT_THREAD, (MPI_Fint * required, MPI_Fint *provided, MPI_Fint *ierr),
               (required, provided, ierr), initThreadF)

// The `use mpi_f08` procedures that MPICH points at PMPI_* (see the top):
// their MPI_Comm and MPI_Request are one integer (MPI_VAL), passed by
// reference like mpif.h's handles, and an absent optional ierror is null.
extern "C" {
void mpi_barrier_f08_(MPI_Fint *c, MPI_Fint *ierr) { barrierF(c, ierr); }
void mpi_ibarrier_f08_(MPI_Fint *c, MPI_Fint *q, MPI_Fint *ierr) { ibarrierF(c, q, ierr); }
void mpi_init_f08_(MPI_Fint *ierr) { initF(ierr); }
void mpi_init_thread_f08_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) {
  initThreadF(required, provided, ierr);
}
void mpi_finalize_f08_(MPI_Fint *ierr) { finalizeF(ierr); }
}
