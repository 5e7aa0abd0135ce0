/*
 * chorus.h - GPU collectives beneath an MPI-style API.
 *
 * Every call takes MPI's own argument list, so that replacing MPI_Allreduce by
 * MPIX_Allreduce_gpu is a one-token edit.  Buffers may live in host memory or
 * (with a CUDA build) in device memory; data moves through Chorus's own
 * transports, never through MPI.  MPI is used only to bootstrap.
 *
 * Errors: every call returns MPI_SUCCESS or an MPI error code, raised first
 * through the communicator's error handler (MPI_Comm_call_errhandler).  The
 * codes belong to Chorus error classes registered with MPI_Add_error_class;
 * MPI_Error_string on a returned code names the argument and its value.
 *
 * Thread safety: a communicator must not be used by two threads at once,
 * exactly as for MPI collectives.  With MPI_THREAD_MULTIPLE, collectives on
 * distinct communicators may run in several threads at once.
 */
#ifndef CHORUS_H
#define CHORUS_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CHORUS_VERSION_MAJOR 0
#define CHORUS_VERSION_MINOR 1
#define CHORUS_VERSION_PATCH 0

/*
 * A CUDA stream, declared so that users need not include CUDA headers:
 * cudaStream_t is a pointer to struct CUstream_st, so a cudaStream_t converts
 * implicitly.  NULL is the legacy default stream.
 */
struct CUstream_st;
typedef struct CUstream_st *MPIX_Gpu_stream;

/*
 * Library-provided datatypes and op.  They are MPI handles (2- and 1-byte
 * contiguous types, and a commutative op) created on first use after
 * MPI_Init, valid until MPI_Finalize; MPI's own collectives treat them as
 * opaque bytes, Chorus reduces them natively.
 */
MPI_Datatype MPIX_Gpu_type_float16(void);  /* IEEE binary16 */
MPI_Datatype MPIX_Gpu_type_bfloat16(void); /* bfloat16 */
MPI_Datatype MPIX_Gpu_type_fp8_e4m3(void); /* OCP FP8 E4M3 (finite, NaN only) */
MPI_Datatype MPIX_Gpu_type_fp8_e5m2(void); /* OCP FP8 E5M2 (IEEE-like) */
MPI_Op MPIX_Gpu_op_avg(void);              /* sum divided by the group size */

#define MPIX_GPU_FLOAT16 (MPIX_Gpu_type_float16())
#define MPIX_GPU_BFLOAT16 (MPIX_Gpu_type_bfloat16())
#define MPIX_GPU_FP8_E4M3 (MPIX_Gpu_type_fp8_e4m3())
#define MPIX_GPU_FP8_E5M2 (MPIX_Gpu_type_fp8_e5m2())
#define MPIX_GPU_AVG (MPIX_Gpu_op_avg())

