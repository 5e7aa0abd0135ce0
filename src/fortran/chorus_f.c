/*
 * chorus_f.c - the C side of the Fortran module `chorus` (chorus.f90).
 *
 * One shim per call of chorus.h.  The Fortran wrappers pass the addresses of
 * contiguous buffers here; calls with a strided section go through
 * sections.c first, which stages them in contiguous copies.  The shims turn
 * Fortran handles into C ones, recognise Fortran's MPI_IN_PLACE (whose
 * address the wrapper passes as f_in_place) and call the C entry point, which
 * validates the rest and raises errors through the communicator's handler.
 *
 * Exported names all start with chorus_f_ (see the library's version script).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "chorus_f.h"

/* ------------------------------------------------------------------ errors */

/*
 * Errors found here, before the library is called: a strided section passed
 * where a copy cannot be made, or one smaller than the call needs.
 * MPI_Error_string must name the call and the argument, and MPI error
 * strings are fixed per code, so each message gets its own code in Chorus's
 * "invalid argument" class (MPIX_GPU_ERR_ARGUMENT), made on first use.  The
 * messages are few (calls x arguments x reasons); past the table's size
 * they share the class's code.
 */
enum { kMaxCodes = 128 };

static pthread_mutex_t codes_lock = PTHREAD_MUTEX_INITIALIZER;
static int codes_count = 0;
static struct {
  char text[MPI_MAX_ERROR_STRING];
  int code;
} codes[kMaxCodes];

static int code_for(const char *text) {
  int cls = MPIX_Gpu_error_class(MPIX_GPU_ERR_ARGUMENT);
  int code = cls == MPI_UNDEFINED ? MPI_ERR_ARG : cls;
  pthread_mutex_lock(&codes_lock);
  for (int i = 0; i < codes_count; i++) {
    if (strcmp(codes[i].text, text) == 0) {
      code = codes[i].code;
      goto done;
    }
  }
  int new_code;
  if (cls == MPI_UNDEFINED || codes_count == kMaxCodes ||
      MPI_Add_error_code(cls, &new_code) != MPI_SUCCESS)
    goto done;
  MPI_Add_error_string(new_code, (char *)text);
  snprintf(codes[codes_count].text, sizeof codes[0].text, "%s", text);
  codes[codes_count].code = new_code;
  codes_count++;
  code = new_code;
done:
  pthread_mutex_unlock(&codes_lock);
  return code;
}

int chorus_f_raise(MPI_Comm comm, const char *fmt, ...) {
  char text[MPI_MAX_ERROR_STRING];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  int code = code_for(text);
  MPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, code);
  return code;
}

/* The _enqueue calls return before the data moves, so a copy of a section
 * could not be written back in time: they take contiguous buffers only. */
int chorus_f_raise_noncontiguous(MPI_Fint comm, const char *routine, const char *argument) {
  return chorus_f_raise(MPI_Comm_f2c(comm),
                        "%s: argument %s is a non-contiguous array section; the _enqueue calls "
                        "need contiguous buffers (they return before the data moves, so a copy "
                        "could not be written back): pass a contiguous array",
                        routine, argument);
}

/* ------------------------------------------------------------ collectives */

/*
 * Datatypes go to the library as MPI_Type_f2c makes them, Fortran's own
 * (MPI_DOUBLE_PRECISION, MPI_INTEGER, ...) included: the library maps them
 * as it maps C's, and its messages then name the handle the caller wrote
 * rather than a C type of the same size.
 */

/* Fortran passes its own MPI_IN_PLACE sentinel; C's is a different address. */
static const void *in_place(const void *buf, const void *f_in_place) {
  return buf == f_in_place ? MPI_IN_PLACE : buf;
}

static MPIX_Gpu_stream as_stream(intptr_t stream) { return (MPIX_Gpu_stream)stream; }

