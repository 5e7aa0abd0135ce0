! A Fortran program built against an installed Chorus (mpifort with the
! documented flags, pkg-config chorus-fortran, CMake's Chorus::chorus_fortran
! in a Fortran-only project): its allreduce must match MPI_Allreduce.
program consumer
  use mpi_f08
  use chorus
  implicit none
  integer, parameter :: n = 1000
  integer :: in(n), ours(n), mpis(n), i, rank, wrong, anywrong, ierror

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  in = [(rank * 7919 + i, i = 1, n)]
  call MPIX_Allreduce_gpu(in, ours, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierror)
  call MPI_Allreduce(in, mpis, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  wrong = count(ours /= mpis)
  call MPI_Allreduce(wrong, anywrong, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '(a, i0, a, i0, a)', 'Fortran consumer: ierror ', ierror, ', ', anywrong, ' wrong elements'
  call MPI_Finalize()
  if (ierror /= MPI_SUCCESS .or. anywrong /= 0) error stop 1
end program
