/*
 * sections.c - strided array sections for the Fortran module.
 *
 * MPI's Fortran bindings accept a section such as a(1:n:2) by giving the
 * library a contiguous copy of it (the compiler's copy-in/copy-out, or the
 * MPI library's own, from the array's descriptor).  Chorus does the same for
 * host memory: each non-contiguous buffer is packed into a temporary, the
 * call runs on the temporaries, and the buffers the call writes are unpacked
 * back element by element, so elements outside the section are never
 * touched.  The Fortran wrappers come here only when a buffer is not
 * contiguous, and pass every buffer's descriptor (ISO_Fortran_binding.h);
 * the contiguous ones are used where they are.
 *
 * The temporary holds the section and no more, so a count larger than the
 * section is refused here (with a contiguous buffer the library would read
 * past it as MPI would, but past a temporary it would write into the heap).
 * Device memory cannot be walked from the host: a strided section of it is
 * refused.  Both errors name the call and the argument.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chorus_f.h"

#ifdef HAVE_ISO_FORTRAN_BINDING_H
#include <ISO_Fortran_binding.h>
#else
typedef struct CFI_cdesc_t CFI_cdesc_t; /* never looked into: stage() refuses */
#endif

typedef struct {
  const char *name; /* the argument, for messages */
  CFI_cdesc_t *desc;
  int written;       /* the call writes it: unpack afterwards */
  long long need;    /* bytes the call may touch; -1 when unknown */
  char what[160];    /* how `need` came about, for the message */
  void *addr;        /* what the call is given */
  void *temp;        /* the packed copy, or NULL */
} Buffer;

/* Count elements of type x blocks (ranks): the bytes a call touches.  -1 when
 * a handle cannot be asked about: the library reports a bad one itself. */
static void set_need(Buffer *b, int64_t count, MPI_Fint type, int blocks) {
  MPI_Datatype dt = MPI_Type_f2c(type);
  MPI_Aint lb = 0, extent = 0;
  b->need = -1;
  if (count < 0 || blocks < 0 || dt == MPI_DATATYPE_NULL ||
      MPI_Type_get_extent(dt, &lb, &extent) != MPI_SUCCESS || extent <= 0)
    return;
  long long bytes;
  if (__builtin_mul_overflow((long long)count, (long long)extent, &bytes) ||
      __builtin_mul_overflow(bytes, (long long)blocks, &bytes))
    bytes = LLONG_MAX;
  b->need = bytes;
  char name[MPI_MAX_OBJECT_NAME] = "";
  int len = 0;
  MPI_Type_get_name(dt, name, &len);
  int n = snprintf(b->what, sizeof b->what, "%lld of %s, %lld bytes each", (long long)count,
                   len > 0 ? name : "the datatype", (long long)extent);
  if (blocks != 1 && n > 0 && (size_t)n < sizeof b->what)
    snprintf(b->what + n, sizeof b->what - (size_t)n, ", x %d ranks", blocks);
}

/* The communicator's size and this rank, or -1 for a handle the library
 * will refuse. */
static int comm_size(MPI_Fint comm) {
  MPI_Comm c = MPI_Comm_f2c(comm);
  int n = -1;
  if (c == MPI_COMM_NULL || MPI_Comm_size(c, &n) != MPI_SUCCESS) return -1;
  return n;
}

static int comm_rank(MPI_Fint comm) {
  MPI_Comm c = MPI_Comm_f2c(comm);
  int r = -1;
  if (c == MPI_COMM_NULL || MPI_Comm_rank(c, &r) != MPI_SUCCESS) return -1;
  return r;
}

#ifdef HAVE_ISO_FORTRAN_BINDING_H

/* Elements of an array whose extents are all known (not assumed-size). */
static size_t elements(const CFI_cdesc_t *d) {
  size_t n = 1;
  for (int r = 0; r < d->rank; r++) n *= (size_t)d->dim[r].extent;
  return n;
}

/* Written out rather than CFI_is_contiguous, which lives in the Fortran
 * runtime (libgfortran) that this C library does not link.  An assumed-size
 * array (last extent -1) is contiguous by definition. */
static int contiguous(const CFI_cdesc_t *d) {
  CFI_index_t expect = (CFI_index_t)d->elem_len;
  for (int r = 0; r < d->rank; r++) {
    if (d->dim[r].extent == -1) return 1;
    if (d->dim[r].extent == 0) return 0; /* no elements: staged as an empty copy */
    if (d->dim[r].extent != 1 && d->dim[r].sm != expect) return 0;
    expect *= d->dim[r].extent;
  }
  return 1;
}

/* Copy between the section and its packed form, in array element order
 * (first subscript fastest).  Strides are in bytes and may be negative:
 * base_addr is the first element in that order either way. */
