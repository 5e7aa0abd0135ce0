! allreduce_swap.f90 - moving a Fortran MPI code onto Chorus.
!
! The only change from the MPI version is one token per call:
!     call MPI_Allreduce(a, b, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierror)
! becomes
!     call MPIX_Allreduce_gpu(a, b, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierror)
! plus `use chorus`.  Communicators, datatypes, ops, MPI_IN_PLACE and ierror
! are MPI's own.  Build and run: see README-fortran.md.
program allreduce_swap
  use mpi_f08
  use chorus
  implicit none
  integer, parameter :: n = 1048576
  real, allocatable :: a(:), b(:)
  integer :: rank, nranks, ierror

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  allocate(a(n), b(n))
  a = real(rank + 1)

  ! Before: call MPI_Allreduce(a, b, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierror)
  call MPIX_Allreduce_gpu(a, b, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierror)

  ! In place, as with MPI.
  call MPIX_Allreduce_gpu(MPI_IN_PLACE, a, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierror)

  if (rank == 0) then
    print '(a, f0.1, a, f0.1)', 'sum = ', b(1), ', expected ', nranks * (nranks + 1) / 2.0
  end if

  ! --- GPU buffers with OpenACC -------------------------------------------
  ! Keep the arrays on the device and hand their device addresses to Chorus
  ! with host_data (compile with nvfortran -acc or gfortran -fopenacc):
  !
  ! !$acc data copyin(a) copyout(b)
  ! !$acc host_data use_device(a, b)
  ! call MPIX_Allreduce_gpu(a, b, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierror)
  ! !$acc end host_data
  ! !$acc end data
  !
  ! Stream-ordered, on the stream of an async queue (nvfortran; the stream
  ! is an integer(cuda_stream_kind), which the module takes as is):
  !
  ! !$acc host_data use_device(a, b)
  ! call MPIX_Allreduce_gpu_enqueue(a, b, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, &
  !                                 acc_get_cuda_stream(1), ierror)
  ! !$acc end host_data
  ! !$acc wait(1)

  ! --- GPU buffers with CUDA Fortran (nvfortran -cuda) --------------------
  ! Device arrays are passed directly; their addresses are device pointers:
  !
  ! use cudafor
  ! real, device, allocatable :: a_d(:), b_d(:)
  ! integer(cuda_stream_kind) :: stream
  ! allocate(a_d(n), b_d(n))
  ! a_d = a
  ! ierror = cudaStreamCreate(stream)
  ! call MPIX_Allreduce_gpu(a_d, b_d, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierror)
  ! call MPIX_Allreduce_gpu_enqueue(a_d, b_d, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, &
  !                                 stream, ierror)
  ! ierror = cudaStreamSynchronize(stream)
  ! b = b_d

  deallocate(a, b)
  call MPI_Finalize()
end program allreduce_swap
