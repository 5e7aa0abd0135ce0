/*
 * chorus_f.h - what the C files of the Fortran module share: the shims of
 * chorus_f.c, which sections.c calls once the buffers are contiguous, and
 * the error helper.  Not installed.
 */
#pragma once

#include <stdint.h>

#include "chorus.h"

/* Raise an "invalid argument" error (MPIX_GPU_ERR_ARGUMENT class) whose
 * MPI_Error_string is the formatted text, through comm's error handler;
 * returns the code. */
int chorus_f_raise(MPI_Comm comm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 0 host, 1 device, 2 managed memory (libchorus, api/fortran_support.cc). */
int chorus_f_memory_kind(const void *p);

int chorus_f_allreduce(const void *sendbuf, void *recvbuf, int64_t count, MPI_Fint datatype,
                       MPI_Fint op, MPI_Fint comm, const void *f_in_place);
int chorus_f_reduce(const void *sendbuf, void *recvbuf, int64_t count, MPI_Fint datatype,
                    MPI_Fint op, MPI_Fint root, MPI_Fint comm, const void *f_in_place);
int chorus_f_bcast(void *buffer, int64_t count, MPI_Fint datatype, MPI_Fint root, MPI_Fint comm);
int chorus_f_allgather(const void *sendbuf, int64_t sendcount, MPI_Fint sendtype, void *recvbuf,
                       int64_t recvcount, MPI_Fint recvtype, MPI_Fint comm,
                       const void *f_in_place);
int chorus_f_reduce_scatter_block(const void *sendbuf, void *recvbuf, int64_t recvcount,
                                  MPI_Fint datatype, MPI_Fint op, MPI_Fint comm,
                                  const void *f_in_place);
int chorus_f_alltoall(const void *sendbuf, int64_t sendcount, MPI_Fint sendtype, void *recvbuf,
                      int64_t recvcount, MPI_Fint recvtype, MPI_Fint comm,
                      const void *f_in_place);