static void copy_section(const CFI_cdesc_t *d, char *packed, int pack) {
  const size_t elem = d->elem_len;
  const int rank = d->rank;
  const CFI_index_t n0 = d->dim[0].extent, sm0 = d->dim[0].sm;
  CFI_index_t index[CFI_MAX_RANK] = {0};
  for (;;) {
    char *p = (char *)d->base_addr;
    for (int r = 1; r < rank; r++) p += index[r] * d->dim[r].sm;
    /* Constant sizes become single moves; the element loop is the cost. */
#define COPY_ROW(SIZE)                                                \
  for (CFI_index_t i = 0; i < n0; i++, p += sm0, packed += (SIZE))    \
    if (pack) memcpy(packed, p, (SIZE));                              \
    else memcpy(p, packed, (SIZE));
    switch (elem) {
      case 4: COPY_ROW(4) break;
      case 8: COPY_ROW(8) break;
      case 16: COPY_ROW(16) break;
      default: COPY_ROW(elem) break;
    }
#undef COPY_ROW
    int r = 1;
    for (; r < rank; r++) {
      if (++index[r] < d->dim[r].extent) break;
      index[r] = 0;
    }
    if (r >= rank) return;
  }
}

static void unstage(Buffer *b, int n, int rc) {
  for (int i = 0; i < n; i++) {
    if (!b[i].temp) continue;
    if (rc == MPI_SUCCESS && b[i].written && elements(b[i].desc) > 0)
      copy_section(b[i].desc, b[i].temp, 0);
    free(b[i].temp);
    b[i].temp = NULL;
  }
}

/* Give each buffer an address the call can use: its own when contiguous (or
 * Fortran's MPI_IN_PLACE), else a packed copy.  Every copy is packed, the
 * receive buffers' too: a call may leave parts of them unwritten (a reduce
 * off the root, a count below the section's size) and those must come back
 * unchanged. */
static int stage(MPI_Fint comm, const char *routine, Buffer *b, int n,
                 const void *f_in_place) {
  MPI_Comm c = MPI_Comm_f2c(comm);
  int rc = MPI_SUCCESS;
  for (int i = 0; i < n; i++) b[i].temp = NULL;
  for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
    const CFI_cdesc_t *d = b[i].desc;
    b[i].addr = d->base_addr;
    if ((f_in_place && d->base_addr == f_in_place) || contiguous(d)) continue;
    const size_t count = elements(d), bytes = count * d->elem_len;
    if (count > 0 && chorus_f_memory_kind(d->base_addr) == 1) {
      rc = chorus_f_raise(c,
                          "%s: argument %s is a non-contiguous array section of device memory; "
                          "it must be contiguous (Chorus copies sections of host arrays only): "
                          "pass a contiguous device array",
                          routine, b[i].name);
    } else if (b[i].need > (long long)bytes) {
      rc = chorus_f_raise(c,
                          "%s: argument %s is an array section of %zu elements (%zu bytes), "
                          "smaller than the call needs (%lld bytes: count = %s)",
                          routine, b[i].name, count, bytes, b[i].need, b[i].what);
    } else if (!(b[i].temp = malloc(bytes ? bytes : 1))) {
      rc = chorus_f_raise(c, "%s: no memory for a contiguous copy of argument %s (%zu bytes)",
                          routine, b[i].name, bytes);
    } else {
      if (count > 0) copy_section(d, b[i].temp, 1);
      b[i].addr = b[i].temp;
    }
  }
  if (rc != MPI_SUCCESS) unstage(b, n, rc);
  return rc;
}

#else /* no ISO_Fortran_binding.h: a section cannot be read */

static void unstage(Buffer *b, int n, int rc) {
  (void)b, (void)n, (void)rc;
}

static int stage(MPI_Fint comm, const char *routine, Buffer *b, int n,
                 const void *f_in_place) {
  (void)n, (void)f_in_place;
  return chorus_f_raise(MPI_Comm_f2c(comm),
                        "%s: a buffer argument (%s, or another) is a non-contiguous array "
                        "section, and this build cannot copy sections (its C compiler has no "
                        "ISO_Fortran_binding.h): pass contiguous arrays",
                        routine, b[0].name);
}

#endif

/* ------------------------------------------------------ one per collective */

int chorus_f_allreduce_sections(CFI_cdesc_t *sendbuf, CFI_cdesc_t *recvbuf, int64_t count,
                                MPI_Fint datatype, MPI_Fint op, MPI_Fint comm,
                                const void *f_in_place) {
  Buffer b[2] = {{.name = "sendbuf", .desc = sendbuf, .written = 0},
                 {.name = "recvbuf", .desc = recvbuf, .written = 1}};
  set_need(&b[0], count, datatype, 1);
  set_need(&b[1], count, datatype, 1);
  int rc = stage(comm, "MPIX_Allreduce_gpu", b, 2, f_in_place);
  if (rc != MPI_SUCCESS) return rc;
  rc = chorus_f_allreduce(b[0].addr, b[1].addr, count, datatype, op, comm, f_in_place);
  unstage(b, 2, rc);
  return rc;
}

