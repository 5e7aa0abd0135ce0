/*
 * chorus_f.c - the C side of the Fortran module `chorus` (chorus.f90).
 *
 * One shim per call of chorus.h.  The Fortran wrappers have already checked
 * that the buffers are contiguous and pass their addresses; the shims turn
 * Fortran handles into C ones, recognise Fortran's MPI_IN_PLACE (whose
 * address the wrapper passes as f_in_place) and call the C entry point, which
 * validates the rest and raises errors through the communicator's handler.
 *
 * Exported names all start with chorus_f_ (see the library's version script).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "chorus.h"

/* ------------------------------------------------------------------ errors */

/*
 * "Non-contiguous buffer" errors.  MPI_Error_string must name the call and
 * the argument, and MPI error strings are fixed per code, so each (call,
 * argument) pair gets its own code in a Chorus Fortran error class, made on
 * first use.  There are at most a few dozen pairs.
 */
enum { kMaxNoncontigCodes = 64 };

static pthread_mutex_t noncontig_lock = PTHREAD_MUTEX_INITIALIZER;
static int noncontig_class = -1;
static int noncontig_count = 0;
static struct {
  char key[96];
  int code;
} noncontig_codes[kMaxNoncontigCodes];

/* The error code for `routine`/`argument`, or MPI_ERR_BUFFER if MPI cannot
 * make one (out of codes, or the table is full). */
static int noncontig_code(const char *routine, const char *argument) {
  char key[96];
  int code = MPI_ERR_BUFFER;
  snprintf(key, sizeof key, "%s:%s", routine, argument);

  pthread_mutex_lock(&noncontig_lock);
  for (int i = 0; i < noncontig_count; i++) {
    if (strcmp(noncontig_codes[i].key, key) == 0) {
      code = noncontig_codes[i].code;
      goto done;
    }
  }
  if (noncontig_count == kMaxNoncontigCodes) goto done;
  if (noncontig_class < 0) {
    if (MPI_Add_error_class(&noncontig_class) != MPI_SUCCESS) {
      noncontig_class = -1;
      goto done;
    }
    MPI_Add_error_string(noncontig_class,
                         "Chorus Fortran: a buffer argument is a non-contiguous array section");
  }
  int new_code;
  if (MPI_Add_error_code(noncontig_class, &new_code) != MPI_SUCCESS) goto done;
  char text[MPI_MAX_ERROR_STRING];
  snprintf(text, sizeof text,
           "%s: argument %s is a non-contiguous array section; Chorus needs contiguous "
           "buffers (pass a contiguous array, or copy the section into one first)",
           routine, argument);
  MPI_Add_error_string(new_code, text);
  snprintf(noncontig_codes[noncontig_count].key, sizeof noncontig_codes[0].key, "%s", key);
  noncontig_codes[noncontig_count].code = new_code;
  noncontig_count++;
  code = new_code;
done:
  pthread_mutex_unlock(&noncontig_lock);
  return code;
}

/* Raise the non-contiguous error on the communicator (its error handler runs,
 * as for any Chorus error) and return the code for ierror. */
int chorus_f_raise_noncontiguous(MPI_Fint comm, const char *routine, const char *argument) {
  int code = noncontig_code(routine, argument);
  MPI_Comm c = MPI_Comm_f2c(comm);
  if (c == MPI_COMM_NULL) c = MPI_COMM_WORLD;
  MPI_Comm_call_errhandler(c, code);
  return code;
}

/* ------------------------------------------------------------ collectives */

/*
 * Fortran's named types (MPI_REAL, MPI_INTEGER, ...) are distinct handles
 * from C's, and the library reduces only the C ones; give it the C type of
 * the same size and kind.  Entries an MPI leaves undefined (MPI_INTEGER1 on
 * some builds) read as MPI_DATATYPE_NULL and never match.
 */