int chorus_f_allreduce(const void *sendbuf, void *recvbuf, int64_t count, MPI_Fint datatype,
                       MPI_Fint op, MPI_Fint comm, const void *f_in_place) {
  return MPIX_Allreduce_gpu(in_place(sendbuf, f_in_place), recvbuf, (MPI_Count)count,
                            MPI_Type_f2c(datatype), MPI_Op_f2c(op), MPI_Comm_f2c(comm));
}

int chorus_f_allreduce_enqueue(const void *sendbuf, void *recvbuf, int64_t count,
                               MPI_Fint datatype, MPI_Fint op, MPI_Fint comm, intptr_t stream,
                               const void *f_in_place) {
  return MPIX_Allreduce_gpu_enqueue(in_place(sendbuf, f_in_place), recvbuf, (MPI_Count)count,
                                    MPI_Type_f2c(datatype), MPI_Op_f2c(op), MPI_Comm_f2c(comm),
                                    as_stream(stream));
}

int chorus_f_reduce(const void *sendbuf, void *recvbuf, int64_t count, MPI_Fint datatype,
                    MPI_Fint op, MPI_Fint root, MPI_Fint comm, const void *f_in_place) {
  return MPIX_Reduce_gpu(in_place(sendbuf, f_in_place), recvbuf, (MPI_Count)count,
                         MPI_Type_f2c(datatype), MPI_Op_f2c(op), (int)root, MPI_Comm_f2c(comm));
}

int chorus_f_reduce_enqueue(const void *sendbuf, void *recvbuf, int64_t count, MPI_Fint datatype,
                            MPI_Fint op, MPI_Fint root, MPI_Fint comm, intptr_t stream,
                            const void *f_in_place) {
  return MPIX_Reduce_gpu_enqueue(in_place(sendbuf, f_in_place), recvbuf, (MPI_Count)count,
                                 MPI_Type_f2c(datatype), MPI_Op_f2c(op), (int)root,
                                 MPI_Comm_f2c(comm), as_stream(stream));
}

int chorus_f_bcast(void *buffer, int64_t count, MPI_Fint datatype, MPI_Fint root,
                   MPI_Fint comm) {
  return MPIX_Bcast_gpu(buffer, (MPI_Count)count, MPI_Type_f2c(datatype), (int)root,
                        MPI_Comm_f2c(comm));
}

int chorus_f_bcast_enqueue(void *buffer, int64_t count, MPI_Fint datatype, MPI_Fint root,
                           MPI_Fint comm, intptr_t stream) {
  return MPIX_Bcast_gpu_enqueue(buffer, (MPI_Count)count, MPI_Type_f2c(datatype), (int)root,
                                MPI_Comm_f2c(comm), as_stream(stream));
}

int chorus_f_allgather(const void *sendbuf, int64_t sendcount, MPI_Fint sendtype, void *recvbuf,
                       int64_t recvcount, MPI_Fint recvtype, MPI_Fint comm,
                       const void *f_in_place) {
  return MPIX_Allgather_gpu(in_place(sendbuf, f_in_place), (MPI_Count)sendcount,
                            MPI_Type_f2c(sendtype), recvbuf, (MPI_Count)recvcount,
                            MPI_Type_f2c(recvtype), MPI_Comm_f2c(comm));
}

int chorus_f_allgather_enqueue(const void *sendbuf, int64_t sendcount, MPI_Fint sendtype,
                               void *recvbuf, int64_t recvcount, MPI_Fint recvtype,
                               MPI_Fint comm, intptr_t stream, const void *f_in_place) {
  return MPIX_Allgather_gpu_enqueue(in_place(sendbuf, f_in_place), (MPI_Count)sendcount,
                                    MPI_Type_f2c(sendtype), recvbuf, (MPI_Count)recvcount,
                                    MPI_Type_f2c(recvtype), MPI_Comm_f2c(comm),
                                    as_stream(stream));
}

