! A plain `use mpi` program for libchorus_mpi.so (Open MPI's Fortran
! bindings call PMPI_ directly, so only the interposer's Fortran entry
! points can route these calls).  Results are checked against values worked
! out here; rank 0 prints the routing interpose.sh must find in the
! CHORUS_DEBUG=INFO report ("expect: NAME chorus=C mpi=M").
#ifdef USE_F08
#define MPI_MODULE mpi_f08
#else
#define MPI_MODULE mpi
#endif
program test_interpose_f
  use MPI_MODULE
  implicit none
  integer, parameter :: n = 1000
  integer :: rank, nranks, ierr, i, failures, total, routed
  integer :: a(n), b(n), g(2 * 64)
  double precision :: d(n)
  character(len=16) :: mode

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_environment_variable("CHORUS_INTERPOSE", mode)
  routed = 0
  if (trim(mode) == "all") routed = 1
  failures = 0

  do i = 1, n
    a(i) = rank * i
  end do
  call MPI_Allreduce(a, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, n
    if (b(i) /= i * nranks * (nranks - 1) / 2) failures = failures + 1
  end do
  ! MPI_IN_PLACE: Fortran's is a common block, not C's address
  call MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  do i = 1, n
    if (a(i) /= (nranks - 1) * i) failures = failures + 1
  end do
  d = dble(rank + 1)
  call MPI_Bcast(d, n, MPI_DOUBLE_PRECISION, nranks - 1, MPI_COMM_WORLD, ierr)
  if (any(d /= dble(nranks))) failures = failures + 1
  call MPI_Reduce(a, b, n, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do i = 1, n
      if (b(i) /= nranks * (nranks - 1) * i) failures = failures + 1
    end do
  end if
  g = -1
  call MPI_Allgather(rank, 1, MPI_INTEGER, g, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 1, nranks
    if (g(i) /= i - 1) failures = failures + 1
  end do
  a(1:nranks) = rank
  call MPI_Alltoall(a, 1, MPI_INTEGER, g, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 1, nranks
    if (g(i) /= i - 1) failures = failures + 1
  end do
  a(1:nranks) = 1
  call MPI_Reduce_scatter_block(a, b, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (b(1) /= nranks) failures = failures + 1
  call MPI_Barrier(MPI_COMM_WORLD, ierr)

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    print '(a,i0,a,i0)', 'expect: MPI_Allreduce chorus=', 3 * routed, ' mpi=', 3 * (1 - routed)
    print '(a,i0,a,i0)', 'expect: MPI_Reduce chorus=', routed, ' mpi=', 1 - routed
    print '(a,i0,a,i0)', 'expect: MPI_Bcast chorus=', routed, ' mpi=', 1 - routed
    print '(a,i0,a,i0)', 'expect: MPI_Allgather chorus=', routed, ' mpi=', 1 - routed
    print '(a,i0,a,i0)', 'expect: MPI_Reduce_scatter_block chorus=', routed, ' mpi=', 1 - routed
    print '(a,i0,a,i0)', 'expect: MPI_Alltoall chorus=', routed, ' mpi=', 1 - routed
    print '(a,i0,a,i0)', 'expect: MPI_Barrier chorus=', routed, ' mpi=', 1 - routed
    if (total == 0) then
      print '(a,i0,a)', 'PASS: 0 wrong results over ', nranks, ' ranks'
    else
      print '(a,i0,a)', 'FAIL: ', total, ' wrong results'
    end if
  end if
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1
end program test_interpose_f