static MPI_Datatype c_type(MPI_Fint fortran_type) {
  MPI_Datatype t = MPI_Type_f2c(fortran_type);
  if (t == MPI_DATATYPE_NULL) return t;
  const MPI_Datatype integers[] = {
    MPI_INTEGER,
#ifdef MPI_INTEGER1
    MPI_INTEGER1,
#endif
#ifdef MPI_INTEGER2
    MPI_INTEGER2,
#endif
#ifdef MPI_INTEGER4
    MPI_INTEGER4,
#endif
#ifdef MPI_INTEGER8
    MPI_INTEGER8,
#endif
  };
  const MPI_Datatype reals[] = {
    MPI_REAL, MPI_DOUBLE_PRECISION,
#ifdef MPI_REAL4
    MPI_REAL4,
#endif
#ifdef MPI_REAL8
    MPI_REAL8,
#endif
  };
  int size = 0;
  for (size_t i = 0; i < sizeof integers / sizeof integers[0]; i++) {
    if (integers[i] != MPI_DATATYPE_NULL && t == integers[i]) {
      MPI_Type_size(t, &size);
      switch (size) {
        case 1: return MPI_INT8_T;
        case 2: return MPI_INT16_T;
        case 4: return MPI_INT32_T;
        case 8: return MPI_INT64_T;
        default: return t;
      }
    }
  }
  for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
    if (reals[i] != MPI_DATATYPE_NULL && t == reals[i]) {
      MPI_Type_size(t, &size);
      if (size == (int)sizeof(float)) return MPI_FLOAT;
      if (size == (int)sizeof(double)) return MPI_DOUBLE;
      return t;
    }
  }
  return t;
}

/* Fortran passes its own MPI_IN_PLACE sentinel; C's is a different address. */
static const void *in_place(const void *buf, const void *f_in_place) {
  return buf == f_in_place ? MPI_IN_PLACE : buf;
}

static MPIX_Gpu_stream as_stream(intptr_t stream) { return (MPIX_Gpu_stream)stream; }

int chorus_f_allreduce(const void *sendbuf, void *recvbuf, int64_t count, MPI_Fint datatype,
                       MPI_Fint op, MPI_Fint comm, const void *f_in_place) {
  return MPIX_Allreduce_gpu(in_place(sendbuf, f_in_place), recvbuf, (MPI_Count)count,
                            c_type(datatype), MPI_Op_f2c(op), MPI_Comm_f2c(comm));
}

int chorus_f_allreduce_enqueue(const void *sendbuf, void *recvbuf, int64_t count,
                               MPI_Fint datatype, MPI_Fint op, MPI_Fint comm, intptr_t stream,
                               const void *f_in_place) {
  return MPIX_Allreduce_gpu_enqueue(in_place(sendbuf, f_in_place), recvbuf, (MPI_Count)count,
                                    c_type(datatype), MPI_Op_f2c(op), MPI_Comm_f2c(comm),
                                    as_stream(stream));
}

int chorus_f_reduce(const void *sendbuf, void *recvbuf, int64_t count, MPI_Fint datatype,
                    MPI_Fint op, MPI_Fint root, MPI_Fint comm, const void *f_in_place) {
  return MPIX_Reduce_gpu(in_place(sendbuf, f_in_place), recvbuf, (MPI_Count)count,
                         c_type(datatype), MPI_Op_f2c(op), (int)root, MPI_Comm_f2c(comm));
}

int chorus_f_reduce_enqueue(const void *sendbuf, void *recvbuf, int64_t count, MPI_Fint datatype,
                            MPI_Fint op, MPI_Fint root, MPI_Fint comm, intptr_t stream,
                            const void *f_in_place) {
  return MPIX_Reduce_gpu_enqueue(in_place(sendbuf, f_in_place), recvbuf, (MPI_Count)count,
                                 c_type(datatype), MPI_Op_f2c(op), (int)root,
                                 MPI_Comm_f2c(comm), as_stream(stream));
}