int chorus_f_reduce_scatter_block(const void *sendbuf, void *recvbuf, int64_t recvcount,
                                  MPI_Fint datatype, MPI_Fint op, MPI_Fint comm,
                                  const void *f_in_place) {
  return MPIX_Reduce_scatter_block_gpu(in_place(sendbuf, f_in_place), recvbuf,
                                       (MPI_Count)recvcount, MPI_Type_f2c(datatype),
                                       MPI_Op_f2c(op), MPI_Comm_f2c(comm));
}

int chorus_f_reduce_scatter_block_enqueue(const void *sendbuf, void *recvbuf, int64_t recvcount,
                                          MPI_Fint datatype, MPI_Fint op, MPI_Fint comm,
                                          intptr_t stream, const void *f_in_place) {
  return MPIX_Reduce_scatter_block_gpu_enqueue(in_place(sendbuf, f_in_place), recvbuf,
                                               (MPI_Count)recvcount, MPI_Type_f2c(datatype),
                                               MPI_Op_f2c(op), MPI_Comm_f2c(comm),
                                               as_stream(stream));
}

int chorus_f_alltoall(const void *sendbuf, int64_t sendcount, MPI_Fint sendtype, void *recvbuf,
                      int64_t recvcount, MPI_Fint recvtype, MPI_Fint comm,
                      const void *f_in_place) {
  return MPIX_Alltoall_gpu(in_place(sendbuf, f_in_place), (MPI_Count)sendcount,
                           MPI_Type_f2c(sendtype), recvbuf, (MPI_Count)recvcount,
                           MPI_Type_f2c(recvtype), MPI_Comm_f2c(comm));
}

int chorus_f_alltoall_enqueue(const void *sendbuf, int64_t sendcount, MPI_Fint sendtype,
                              void *recvbuf, int64_t recvcount, MPI_Fint recvtype, MPI_Fint comm,
                              intptr_t stream, const void *f_in_place) {
  return MPIX_Alltoall_gpu_enqueue(in_place(sendbuf, f_in_place), (MPI_Count)sendcount,
                                   MPI_Type_f2c(sendtype), recvbuf, (MPI_Count)recvcount,
                                   MPI_Type_f2c(recvtype), MPI_Comm_f2c(comm),
                                   as_stream(stream));
}

int chorus_f_barrier(MPI_Fint comm) { return MPIX_Barrier_gpu(MPI_Comm_f2c(comm)); }

int chorus_f_comm_gpu_init(MPI_Fint comm, MPI_Fint info) {
  return MPIX_Comm_gpu_init(MPI_Comm_f2c(comm), MPI_Info_f2c(info));
}

int chorus_f_comm_gpu_free(MPI_Fint comm) { return MPIX_Comm_gpu_free(MPI_Comm_f2c(comm)); }

int chorus_f_comm_gpu_trace_dump(MPI_Fint comm) { return MPIX_Comm_gpu_trace_dump(MPI_Comm_f2c(comm)); }

/* ------------------------------------------------------- types, op, version */

MPI_Fint chorus_f_type_float16(void) { return MPI_Type_c2f(MPIX_Gpu_type_float16()); }
MPI_Fint chorus_f_type_bfloat16(void) { return MPI_Type_c2f(MPIX_Gpu_type_bfloat16()); }
MPI_Fint chorus_f_type_fp8_e4m3(void) { return MPI_Type_c2f(MPIX_Gpu_type_fp8_e4m3()); }
MPI_Fint chorus_f_type_fp8_e5m2(void) { return MPI_Type_c2f(MPIX_Gpu_type_fp8_e5m2()); }
MPI_Fint chorus_f_op_avg(void) { return MPI_Op_c2f(MPIX_Gpu_op_avg()); }

const char *chorus_f_version_string(size_t *length) {
  const char *s = MPIX_Gpu_version_string();
  if (s == NULL) s = "";
  *length = strlen(s);
  return s;
}