int chorus_f_reduce_sections(CFI_cdesc_t *sendbuf, CFI_cdesc_t *recvbuf, int64_t count,
                             MPI_Fint datatype, MPI_Fint op, MPI_Fint root, MPI_Fint comm,
                             const void *f_in_place) {
  Buffer b[2] = {{.name = "sendbuf", .desc = sendbuf, .written = 0},
                 {.name = "recvbuf", .desc = recvbuf, .written = 1}};
  const int rank = comm_rank(comm);
  set_need(&b[0], count, datatype, 1);
  set_need(&b[1], count, datatype, rank < 0 ? -1 : rank == root ? 1 : 0);
  int rc = stage(comm, "MPIX_Reduce_gpu", b, 2, f_in_place);
  if (rc != MPI_SUCCESS) return rc;
  rc = chorus_f_reduce(b[0].addr, b[1].addr, count, datatype, op, root, comm, f_in_place);
  unstage(b, 2, rc);
  return rc;
}

int chorus_f_bcast_sections(CFI_cdesc_t *buffer, int64_t count, MPI_Fint datatype,
                            MPI_Fint root, MPI_Fint comm) {
  Buffer b[1] = {{.name = "buffer", .desc = buffer, .written = 1}};
  set_need(&b[0], count, datatype, 1);
  int rc = stage(comm, "MPIX_Bcast_gpu", b, 1, NULL);
  if (rc != MPI_SUCCESS) return rc;
  rc = chorus_f_bcast(b[0].addr, count, datatype, root, comm);
  unstage(b, 1, rc);
  return rc;
}

int chorus_f_allgather_sections(CFI_cdesc_t *sendbuf, int64_t sendcount, MPI_Fint sendtype,
                                CFI_cdesc_t *recvbuf, int64_t recvcount, MPI_Fint recvtype,
                                MPI_Fint comm, const void *f_in_place) {
  Buffer b[2] = {{.name = "sendbuf", .desc = sendbuf, .written = 0},
                 {.name = "recvbuf", .desc = recvbuf, .written = 1}};
  set_need(&b[0], sendcount, sendtype, 1);
  set_need(&b[1], recvcount, recvtype, comm_size(comm));
  int rc = stage(comm, "MPIX_Allgather_gpu", b, 2, f_in_place);
  if (rc != MPI_SUCCESS) return rc;
  rc = chorus_f_allgather(b[0].addr, sendcount, sendtype, b[1].addr, recvcount, recvtype, comm,
                          f_in_place);
  unstage(b, 2, rc);
  return rc;
}

int chorus_f_reduce_scatter_block_sections(CFI_cdesc_t *sendbuf, CFI_cdesc_t *recvbuf,
                                           int64_t recvcount, MPI_Fint datatype, MPI_Fint op,
                                           MPI_Fint comm, const void *f_in_place) {
  Buffer b[2] = {{.name = "sendbuf", .desc = sendbuf, .written = 0},
                 {.name = "recvbuf", .desc = recvbuf, .written = 1}};
  set_need(&b[0], recvcount, datatype, comm_size(comm));
  set_need(&b[1], recvcount, datatype, 1);
  int rc = stage(comm, "MPIX_Reduce_scatter_block_gpu", b, 2, f_in_place);
  if (rc != MPI_SUCCESS) return rc;
  rc = chorus_f_reduce_scatter_block(b[0].addr, b[1].addr, recvcount, datatype, op, comm,
                                     f_in_place);
  unstage(b, 2, rc);
  return rc;
}

int chorus_f_alltoall_sections(CFI_cdesc_t *sendbuf, int64_t sendcount, MPI_Fint sendtype,
                               CFI_cdesc_t *recvbuf, int64_t recvcount, MPI_Fint recvtype,
                               MPI_Fint comm, const void *f_in_place) {
  Buffer b[2] = {{.name = "sendbuf", .desc = sendbuf, .written = 0},
                 {.name = "recvbuf", .desc = recvbuf, .written = 1}};
  const int nranks = comm_size(comm);
  set_need(&b[0], sendcount, sendtype, nranks);
  set_need(&b[1], recvcount, recvtype, nranks);
  int rc = stage(comm, "MPIX_Alltoall_gpu", b, 2, f_in_place);
  if (rc != MPI_SUCCESS) return rc;
  rc = chorus_f_alltoall(b[0].addr, sendcount, sendtype, b[1].addr, recvcount, recvtype, comm,
                         f_in_place);
  unstage(b, 2, rc);
  return rc;
}