int chorus_f_bcast(void *buffer, int64_t count, MPI_Fint datatype, MPI_Fint root,
                   MPI_Fint comm) {
  return MPIX_Bcast_gpu(buffer, (MPI_Count)count, c_type(datatype), (int)root,
                        MPI_Comm_f2c(comm));
}

int chorus_f_bcast_enqueue(void *buffer, int64_t count, MPI_Fint datatype, MPI_Fint root,
                           MPI_Fint comm, intptr_t stream) {
  return MPIX_Bcast_gpu_enqueue(buffer, (MPI_Count)count, c_type(datatype), (int)root,
                                MPI_Comm_f2c(comm), as_stream(stream));
}

int chorus_f_allgather(const void *sendbuf, int64_t sendcount, MPI_Fint sendtype, void *recvbuf,
                       int64_t recvcount, MPI_Fint recvtype, MPI_Fint comm,
                       const void *f_in_place) {
  return MPIX_Allgather_gpu(in_place(sendbuf, f_in_place), (MPI_Count)sendcount,
                            c_type(sendtype), recvbuf, (MPI_Count)recvcount,
                            c_type(recvtype), MPI_Comm_f2c(comm));
}

int chorus_f_allgather_enqueue(const void *sendbuf, int64_t sendcount, MPI_Fint sendtype,
                               void *recvbuf, int64_t recvcount, MPI_Fint recvtype,
                               MPI_Fint comm, intptr_t stream, const void *f_in_place) {
  return MPIX_Allgather_gpu_enqueue(in_place(sendbuf, f_in_place), (MPI_Count)sendcount,
                                    c_type(sendtype), recvbuf, (MPI_Count)recvcount,
                                    c_type(recvtype), MPI_Comm_f2c(comm),
                                    as_stream(stream));
}

int chorus_f_reduce_scatter_block(const void *sendbuf, void *recvbuf, int64_t recvcount,
                                  MPI_Fint datatype, MPI_Fint op, MPI_Fint comm,
                                  const void *f_in_place) {
  return MPIX_Reduce_scatter_block_gpu(in_place(sendbuf, f_in_place), recvbuf,
                                       (MPI_Count)recvcount, c_type(datatype),
                                       MPI_Op_f2c(op), MPI_Comm_f2c(comm));
}

int chorus_f_reduce_scatter_block_enqueue(const void *sendbuf, void *recvbuf, int64_t recvcount,
                                          MPI_Fint datatype, MPI_Fint op, MPI_Fint comm,
                                          intptr_t stream, const void *f_in_place) {
  return MPIX_Reduce_scatter_block_gpu_enqueue(in_place(sendbuf, f_in_place), recvbuf,
                                               (MPI_Count)recvcount, c_type(datatype),
                                               MPI_Op_f2c(op), MPI_Comm_f2c(comm),
                                               as_stream(stream));
}

int chorus_f_alltoall(const void *sendbuf, int64_t sendcount, MPI_Fint sendtype, void *recvbuf,
                      int64_t recvcount, MPI_Fint recvtype, MPI_Fint comm,
                      const void *f_in_place) {
  return MPIX_Alltoall_gpu(in_place(sendbuf, f_in_place), (MPI_Count)sendcount,
                           c_type(sendtype), recvbuf, (MPI_Count)recvcount,
                           c_type(recvtype), MPI_Comm_f2c(comm));
}

int chorus_f_alltoall_enqueue(const void *sendbuf, int64_t sendcount, MPI_Fint sendtype,
                              void *recvbuf, int64_t recvcount, MPI_Fint recvtype, MPI_Fint comm,
                              intptr_t stream, const void *f_in_place) {
  return MPIX_Alltoall_gpu_enqueue(in_place(sendbuf, f_in_place), (MPI_Count)sendcount,
                                   c_type(sendtype), recvbuf, (MPI_Count)recvcount,
                                   c_type(recvtype), MPI_Comm_f2c(comm),
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
