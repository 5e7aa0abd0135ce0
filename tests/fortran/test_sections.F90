! test_sections.F90 - strided array sections through the Fortran module, and
! the Fortran type names in its error messages (run with 2 ranks by
! sections-np2.sh; any number works).
!
! Each collective runs on sections of 1 to 3 dimensions, with positive and
! negative strides, in place and not, and empty; the same call is made
! with MPI's own collective on the same sections (MPI accepts them, through
! its own copy), and the arrays are compared whole, element by element: the
! section must hold MPI's result and every element outside it must still
! hold the value it had.  Send buffers must come back unchanged.  Then the
! errors: a count larger than a section, an _enqueue call on a section, and
! messages that name Fortran's datatypes (MPI_DOUBLE_PRECISION, MPI_REAL,
! MPI_INTEGER), not the C types of the same size.
! Exit status 0 when every rank passed, 1 otherwise.

program test_sections
  use, intrinsic :: iso_c_binding, only: c_null_ptr
  use, intrinsic :: iso_fortran_env, only: real32, real64
  use mpi_f08
  use chorus
  implicit none
  integer, parameter :: n = 21
  real(real64), parameter :: untouched = -7.0_real64
  integer :: rank, nranks, failures = 0, total

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)

  call check_allreduce()
  call check_reduce()
  call check_bcast()
  call check_gathers()
  call check_errors()

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (total == 0) then
      write (*, '("PASS: strided sections on ", i0, " ranks")') nranks
    else
      write (*, '("FAIL: ", i0, " failed checks on ", i0, " ranks")') total, nranks
    end if
  end if
  call MPI_Finalize()
  if (total /= 0) stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    failures = failures + 1
    if (failures <= 30) write (*, '("rank ", i0, ": FAIL ", a)') rank, what
  end subroutine check

  subroutine expect_success(ierr, what)
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: what
    character(len=MPI_MAX_ERROR_STRING) :: text
    integer :: length
    if (ierr == MPI_SUCCESS) return
    call MPI_Error_string(ierr, text, length)
    call check(.false., what // ': unexpected error: ' // text(1:length))
  end subroutine expect_success

  ! The call failed and its MPI_Error_string names each of `needles`
  ! (exactly: MPI_DOUBLE_PRECISION is not found in a message naming
  ! MPI_DOUBLE).
  subroutine expect_error(ierr, needles, what)
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: needles(:), what
    character(len=MPI_MAX_ERROR_STRING) :: text
    integer :: length, i
    if (ierr == MPI_SUCCESS) then
      call check(.false., what // ': expected an error, got MPI_SUCCESS')
      return
    end if
    call MPI_Error_string(ierr, text, length)
    do i = 1, size(needles)
      call check(index(text(1:length), trim(needles(i))) > 0, what // ': message does not name "' &
          // trim(needles(i)) // '": ' // text(1:length))
    end do
  end subroutine expect_error

  ! Values that differ by rank and by element, exact under any sum order.
  elemental real(real64) function val(i)
    integer, intent(in) :: i
    val = real(rank * 1000 + i, real64)
  end function val

  subroutine check_allreduce()
    real(real64) :: a(n), a0(n), got(n), want(n)
    real(real64) :: m(8, 9), m0(8, 9), mgot(8, 9), mwant(8, 9)
    real(real64) :: t(5, 4, 6), t0(5, 4, 6), tgot(5, 4, 6), twant(5, 4, 6)
    complex(real64) :: z(n), zgot(n), zwant(n)
    real(real32) :: s(n), sgot(n), swant(n)
    integer :: k(6, 5), kgot(6, 5), kwant(6, 5)
    logical :: in(n), in2(8, 9), in3(5, 4, 6)
    integer :: i, ierr

    a = val([(i, i = 1, n)])
    a0 = a
    in = .false.
    in(1:n:2) = .true.
    got = untouched
    want = untouched
    call MPIX_Allreduce_gpu(a(1:n:2), got(1:n:2), 11, MPI_DOUBLE_PRECISION, MPI_SUM, &
        MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(a(1:n:2), want(1:n:2), 11, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    call expect_success(ierr, 'allreduce a(1:n:2)')
    call check(all(got == want), 'allreduce a(1:n:2): section differs from MPI_Allreduce')
    call check(all(pack(got, .not. in) == untouched), 'allreduce a(1:n:2): wrote outside the section')
    call check(all(a == a0), 'allreduce a(1:n:2): changed the send buffer')

    ! A count below the section's size: the rest of the section is untouched.
    got = untouched
    want = untouched
    call MPIX_Allreduce_gpu(a(1:n:2), got(1:n:2), 3_MPI_COUNT_KIND, MPI_DOUBLE_PRECISION, MPI_SUM, &
        MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(a(1:n:2), want(1:n:2), 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    call expect_success(ierr, 'allreduce of 3 into a(1:n:2)')
    call check(all(got == want) .and. count(got /= untouched) == 3, 'allreduce of 3 into a(1:n:2)')

    ! Contiguous send, recv with a negative stride.
    got = untouched
    want = untouched
    call MPIX_Allreduce_gpu(a(1:7), got(20:2:-3), 7, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(a(1:7), want(20:2:-3), 7, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
    call expect_success(ierr, 'allreduce into got(20:2:-3)')
    call check(all(got == want) .and. count(got /= untouched) == 7, 'allreduce into got(20:2:-3)')

    ! In place on a negative-stride section.
    got = val([(i, i = 1, n)]) + 0.5_real64
    want = got
    call MPIX_Allreduce_gpu(MPI_IN_PLACE, got(n:1:-2), 11, MPI_DOUBLE_PRECISION, MPI_SUM, &
        MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(MPI_IN_PLACE, want(n:1:-2), 11, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    call expect_success(ierr, 'allreduce in place on got(n:1:-2)')
    call check(all(got == want), 'allreduce in place on got(n:1:-2)')
    call check(all(pack(got, .not. in) == val(pack([(i, i = 1, n)], .not. in)) + 0.5_real64), &
        'allreduce in place on got(n:1:-2): wrote outside the section')

    ! 2-D: whole columns of 4, every third column.
    m = reshape(val([(i, i = 1, 72)]), [8, 9])
    m0 = m
    in2 = .false.
    in2(2:5, 1:7:3) = .true.
    mgot = untouched
    mwant = untouched
    call MPIX_Allreduce_gpu(m(2:5, 1:7:3), mgot(2:5, 1:7:3), 12, MPI_DOUBLE_PRECISION, MPI_SUM, &
        MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(m(2:5, 1:7:3), mwant(2:5, 1:7:3), 12, MPI_DOUBLE_PRECISION, MPI_SUM, &
        MPI_COMM_WORLD)
    call expect_success(ierr, 'allreduce m(2:5, 1:7:3)')
    call check(all(mgot == mwant), 'allreduce m(2:5, 1:7:3): section differs from MPI_Allreduce')
    call check(all(pack(mgot, .not. in2) == untouched), 'allreduce m(2:5, 1:7:3): wrote outside')
    call check(all(m == m0), 'allreduce m(2:5, 1:7:3): changed the send buffer')

    ! 3-D, strided in every dimension, one stride negative.
    t = reshape(val([(i, i = 1, 120)]), [5, 4, 6])
    t0 = t
    in3 = .false.
    in3(1:5:2, 4:1:-2, 2:6:3) = .true.
    tgot = untouched
    twant = untouched
    call MPIX_Allreduce_gpu(t(1:5:2, 4:1:-2, 2:6:3), tgot(1:5:2, 4:1:-2, 2:6:3), 12, &
        MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(t(1:5:2, 4:1:-2, 2:6:3), twant(1:5:2, 4:1:-2, 2:6:3), 12, &
        MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    call expect_success(ierr, 'allreduce of a 3-D section')
    call check(all(tgot == twant) .and. all(pack(tgot, .not. in3) == untouched) .and. all(t == t0), &
        'allreduce of a 3-D section')

    ! Elements of 16 bytes (complex), 4 bytes (real32), and integers strided
    ! in the first dimension.
    z = cmplx(val([(i, i = 1, n)]), -val([(i, i = 1, n)]), real64)
    zgot = untouched
    zwant = untouched
    call MPIX_Allreduce_gpu(z(2:n:3), zgot(2:n:3), 7, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(z(2:n:3), zwant(2:n:3), 7, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD)
    call expect_success(ierr, 'allreduce complex z(2:n:3)')
    call check(all(zgot == zwant) .and. count(zgot /= untouched) == 7, 'allreduce complex z(2:n:3)')
    s = real(val([(i, i = 1, n)]), real32)
    sgot = real(untouched, real32)
    swant = sgot
    call MPIX_Allreduce_gpu(s(1:n:4), sgot(n:1:-4), 6, MPI_REAL, MPI_MIN, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(s(1:n:4), swant(n:1:-4), 6, MPI_REAL, MPI_MIN, MPI_COMM_WORLD)
    call expect_success(ierr, 'allreduce real32 s(1:n:4) into sgot(n:1:-4)')
    call check(all(sgot == swant) .and. count(sgot /= real(untouched, real32)) == 6, &
        'allreduce real32 s(1:n:4) into sgot(n:1:-4)')
    k = reshape([(rank * 100 + i, i = 1, 30)], [6, 5])
    kgot = -7
    kwant = -7
    call MPIX_Allreduce_gpu(k(1:6:2, 2:4), kgot(1:6:2, 2:4), 9, MPI_INTEGER, MPI_SUM, &
        MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(k(1:6:2, 2:4), kwant(1:6:2, 2:4), 9, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call expect_success(ierr, 'allreduce integer k(1:6:2, 2:4)')
    call check(all(kgot == kwant) .and. count(kgot /= -7) == 9, 'allreduce integer k(1:6:2, 2:4)')

    ! Empty sections.
    got = untouched
    call MPIX_Allreduce_gpu(a(1:0:2), got(5:1:2), 0, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call expect_success(ierr, 'allreduce of empty sections')
    call check(all(got == untouched), 'allreduce of empty sections wrote something')
  end subroutine check_allreduce

  subroutine check_reduce()
    real(real64) :: a(n), got(n), want(n)
    integer :: i, ierr, root
    root = nranks - 1
    a = val([(i, i = 1, n)])
    got = untouched
    want = untouched
    call MPIX_Reduce_gpu(a(n:1:-3), got(1:n:3), 7, MPI_DOUBLE_PRECISION, MPI_SUM, root, &
        MPI_COMM_WORLD, ierr)
    call MPI_Reduce(a(n:1:-3), want(1:n:3), 7, MPI_DOUBLE_PRECISION, MPI_SUM, root, MPI_COMM_WORLD)
    call expect_success(ierr, 'reduce a(n:1:-3) into got(1:n:3)')
    if (rank == root) then
      call check(all(got == want) .and. count(got /= untouched) == 7, 'reduce into got(1:n:3) at the root')
    else
      call check(all(got == untouched), 'reduce into got(1:n:3) changed it off the root')
    end if
  end subroutine check_reduce

  subroutine check_bcast()
    integer :: b(n), bwant(n), m(7, 6), mwant(7, 6), i, ierr, root
    root = mod(1, nranks)
    b = [(rank * 100 + i, i = 1, n)]
    bwant = b
    call MPIX_Bcast_gpu(b(1:n:2), 11, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call MPI_Bcast(bwant(1:n:2), 11, MPI_INTEGER, root, MPI_COMM_WORLD)
    call expect_success(ierr, 'bcast b(1:n:2)')
    call check(all(b == bwant), 'bcast b(1:n:2) differs from MPI_Bcast')
    call check(all(b(2:n:2) == [(rank * 100 + i, i = 2, n, 2)]), 'bcast b(1:n:2) wrote outside the section')

    m = reshape([(rank * 100 + i, i = 1, 42)], [7, 6])
    mwant = m
    call MPIX_Bcast_gpu(m(6:2:-2, 5:1:-4), 6_MPI_COUNT_KIND, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call MPI_Bcast(mwant(6:2:-2, 5:1:-4), 6, MPI_INTEGER, root, MPI_COMM_WORLD)
    call expect_success(ierr, 'bcast m(6:2:-2, 5:1:-4)')
    call check(all(m == mwant), 'bcast m(6:2:-2, 5:1:-4) differs from MPI_Bcast')
  end subroutine check_bcast

  ! allgather, alltoall and reduce_scatter_block: buffers of nranks blocks.
  subroutine check_gathers()
    integer, parameter :: k = 3
    real(real64), allocatable :: g(:, :), gwant(:, :), x(:), y(:), ywant(:)
    real(real64) :: a(2 * k), a0(2 * k)
    integer :: i, ierr

    a = val([(i, i = 1, 2 * k)])
    a0 = a
    allocate (g(2 * k, nranks + 1), gwant(2 * k, nranks + 1))
    g = untouched
    gwant = untouched
    call MPIX_Allgather_gpu(a(1:2 * k:2), k, MPI_DOUBLE_PRECISION, g(2:2 * k:2, nranks:1:-1), k, &
        MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
    call MPI_Allgather(a(1:2 * k:2), k, MPI_DOUBLE_PRECISION, gwant(2:2 * k:2, nranks:1:-1), k, &
        MPI_DOUBLE_PRECISION, MPI_COMM_WORLD)
    call expect_success(ierr, 'allgather a(1:2k:2) into g(2:2k:2, nranks:1:-1)')
    call check(all(g == gwant) .and. count(g /= untouched) == k * nranks .and. all(a == a0), &
        'allgather a(1:2k:2) into g(2:2k:2, nranks:1:-1)')

    ! In place: this rank's block is already in the section.
    g = untouched
    g(1:2 * k:2, rank + 1) = a(1:k)
    gwant = g
    call MPIX_Allgather_gpu(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g(1:2 * k:2, 1:nranks), k, &
        MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
    call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gwant(1:2 * k:2, 1:nranks), k, &
        MPI_DOUBLE_PRECISION, MPI_COMM_WORLD)
    call expect_success(ierr, 'allgather in place into g(1:2k:2, 1:nranks)')
    call check(all(g == gwant) .and. count(g /= untouched) == k * nranks, &
        'allgather in place into g(1:2k:2, 1:nranks)')

    allocate (x(3 * k * nranks), y(2 * k * nranks), ywant(2 * k * nranks))
    x = val([(i, i = 1, 3 * k * nranks)])
    y = untouched
    ywant = untouched
    call MPIX_Alltoall_gpu(x(3 * k * nranks:1:-3), k, MPI_DOUBLE_PRECISION, y(1:2 * k * nranks:2), k, &
        MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
    call MPI_Alltoall(x(3 * k * nranks:1:-3), k, MPI_DOUBLE_PRECISION, ywant(1:2 * k * nranks:2), k, &
        MPI_DOUBLE_PRECISION, MPI_COMM_WORLD)
    call expect_success(ierr, 'alltoall x(end:1:-3) into y(1:end:2)')
    call check(all(y == ywant) .and. count(y /= untouched) == k * nranks, 'alltoall x(end:1:-3) into y(1:end:2)')

    y = untouched
    ywant = untouched
    call MPIX_Reduce_scatter_block_gpu(x(1:3 * k * nranks:3), y(2 * k:1:-2), k, MPI_DOUBLE_PRECISION, &
        MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Reduce_scatter_block(x(1:3 * k * nranks:3), ywant(2 * k:1:-2), k, MPI_DOUBLE_PRECISION, &
        MPI_SUM, MPI_COMM_WORLD)
    call expect_success(ierr, 'reduce_scatter_block x(1:end:3) into y(2k:1:-2)')
    call check(all(y == ywant) .and. count(y /= untouched) == k, 'reduce_scatter_block x(1:end:3) into y(2k:1:-2)')
  end subroutine check_gathers

  ! Errors come back in ierror (MPI_ERRORS_RETURN) and name the call, the
  ! argument and Fortran's name of the datatype.
  subroutine check_errors()
    type(MPI_Comm) :: ecomm
    real(real64) :: a(n), got(n)
    real :: r(n)
    integer :: k(n), kk(n), ierr, i
    call MPI_Comm_dup(MPI_COMM_WORLD, ecomm)
    call MPI_Comm_set_errhandler(ecomm, MPI_ERRORS_RETURN)
    a = val([(i, i = 1, n)])
    r = 1.0
    k = 1
    got = untouched

    call MPIX_Allreduce_gpu(a(1:n:2), got(1:n:2), n, MPI_DOUBLE_PRECISION, MPI_SUM, ecomm, ierr)
    call expect_error(ierr, [character(len=24) :: 'MPIX_Allreduce_gpu', 'sendbuf', 'MPI_DOUBLE_PRECISION'], &
        'count larger than the section a(1:n:2)')
    call check(all(got == untouched), 'a refused call wrote its receive buffer')
    call MPIX_Bcast_gpu(k(1:n:5), 6, MPI_INTEGER, 0, ecomm, ierr)
    call expect_error(ierr, [character(len=24) :: 'MPIX_Bcast_gpu', 'buffer', 'MPI_INTEGER'], &
        'bcast count larger than the section k(1:n:5)')
    call MPIX_Reduce_gpu(a(1:n:2), got(1:n:2), -1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, ecomm, ierr)
    call expect_error(ierr, [character(len=24) :: 'MPIX_Reduce_gpu', 'count = -1'], 'reduce of count -1 on sections')

    call MPIX_Allreduce_gpu(a, got, n, MPI_DOUBLE_PRECISION, MPI_BAND, ecomm, ierr)
    call expect_error(ierr, [character(len=24) :: 'MPI_BAND', 'MPI_DOUBLE_PRECISION'], &
        'MPI_BAND on MPI_DOUBLE_PRECISION')
    call MPIX_Allreduce_gpu(r(1:n:2), r(2:n:2), 10, MPI_REAL, MPI_BXOR, ecomm, ierr)
    call expect_error(ierr, [character(len=24) :: 'MPI_BXOR', 'datatype = MPI_REAL'], 'MPI_BXOR on MPI_REAL')
    call MPIX_Allreduce_gpu(k, kk(n:1:-1), n, MPI_INTEGER, MPI_MINLOC, ecomm, ierr)
    call expect_error(ierr, [character(len=24) :: 'MPI_MINLOC', 'datatype = MPI_INTEGER'], &
        'MPI_MINLOC on MPI_INTEGER')
    call MPIX_Allgather_gpu(a, 1, MPI_DOUBLE_PRECISION, k, 2, MPI_INTEGER, ecomm, ierr)
    call expect_error(ierr, [character(len=32) :: 'sendtype = MPI_DOUBLE_PRECISION', 'recvtype = MPI_INTEGER'], &
        'allgather of MPI_DOUBLE_PRECISION into MPI_INTEGER')

    call MPIX_Allreduce_gpu_enqueue(a(1:n:2), got(1:n:2), 11, MPI_DOUBLE_PRECISION, MPI_SUM, ecomm, &
        c_null_ptr, ierr)
    call expect_error(ierr, [character(len=32) :: 'MPIX_Allreduce_gpu_enqueue', 'sendbuf', 'contiguous'], &
        'allreduce_enqueue of a section')

    ! The communicator still works.
    got = untouched
    call MPIX_Allreduce_gpu(a(2:n:2), got(2:n:2), 10, MPI_DOUBLE_PRECISION, MPI_SUM, ecomm, ierr)
    call expect_success(ierr, 'allreduce after errors')
    call check(count(got /= untouched) == 10, 'allreduce after errors')
    call MPI_Comm_free(ecomm)
  end subroutine check_errors

end program test_sections