/* Blocking collectives: return when the result is in place. */
int MPIX_Allreduce_gpu(const void *sendbuf, void *recvbuf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPIX_Reduce_gpu(const void *sendbuf, void *recvbuf, MPI_Count count,
                    MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm);
int MPIX_Bcast_gpu(void *buffer, MPI_Count count, MPI_Datatype datatype,
                   int root, MPI_Comm comm);
int MPIX_Allgather_gpu(const void *sendbuf, MPI_Count sendcount,
                       MPI_Datatype sendtype, void *recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype,
                       MPI_Comm comm);
int MPIX_Reduce_scatter_block_gpu(const void *sendbuf, void *recvbuf,
                                  MPI_Count recvcount, MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm);
int MPIX_Alltoall_gpu(const void *sendbuf, MPI_Count sendcount,
                      MPI_Datatype sendtype, void *recvbuf,
                      MPI_Count recvcount, MPI_Datatype recvtype,
                      MPI_Comm comm);
int MPIX_Barrier_gpu(MPI_Comm comm);

/*
 * Nonblocking collectives: the blocking call's arguments plus `request`, an
 * MPI request (a generalized request) that MPI_Wait, MPI_Test, MPI_Waitall,
 * MPI_Testany... complete, mixed freely with MPI's own requests.  Arguments
 * are checked at the call, and errors in them are returned (and raised
 * through comm's error handler) by the call itself.  Several outstanding on
 * one communicator complete in call order; a blocking Chorus collective on
 * that communicator waits for them first.  The buffers must not be touched
 * until the request completes.
 *
 * With MPI_THREAD_MULTIPLE, host-buffer collectives progress on a Chorus
 * thread (one per communicator that uses them, asleep while idle), so they
 * overlap computation and point-to-point traffic.  Below MPI_THREAD_MULTIPLE,
 * and on device buffers, the collective runs at the call and the request is
 * returned complete (see MPIX_Iallreduce_gpu(3) for what that means for
 * programs that communicate between the call and the wait).
 */
int MPIX_Iallreduce_gpu(const void *sendbuf, void *recvbuf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                        MPI_Request *request);
int MPIX_Ireduce_gpu(const void *sendbuf, void *recvbuf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                     MPI_Request *request);
int MPIX_Ibcast_gpu(void *buffer, MPI_Count count, MPI_Datatype datatype,
                    int root, MPI_Comm comm, MPI_Request *request);
int MPIX_Iallgather_gpu(const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void *recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Request *request);
int MPIX_Ireduce_scatter_block_gpu(const void *sendbuf, void *recvbuf,
                                   MPI_Count recvcount, MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm,
                                   MPI_Request *request);
int MPIX_Ialltoall_gpu(const void *sendbuf, MPI_Count sendcount,
                       MPI_Datatype sendtype, void *recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype,
                       MPI_Comm comm, MPI_Request *request);
int MPIX_Ibarrier_gpu(MPI_Comm comm, MPI_Request *request);

/*
 * Stream-ordered variants: on device buffers the collective is enqueued on
 * `stream` and the call returns at once; on host buffers it completes before
 * returning (the stream is ignored).
 */
int MPIX_Allreduce_gpu_enqueue(const void *sendbuf, void *recvbuf,
                               MPI_Count count, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm,
                               MPIX_Gpu_stream stream);
int MPIX_Reduce_gpu_enqueue(const void *sendbuf, void *recvbuf,
                            MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                            int root, MPI_Comm comm, MPIX_Gpu_stream stream);
int MPIX_Bcast_gpu_enqueue(void *buffer, MPI_Count count,
                           MPI_Datatype datatype, int root, MPI_Comm comm,
                           MPIX_Gpu_stream stream);
int MPIX_Allgather_gpu_enqueue(const void *sendbuf, MPI_Count sendcount,
                               MPI_Datatype sendtype, void *recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPIX_Gpu_stream stream);
int MPIX_Reduce_scatter_block_gpu_enqueue(const void *sendbuf, void *recvbuf,
                                          MPI_Count recvcount,
                                          MPI_Datatype datatype, MPI_Op op,
                                          MPI_Comm comm,
                                          MPIX_Gpu_stream stream);
int MPIX_Alltoall_gpu_enqueue(const void *sendbuf, MPI_Count sendcount,
                              MPI_Datatype sendtype, void *recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm, MPIX_Gpu_stream stream);

/*
 * Optional, collective over `comm`: set up Chorus's context now (otherwise
 * the first collective does it).  `info` may be MPI_INFO_NULL.  The context
 * is released by MPIX_Comm_gpu_free, by MPI_Comm_free, or at MPI_Finalize.
 */
int MPIX_Comm_gpu_init(MPI_Comm comm, MPI_Info info);
int MPIX_Comm_gpu_free(MPI_Comm comm);

/*
 * Local: write this process's flight recorder (the last CHORUS_TRACE_DEPTH
 * collectives of every Chorus communicator it uses, `comm`'s included) to
 * CHORUS_TRACE_FILE, as a failed collective and SIGUSR1 do.  `comm` only
 * selects the error handler.  Fails (MPI error) when recording is off
 * (CHORUS_TRACE_DEPTH=0) or the file cannot be written.
 */
int MPIX_Comm_gpu_trace_dump(MPI_Comm comm);

/* Library version as "major.minor.patch" plus build configuration. */
const char *MPIX_Gpu_version_string(void);

/*
 * Chorus's error classes, registered with MPI_Add_error_class the first
 * time any is needed.  A program tests a returned code with
 *   MPI_Error_class(code, &cls);
 *   if (cls == MPIX_Gpu_error_class(MPIX_GPU_ERR_TIMEOUT)) ...
 * Needs MPI initialized; returns MPI_UNDEFINED for a kind not listed here
 * (or when MPI refuses to add a class).
 */
enum MPIX_Gpu_error_kind {
  MPIX_GPU_ERR_ARGUMENT = 0,    /* an invalid argument (named with its value) */
  MPIX_GPU_ERR_UNSUPPORTED = 1, /* a type, op or buffer Chorus does not take */
  MPIX_GPU_ERR_TIMEOUT = 2,     /* a peer did not arrive within CHORUS_TIMEOUT */
  MPIX_GPU_ERR_INTERNAL = 3,    /* a failure inside Chorus, CUDA or UCX */
  MPIX_GPU_ERR_PEER_FAILED = 4, /* a peer process died, or gave up */
  MPIX_GPU_ERR_CORRUPT = 5,     /* a message arrived corrupted (CHORUS_CHECKSUM) */
  MPIX_GPU_ERR_MISMATCH = 6     /* the ranks' calls do not match */
};
int MPIX_Gpu_error_class(int kind);

#ifdef __cplusplus
}
#endif

#endif /* CHORUS_H */
