! test_fortran.F90 - the Fortran module `chorus` from a Fortran program, run
! under mpirun with 2 to 5 ranks (tests/fortran/run_np*.sh).
!
! Every collective, blocking and _enqueue, on real32, real64 and default
! integer arrays of 1, 2 and 3 dimensions and several sizes (0 to 70001
! elements), in place and not, with both count kinds and both stream kinds,
! on MPI_COMM_WORLD and on a split communicator; each result is compared with
! MPI's own collective on the same data.  Then the library datatypes and op,
! scalar buffers, the error paths (bad arguments, sections too small,
! with and without ierror) and a routine written with `use mpi` integer
! handles.  Exit status 0 when every rank passed, 1 otherwise.

module test_util
  use mpi_f08
  implicit none
  private
  public :: failures, check, expect_success, expect_error
  integer :: failures = 0

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: rank
    if (ok) return
    failures = failures + 1
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    if (failures <= 20) write (*, '("rank ", i0, ": FAIL ", a)') rank, trim(what)
  end subroutine check

  subroutine expect_success(ierr, what)
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: what
    character(len=MPI_MAX_ERROR_STRING) :: text
    integer :: length
    if (ierr == MPI_SUCCESS) return
    call MPI_Error_string(ierr, text, length)
    call check(.false., trim(what) // ': unexpected error: ' // text(1:length))
  end subroutine expect_success

  ! The call failed, and MPI_Error_string names each of `needles`.
  subroutine expect_error(ierr, needles, what)
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: needles(:), what
    character(len=MPI_MAX_ERROR_STRING) :: text
    integer :: length, i, cls
    if (ierr == MPI_SUCCESS) then
      call check(.false., trim(what) // ': expected an error, got MPI_SUCCESS')
      return
    end if
    call MPI_Error_class(ierr, cls)
    call check(cls /= MPI_SUCCESS, trim(what) // ': error class is MPI_SUCCESS')
    call MPI_Error_string(ierr, text, length)
    do i = 1, size(needles)
      call check(index(lower(text(1:length)), lower(trim(needles(i)))) > 0, &
          trim(what) // ': message does not name "' // trim(needles(i)) // '": ' // text(1:length))
    end do
  end subroutine expect_error

  pure function lower(s) result(t)
    character(len=*), intent(in) :: s
    character(len=len(s)) :: t
    integer :: i
    t = s
    do i = 1, len(s)
      if (s(i:i) >= 'A' .and. s(i:i) <= 'Z') t(i:i) = achar(iachar(s(i:i)) + 32)
    end do
  end function lower

end module test_util

! One module per element type, from the same body.
module checks_real32
#define FTYPE real(real32)
#define ELEM_MPI MPI_REAL
#define INT_OPS 0
  use, intrinsic :: iso_fortran_env, only: real32
#include "coll_checks.inc"
#undef FTYPE
#undef ELEM_MPI
#undef INT_OPS
end module checks_real32

module checks_real64
#define FTYPE real(real64)
#define ELEM_MPI MPI_DOUBLE_PRECISION
#define INT_OPS 0
  use, intrinsic :: iso_fortran_env, only: real64
#include "coll_checks.inc"
#undef FTYPE
#undef ELEM_MPI
#undef INT_OPS
end module checks_real64

module checks_integer
#define FTYPE integer
#define ELEM_MPI MPI_INTEGER
#define INT_OPS 1
#include "coll_checks.inc"
#undef FTYPE
#undef ELEM_MPI
#undef INT_OPS
end module checks_integer

program test_fortran
  use, intrinsic :: iso_c_binding, only: c_null_ptr, c_intptr_t
  use, intrinsic :: iso_fortran_env, only: int16, real64
  use mpi_f08
  use chorus
  use test_util
  use checks_real32, only: run_real32 => run_type_checks
  use checks_real64, only: run_real64 => run_type_checks
  use checks_integer, only: run_integer => run_type_checks
  implicit none
  type(MPI_Comm) :: sub
  integer :: rank, nranks, ierr, total
  character(len=:), allocatable :: version

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)

  version = MPIX_Gpu_version_string()
  call check(len(version) > 0, 'MPIX_Gpu_version_string is empty')
  if (rank == 0) write (*, '(a, ", ", i0, " ranks")') version, nranks

  call MPIX_Comm_gpu_init(MPI_COMM_WORLD, MPI_INFO_NULL, ierr)
  call expect_success(ierr, 'MPIX_Comm_gpu_init(MPI_COMM_WORLD)')

  call run_real32(MPI_COMM_WORLD, 'real32')
  call run_real64(MPI_COMM_WORLD, 'real64')
  call run_integer(MPI_COMM_WORLD, 'integer')

  ! A sub-communicator (even and odd ranks), set up and freed explicitly;
  ! no ierror here, so these also cover the calls without it.
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, sub)
  call MPIX_Comm_gpu_init(sub, MPI_INFO_NULL)
  call run_integer(sub, 'integer (split)')
  call MPIX_Barrier_gpu(sub)
  call MPIX_Comm_gpu_free(sub)
  call MPI_Comm_free(sub)

  call check_library_handles()
  call check_scalars()
  call check_errors()
  call test_legacy(failures)
  call test_loc_pairs(failures)

  call MPIX_Barrier_gpu(MPI_COMM_WORLD, ierr)
  call expect_success(ierr, 'MPIX_Barrier_gpu')
  call MPIX_Comm_gpu_free(MPI_COMM_WORLD, ierr)
  call expect_success(ierr, 'MPIX_Comm_gpu_free(MPI_COMM_WORLD)')

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (total == 0) then
      write (*, '("PASS: Fortran bindings on ", i0, " ranks")') nranks
    else
      write (*, '("FAIL: ", i0, " failed checks on ", i0, " ranks")') total, nranks
    end if
  end if
  call MPI_Finalize()
  if (total /= 0) stop 1

contains

  ! IEEE binary16 bits of a small positive integer (exact up to 2048).
  integer(int16) function half_bits(n)
    integer, intent(in) :: n
    integer :: e
    e = 0
    do while (2**(e + 1) <= n)
      e = e + 1
    end do
    half_bits = int(ior(ishft(e + 15, 10), ishft(n - 2**e, 10 - e)), int16)
  end function half_bits

  subroutine check_library_handles()
    integer :: sz, ierr
    integer(int16) :: h(37), hres(37)
    real(real64) :: d(5), dres(5)
    type(MPI_Datatype) :: f16
    type(MPI_Op) :: avg

    call MPI_Type_size(MPIX_GPU_FLOAT16(), sz)
    call check(sz == 2, 'size of MPIX_GPU_FLOAT16')
    call MPI_Type_size(MPIX_GPU_BFLOAT16(), sz)
    call check(sz == 2, 'size of MPIX_GPU_BFLOAT16')
    call MPI_Type_size(MPIX_GPU_FP8_E4M3(), sz)
    call check(sz == 1, 'size of MPIX_GPU_FP8_E4M3')
    call MPI_Type_size(MPIX_GPU_FP8_E5M2(), sz)
    call check(sz == 1, 'size of MPIX_GPU_FP8_E5M2')
    call check(MPIX_GPU_FLOAT16() == MPIX_GPU_FLOAT16(), 'MPIX_GPU_FLOAT16 is stable')
    f16 = MPIX_GPU_FLOAT16()
    call check(f16%MPI_VAL == MPIX_Gpu_type_float16(), &
        'MPIX_GPU_FLOAT16 and MPIX_Gpu_type_float16 agree')
    avg = MPIX_GPU_AVG()
    call check(avg%MPI_VAL == MPIX_Gpu_op_avg(), 'MPIX_GPU_AVG and MPIX_Gpu_op_avg agree')

    ! float16 sum of 1.0 from every rank is nranks.
    h = half_bits(1)
    hres = 0
    call MPIX_Allreduce_gpu(h, hres, size(h), MPIX_GPU_FLOAT16(), MPI_SUM, MPI_COMM_WORLD, ierr)
    call expect_success(ierr, 'float16 allreduce')
    call check(all(hres == half_bits(nranks)), 'float16 allreduce sum of 1.0')

    ! AVG of rank+1 is (nranks+1)/2.
    d = rank + 1
    call MPIX_Allreduce_gpu(d, dres, size(d), MPI_DOUBLE_PRECISION, MPIX_GPU_AVG(), &
        MPI_COMM_WORLD, ierr)
    call expect_success(ierr, 'AVG allreduce')
    call check(all(dres == (nranks + 1) / 2.0_real64), 'AVG allreduce of rank+1')
  end subroutine check_library_handles

  subroutine check_scalars()
    real(real64) :: x, y
    integer :: k
    x = rank + 1
    call MPIX_Allreduce_gpu(x, y, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
    call check(y == nranks, 'scalar allreduce')
    k = 0
    if (rank == nranks - 1) k = 42
    call MPIX_Bcast_gpu(k, 1_MPI_COUNT_KIND, MPI_INTEGER, nranks - 1, MPI_COMM_WORLD)
    call check(k == 42, 'scalar bcast')
  end subroutine check_scalars

  ! Errors come back in ierror (MPI_ERRORS_RETURN) with a message naming
  ! the argument; the communicator works afterwards.
  subroutine check_errors()
    type(MPI_Comm) :: ecomm
    real :: a(20), b(20), m(4, 5)
    integer :: ierr
    call MPI_Comm_dup(MPI_COMM_WORLD, ecomm)
    call MPI_Comm_set_errhandler(ecomm, MPI_ERRORS_RETURN)
    a = 1.0
    b = 0.0
    m = 2.0

    call MPIX_Allreduce_gpu(a, b, -1, MPI_REAL, MPI_SUM, ecomm, ierr)
    call expect_error(ierr, ['count'], 'allreduce with count -1')
    call MPIX_Bcast_gpu(a, 4, MPI_REAL, nranks, ecomm, ierr)
    call expect_error(ierr, ['root'], 'bcast with root = size')

    ! Strided sections are copied (test_sections.F90), but not past their end.
    call MPIX_Allreduce_gpu(a(1:20:2), b, 20, MPI_REAL, MPI_SUM, ecomm, ierr)
    call expect_error(ierr, [character(len=24) :: 'sendbuf', 'MPIX_Allreduce_gpu'], &
        'allreduce of more than a strided send section')
    call MPIX_Bcast_gpu(m(1, :), 6, MPI_REAL, 0, ecomm, ierr)
    call expect_error(ierr, ['buffer'], 'bcast of more than a matrix row')
    call MPIX_Alltoall_gpu_enqueue(a, 1, MPI_REAL, b(::4), 1, MPI_REAL, ecomm, c_null_ptr, ierr)
    call expect_error(ierr, [character(len=32) :: 'recvbuf', 'MPIX_Alltoall_gpu_enqueue'], &
        'alltoall_enqueue into a strided section')
    ! Without ierror the handler (MPI_ERRORS_RETURN) runs and the call returns.
    call MPIX_Allgather_gpu(a(1:2:2), 2, MPI_REAL, b, 2, MPI_REAL, ecomm)

    ! A contiguous section is fine, and the communicator still works.
    a = rank
    call MPIX_Allreduce_gpu(a(3:12), b(5:14), 10, MPI_REAL, MPI_SUM, ecomm, ierr)
    call expect_success(ierr, 'allreduce of contiguous sections after errors')
    call check(all(b(5:14) == nranks * (nranks - 1) / 2), 'allreduce of contiguous sections')
    call MPI_Comm_free(ecomm)
  end subroutine check_errors

end program test_fortran

! The same module from code that uses `use mpi` and integer handles.
subroutine test_legacy(nfail)
  use, intrinsic :: iso_c_binding, only: c_intptr_t, c_null_ptr
  use mpi
  use chorus
  implicit none
  integer, intent(inout) :: nfail
  integer :: rank, nranks, ierr, i, sz, ecomm
  integer :: a(10), b(10), g(10 * 8)

  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)

  a = [(i + rank, i = 1, 10)]
  call MPIX_Allreduce_gpu(a, b, 10, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call legacy_check(ierr == MPI_SUCCESS .and. &
      all(b == [(nranks * i + nranks * (nranks - 1) / 2, i = 1, 10)]), 'legacy allreduce')

  call MPIX_Allreduce_gpu(MPI_IN_PLACE, a, 10_MPI_COUNT_KIND, MPI_INTEGER, MPI_MAX, &
      MPI_COMM_WORLD, ierr)
  call legacy_check(ierr == MPI_SUCCESS .and. all(a == [(i + nranks - 1, i = 1, 10)]), &
      'legacy allreduce in place')

  a = rank
  call MPIX_Allgather_gpu_enqueue(a, 10, MPI_INTEGER, g, 10, MPI_INTEGER, MPI_COMM_WORLD, &
      0_c_intptr_t, ierr)
  call legacy_check(ierr == MPI_SUCCESS .and. &
      all(g(1:10 * nranks) == [((i - 1) / 10, i = 1, 10 * nranks)]), 'legacy allgather_enqueue')

  b = rank
  call MPIX_Bcast_gpu_enqueue(b, 10, MPI_INTEGER, 0, MPI_COMM_WORLD, c_null_ptr, ierr)
  call legacy_check(ierr == MPI_SUCCESS .and. all(b == 0), 'legacy bcast_enqueue')

  call MPI_Type_size(MPIX_Gpu_type_float16(), sz, ierr)
  call legacy_check(sz == 2, 'legacy MPIX_Gpu_type_float16 size')

  call MPI_Comm_dup(MPI_COMM_WORLD, ecomm, ierr)
  call MPI_Comm_set_errhandler(ecomm, MPI_ERRORS_RETURN, ierr)
  call MPIX_Comm_gpu_init(ecomm, MPI_INFO_NULL, ierr)
  call legacy_check(ierr == MPI_SUCCESS, 'legacy MPIX_Comm_gpu_init')
  call MPIX_Allreduce_gpu(a(1:10:3), b, 4, MPI_INTEGER, MPI_SUM, ecomm, ierr)
  call legacy_check(ierr == MPI_SUCCESS .and. all(b(1:4) == nranks * (nranks - 1) / 2) .and. &
      all(b(5:) == 0), 'legacy allreduce of a strided section')
  call MPIX_Barrier_gpu(ecomm, ierr)
  call legacy_check(ierr == MPI_SUCCESS, 'legacy barrier')
  call MPIX_Comm_gpu_free(ecomm, ierr)
  call legacy_check(ierr == MPI_SUCCESS, 'legacy MPIX_Comm_gpu_free')
  call MPI_Comm_free(ecomm, ierr)

contains

  subroutine legacy_check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    nfail = nfail + 1
    write (*, '("rank ", i0, ": FAIL ", a)') rank, what
  end subroutine legacy_check

end subroutine test_legacy

! MPI_MINLOC / MPI_MAXLOC on Fortran's pair types (MPI_2REAL,
! MPI_2DOUBLE_PRECISION, MPI_2INTEGER: (value, index) in consecutive
! elements), allreduce and reduce_scatter_block, against MPI's own on the
! same data; values repeat across ranks so ties (lowest index wins) happen.
subroutine test_loc_pairs(nfail)
  use mpi_f08
  use chorus
  implicit none
  integer, intent(inout) :: nfail
  integer, parameter :: n = 37
  integer :: rank, nranks, ierr, i, k
  real :: r(2, n), rgot(2, n), rwant(2, n)
  double precision :: d(2, n), dgot(2, n), dwant(2, n)
  integer :: m(2, n), mgot(2, n), mwant(2, n)
  integer, allocatable :: ms(:, :)
  type(MPI_Op) :: ops(2)

  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  ops = [MPI_MINLOC, MPI_MAXLOC]
  do i = 1, n
    m(1, i) = mod(i * 7 + rank * 3, 4)
    m(2, i) = mod(i * 13 + rank * 5, 11) - 5
  end do
  r = real(m)
  d = dble(m)
  do k = 1, 2
    rgot = -99
    call MPIX_Allreduce_gpu(r, rgot, n, MPI_2REAL, ops(k), MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(r, rwant, n, MPI_2REAL, ops(k), MPI_COMM_WORLD)
    call loc_check(ierr == MPI_SUCCESS .and. all(rgot == rwant), 'MPI_2REAL allreduce', k)
    dgot = -99
    call MPIX_Allreduce_gpu(d, dgot, n, MPI_2DOUBLE_PRECISION, ops(k), MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(d, dwant, n, MPI_2DOUBLE_PRECISION, ops(k), MPI_COMM_WORLD)
    call loc_check(ierr == MPI_SUCCESS .and. all(dgot == dwant), 'MPI_2DOUBLE_PRECISION allreduce', k)
    mgot = m
    call MPIX_Allreduce_gpu(MPI_IN_PLACE, mgot, n, MPI_2INTEGER, ops(k), MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(m, mwant, n, MPI_2INTEGER, ops(k), MPI_COMM_WORLD)
    call loc_check(ierr == MPI_SUCCESS .and. all(mgot == mwant), 'MPI_2INTEGER allreduce in place', k)
    allocate (ms(2, 3 * nranks))
    do i = 1, 3 * nranks
      ms(:, i) = [mod(i + rank, 3), mod(i * 5 + rank, 7)]
    end do
    mgot(:, 1:3) = -99
    call MPIX_Reduce_scatter_block_gpu(ms, mgot, 3, MPI_2INTEGER, ops(k), MPI_COMM_WORLD, ierr)
    call MPI_Reduce_scatter_block(ms, mwant, 3, MPI_2INTEGER, ops(k), MPI_COMM_WORLD)
    call loc_check(ierr == MPI_SUCCESS .and. all(mgot(:, 1:3) == mwant(:, 1:3)), &
        'MPI_2INTEGER reduce_scatter_block', k)
    deallocate (ms)
  end do

contains

  subroutine loc_check(ok, what, k)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(in) :: k
    if (ok) return
    nfail = nfail + 1
    write (*, '("rank ", i0, ": FAIL ", a, " with ", a)') rank, what, merge('MPI_MINLOC', 'MPI_MAXLOC', k == 1)
  end subroutine loc_check

end subroutine test_loc_pairs
