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
  integer :: rank, nranks, ierr, i, failures, total, routed, routednb, provided, dev, jobdev
  integer, asynchronous :: a(n), b(n), c(n), g(2 * 64), g2(2 * 64), h(2 * 64), ones(2 * 64), x, y
  double precision, asynchronous :: d(n)
#ifdef USE_F08
  type(MPI_Request) :: req(4)
#else
  integer :: req(4)
#endif
  character(len=16) :: mode, threads
  interface
    ! tests/interpose/device_probe.c: whether this process sees a GPU
    integer(c_int) function test_interpose_device() bind(C, name="test_interpose_device")
      use iso_c_binding, only: c_int
    end function
  end interface

  ! TEST_INTERPOSE_THREADS=multiple: MPI_THREAD_MULTIPLE, where the
  ! nonblocking calls may go to Chorus too.
  call get_environment_variable("TEST_INTERPOSE_THREADS", threads)
  if (trim(threads) == "multiple") then
    call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  else
    call MPI_Init(ierr)
    provided = MPI_THREAD_SINGLE
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_environment_variable("CHORUS_INTERPOSE", mode)
  routed = 0
  if (trim(mode) == "all") routed = 1
  ! A job where some rank sees a GPU agrees per call, and then leaves the
  ! nonblocking calls to MPI.
  dev = test_interpose_device()
  call MPI_Allreduce(dev, jobdev, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  routednb = 0
  if (routed == 1 .and. provided == MPI_THREAD_MULTIPLE .and. jobdev == 0) routednb = 1
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

  ! The nonblocking forms, two waves completed by MPI_Waitall.
  a = rank + 1
  d = dble(rank + 1)
  call MPI_Iallreduce(a, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Ibcast(d, n, MPI_DOUBLE_PRECISION, nranks - 1, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Ibarrier(MPI_COMM_WORLD, req(3), ierr)
  call MPI_Waitall(3, req, MPI_STATUSES_IGNORE, ierr)
  if (any(b /= nranks * (nranks + 1) / 2)) call fail("iallreduce")
  if (any(d /= dble(nranks))) call fail("ibcast")
  x = rank
  h(1:nranks) = rank
  ones(1:nranks) = 1
  g = -1
  g2 = -1
  c = 0
  call MPI_Ireduce(a, c, n, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Iallgather(x, 1, MPI_INTEGER, g, 1, MPI_INTEGER, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Ialltoall(h, 1, MPI_INTEGER, g2, 1, MPI_INTEGER, MPI_COMM_WORLD, req(3), ierr)
  call MPI_Ireduce_scatter_block(ones, y, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req(4), ierr)
  call MPI_Waitall(4, req, MPI_STATUSES_IGNORE, ierr)
  if (rank == 0 .and. any(c /= nranks * (nranks + 1) / 2)) call fail("ireduce")
  do i = 1, nranks
    if (g(i) /= i - 1) call fail("iallgather")
    if (g2(i) /= i - 1) call fail("ialltoall")
  end do
  if (y /= nranks) call fail("ireduce_scatter_block")

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    print '(a,i0,a,i0)', 'expect: MPI_Allreduce chorus=', 4 * routed, ' mpi=', 4 * (1 - routed)
    print '(a,i0,a,i0)', 'expect: MPI_Reduce chorus=', routed, ' mpi=', 1 - routed
    print '(a,i0,a,i0)', 'expect: MPI_Bcast chorus=', routed, ' mpi=', 1 - routed
    print '(a,i0,a,i0)', 'expect: MPI_Allgather chorus=', routed, ' mpi=', 1 - routed
    print '(a,i0,a,i0)', 'expect: MPI_Reduce_scatter_block chorus=', routed, ' mpi=', 1 - routed
    print '(a,i0,a,i0)', 'expect: MPI_Alltoall chorus=', routed, ' mpi=', 1 - routed
    print '(a,i0,a,i0)', 'expect: MPI_Barrier chorus=', routed, ' mpi=', 1 - routed
    print '(a,i0,a,i0)', 'expect: MPI_Iallreduce chorus=', routednb, ' mpi=', 1 - routednb
    print '(a,i0,a,i0)', 'expect: MPI_Ireduce chorus=', routednb, ' mpi=', 1 - routednb
    print '(a,i0,a,i0)', 'expect: MPI_Ibcast chorus=', routednb, ' mpi=', 1 - routednb
    print '(a,i0,a,i0)', 'expect: MPI_Iallgather chorus=', routednb, ' mpi=', 1 - routednb
    print '(a,i0,a,i0)', 'expect: MPI_Ireduce_scatter_block chorus=', routednb, ' mpi=', 1 - routednb
    print '(a,i0,a,i0)', 'expect: MPI_Ialltoall chorus=', routednb, ' mpi=', 1 - routednb
    print '(a,i0,a,i0)', 'expect: MPI_Ibarrier chorus=', routednb, ' mpi=', 1 - routednb
    if (total == 0) then
      print '(a,i0,a)', 'PASS: 0 wrong results over ', nranks, ' ranks'
    else
      print '(a,i0,a)', 'FAIL: ', total, ' wrong results'
    end if
  end if
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a,i0,2a)', 'rank ', rank, ': FAIL ', what
    failures = failures + 1
  end subroutine
end program test_interpose_f
