#!/usr/bin/env python3
"""Write chorus.f90, the Fortran module over chorus.h.

The module is ~80 thin wrappers that differ only in handle style (mpi_f08
derived types or `use mpi` integers), count kind (default integer or
MPI_COUNT_KIND) and, for the _enqueue calls, stream kind (type(c_ptr) or
integer(c_intptr_t)).  Writing them by hand invites copy-paste slips, so this
script writes them from the table below.  The output is committed: building
Chorus does not need Python.  After editing, run

    python3 src/fortran/gen_chorus_f90.py > src/fortran/chorus.f90
"""

import sys

# (C name, shim suffix, argument list).  Argument kinds:
#   sbuf  send buffer (may be MPI_IN_PLACE)    rbuf/buf  written buffer
#   count MPI_Count                            dtype/op/comm/info  handles
#   root  int
COLLECTIVES = [
    ("MPIX_Allreduce_gpu", "allreduce",
     [("sendbuf", "sbuf"), ("recvbuf", "rbuf"), ("count", "count"),
      ("datatype", "dtype"), ("op", "op"), ("comm", "comm")]),
    ("MPIX_Reduce_gpu", "reduce",
     [("sendbuf", "sbuf"), ("recvbuf", "rbuf"), ("count", "count"),
      ("datatype", "dtype"), ("op", "op"), ("root", "root"), ("comm", "comm")]),
    ("MPIX_Bcast_gpu", "bcast",
     [("buffer", "buf"), ("count", "count"), ("datatype", "dtype"),
      ("root", "root"), ("comm", "comm")]),
    ("MPIX_Allgather_gpu", "allgather",
     [("sendbuf", "sbuf"), ("sendcount", "count"), ("sendtype", "dtype"),
      ("recvbuf", "rbuf"), ("recvcount", "count"), ("recvtype", "dtype"),
      ("comm", "comm")]),
    ("MPIX_Reduce_scatter_block_gpu", "reduce_scatter_block",
     [("sendbuf", "sbuf"), ("recvbuf", "rbuf"), ("recvcount", "count"),
      ("datatype", "dtype"), ("op", "op"), ("comm", "comm")]),
    ("MPIX_Alltoall_gpu", "alltoall",
     [("sendbuf", "sbuf"), ("sendcount", "count"), ("sendtype", "dtype"),
      ("recvbuf", "rbuf"), ("recvcount", "count"), ("recvtype", "dtype"),
      ("comm", "comm")]),
]
# Calls without buffers or counts (no _enqueue form).
SIMPLE = [
    ("MPIX_Barrier_gpu", "barrier", [("comm", "comm")]),
    ("MPIX_Comm_gpu_init", "comm_gpu_init", [("comm", "comm"), ("info", "info")]),
    ("MPIX_Comm_gpu_free", "comm_gpu_free", [("comm", "comm")]),
    ("MPIX_Comm_gpu_trace_dump", "comm_gpu_trace_dump", [("comm", "comm")]),
]
# (Fortran f08 name, integer-handle name, C shim, handle type)
HANDLES = [
    ("MPIX_GPU_FLOAT16", "MPIX_Gpu_type_float16", "chorus_f_type_float16", "MPI_Datatype"),
    ("MPIX_GPU_BFLOAT16", "MPIX_Gpu_type_bfloat16", "chorus_f_type_bfloat16", "MPI_Datatype"),
    ("MPIX_GPU_FP8_E4M3", "MPIX_Gpu_type_fp8_e4m3", "chorus_f_type_fp8_e4m3", "MPI_Datatype"),
    ("MPIX_GPU_FP8_E5M2", "MPIX_Gpu_type_fp8_e5m2", "chorus_f_type_fp8_e5m2", "MPI_Datatype"),
    ("MPIX_GPU_AVG", "MPIX_Gpu_op_avg", "chorus_f_op_avg", "MPI_Op"),
]
HANDLE_TYPE = {"dtype": "MPI_Datatype", "op": "MPI_Op", "comm": "MPI_Comm", "info": "MPI_Info"}

out = []


def emit(line=""):
    out.append(line)


def wrap(head, items, tail, indent):
    """Emit `head item, item, ... tail` split into continuation lines."""
    pad = " " * indent
    line = pad + head
    parts = []
    for i, it in enumerate(items):
        sep = ", " if i < len(items) - 1 else ""
        if len(line) + len(it) + len(sep) + len(tail) > 96:
            parts.append(line.rstrip() + " &")
            line = pad + "    " + it + sep
        else:
            line += it + sep
    parts.append(line + tail)
    for p in parts:
        emit(p)


def shim_interface(cname, shim, args, enqueue):
    """bind(C) interface of one chorus_f_* shim."""
    names = [n for n, _ in args] + (["stream"] if enqueue else [])
    has_sbuf = any(k == "sbuf" for _, k in args)
    if has_sbuf:
        names.append("f_in_place")
    wrap(f"integer(c_int) function {shim}(", names, f") bind(C, name=\"{shim}\")", 4)
    imports = ["c_int", "c_int64_t", "c_ptr"] + (["c_intptr_t"] if enqueue else [])
    emit(f"      import :: {', '.join(imports)}")
    for n, k in args:
        if k in ("sbuf", "rbuf", "buf"):
            emit(f"      type(c_ptr), value :: {n}")
        elif k == "count":
            emit(f"      integer(c_int64_t), value :: {n}")
        else:
            emit(f"      integer(c_int), value :: {n}")
    if enqueue:
        emit("      integer(c_intptr_t), value :: stream")
    if has_sbuf:
        emit("      type(*) :: f_in_place")
    emit(f"    end function {shim}")


def sections_interface(shim, args):
    """bind(C) interface of one chorus_f_*_sections shim (sections.c): the
    buffers go as descriptors, which C reads through ISO_Fortran_binding.h."""
    name = shim + "_sections"
    names = [n for n, _ in args]
    has_sbuf = any(k == "sbuf" for _, k in args)
    if has_sbuf:
        names.append("f_in_place")
    wrap(f"integer(c_int) function {name}(", names, f") bind(C, name=\"{name}\")", 4)
    emit("      import :: c_int, c_int64_t")
    for n, k in args:
        if k == "sbuf":
            emit(f"      type(*), dimension(..), intent(in) :: {n}")
        elif k in ("rbuf", "buf"):
            emit(f"      type(*), dimension(..) :: {n}")
        elif k == "count":
            emit(f"      integer(c_int64_t), value :: {n}")
        else:
            emit(f"      integer(c_int), value :: {n}")
    if has_sbuf:
        emit("      type(*) :: f_in_place")
    emit(f"    end function {name}")


def specific_name(shim, style, ckind, skind):
    s = shim.replace("chorus_f_", "")
    name = f"{s}_{style}"
    if ckind:
        name += "_" + ckind
    if skind:
        name += "_" + skind
    return name


def specific(cname, shim, args, style, ckind, skind):
    """One module procedure: check contiguity, convert, call the shim."""
    enqueue = skind is not None
    pname = specific_name(shim + ("_enqueue" if enqueue else ""), style, ckind, skind)
    names = [n for n, _ in args] + (["stream"] if enqueue else []) + ["ierror"]
    emit()
    wrap(f"  subroutine {pname}(", names, ")", 0)
    bufs = []
    asyn = ", asynchronous" if enqueue else ""
    for n, k in args:
        if k == "sbuf":
            emit(f"    type(*), dimension(..), intent(in), target{asyn} :: {n}")
            bufs.append(n)
        elif k in ("rbuf", "buf"):
            emit(f"    type(*), dimension(..), target{asyn} :: {n}")
            bufs.append(n)
        elif k == "count":
            kind = "(MPI_COUNT_KIND)" if ckind == "c" else ""
            emit(f"    integer{kind}, intent(in) :: {n}")
        elif k == "root":
            emit(f"    integer, intent(in) :: {n}")
        elif style == "f08":
            emit(f"    type({HANDLE_TYPE[k]}), intent(in) :: {n}")
        else:
            emit(f"    integer, intent(in) :: {n}")
    if skind == "p":
        emit("    type(c_ptr), value :: stream")
    elif skind == "h":
        emit("    integer(c_intptr_t), value :: stream")
    emit("    integer, optional, intent(out) :: ierror")
    emit("    integer(c_int) :: rc")

    def handle(n):
        return f"{n}%MPI_VAL" if style == "f08" else n

    call = []
    for n, k in args:
        if k in ("sbuf", "rbuf", "buf"):
            call.append(f"c_loc({n})")
        elif k == "count":
            call.append(f"int({n}, c_int64_t)")
        elif k == "root":
            call.append(n)
        else:
            call.append(handle(n))
    if enqueue:
        call.append("transfer(stream, 0_c_intptr_t)" if skind == "p" else "stream")
    if any(k == "sbuf" for _, k in args):
        call.append("f08_in_place" if style == "f08" else "f77_in_place")
    shim_name = shim + ("_enqueue" if enqueue else "")
    full = cname + ("_enqueue" if enqueue else "")
    comm = handle("comm")
    if bufs and enqueue:
        # The call returns before the data moves: no copy could be written
        # back in time, so a strided section is refused.
        kw = "if"
        for b in bufs:
            emit(f"    {kw} (.not. is_contiguous({b})) then")
            emit(f"      rc = raise_noncontiguous({comm}, '{full}', '{b}')")
            kw = "else if"
        emit("    else")
        wrap(f"  rc = {shim_name}(", call, ")", 4)
        emit("    end if")
    elif bufs:
        # Strided sections go, as descriptors, to the shim that copies them.
        emit(f"    if ({' .and. '.join(f'is_contiguous({b})' for b in bufs)}) then")
        wrap(f"  rc = {shim_name}(", call, ")", 4)
        emit("    else")
        scall = [n if k in ("sbuf", "rbuf", "buf") else c
                 for (n, k), c in zip(args, call)]
        if any(k == "sbuf" for _, k in args):
            scall.append(call[-1])
        wrap(f"  rc = {shim_name}_sections(", scall, ")", 4)
        emit("    end if")
    else:
        wrap(f"rc = {shim_name}(", call, ")", 4)
    emit("    if (present(ierror)) ierror = int(rc)")
    emit(f"  end subroutine {pname}")


def variants(has_count, enqueue):
    for style in ("f08", "int"):
        for ckind in (("i", "c") if has_count else (None,)):
            for skind in (("p", "h") if enqueue else (None,)):
                yield style, ckind, skind


HEADER = """\
! chorus.f90 - Fortran bindings of Chorus (module `chorus`).
!
! GENERATED by gen_chorus_f90.py in this folder; edit the generator, not this
! file.  The module is built with the MPI Fortran wrapper (mpifort) that
! matches the MPI Chorus was built with.
!
! Every MPIX_*_gpu call of chorus.h is a generic name here that accepts
!   - mpi_f08 handles (type(MPI_Comm), ...) or `use mpi` integer handles,
!   - counts of default integer kind or of kind MPI_COUNT_KIND
!     (both counts of one call must have the same kind),
!   - for the _enqueue calls, the CUDA stream as type(c_ptr) or as
!     integer(c_intptr_t) (CUDA Fortran's integer(cuda_stream_kind)),
!   - buffers of any type and rank (TYPE(*), DIMENSION(..)).  A strided
!     section of host memory is copied into a contiguous temporary and,
!     when the call writes it, back (chorus_f_*_sections in sections.c), as
!     MPI's own bindings do; the _enqueue calls and device memory take
!     contiguous buffers only, and refuse a section with an MPI error whose
!     MPI_Error_string names the call and the argument,
!   - MPI_IN_PLACE from either MPI module as the send buffer,
!   - an optional last argument ierror, as in MPI.  Errors are raised through
!     the communicator's error handler before returning, so with the default
!     MPI_ERRORS_ARE_FATAL a failing call aborts whether or not ierror is
!     present.
! The library datatypes and op are functions: MPIX_GPU_FLOAT16(),
! MPIX_GPU_BFLOAT16(), MPIX_GPU_FP8_E4M3(), MPIX_GPU_FP8_E5M2() and
! MPIX_GPU_AVG() return mpi_f08 handles; MPIX_Gpu_type_float16() ... and
! MPIX_Gpu_op_avg() return the same handles as `use mpi` integers.
!
! Contiguous buffers are passed by address (c_loc) to C shims in chorus_f.c,
! which turn Fortran handles into C ones (MPI_Comm_f2c, ...) and call
! chorus.h.
module chorus
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_intptr_t, c_ptr, c_loc, &
      c_char, c_null_char, c_size_t, c_f_pointer
  use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_Op, MPI_Info, MPI_COUNT_KIND, &
      f08_in_place => MPI_IN_PLACE
  use mpi, only: f77_in_place => MPI_IN_PLACE
  implicit none
  private
"""


def main():
    emit(HEADER.rstrip("\n"))
    for cname, _, _ in COLLECTIVES:
        emit(f"  public :: {cname}, {cname}_enqueue")
    for cname, _, _ in SIMPLE:
        emit(f"  public :: {cname}")
    for f08, f77, _, _ in HANDLES:
        emit(f"  public :: {f08}, {f77}")
    emit("  public :: MPIX_Gpu_version_string")

    # Generic interfaces.
    for cname, shim, args in COLLECTIVES:
        for enqueue in (False, True):
            full = cname + ("_enqueue" if enqueue else "")
            emit()
            emit(f"  interface {full}")
            names = [specific_name("chorus_f_" + shim + ("_enqueue" if enqueue else ""), *v)
                     for v in variants(True, enqueue)]
            wrap("module procedure ", names, "", 4)
            emit(f"  end interface {full}")
    for cname, shim, args in SIMPLE:
        emit()
        emit(f"  interface {cname}")
        names = [specific_name("chorus_f_" + shim, *v) for v in variants(False, False)]
        wrap("module procedure ", names, "", 4)
        emit(f"  end interface {cname}")

    # The C shims.
    emit()
    emit("  interface")
    for cname, shim, args in COLLECTIVES:
        shim_interface(cname, "chorus_f_" + shim, args, False)
        sections_interface("chorus_f_" + shim, args)
        shim_interface(cname, "chorus_f_" + shim + "_enqueue", args, True)
    for cname, shim, args in SIMPLE:
        shim_interface(cname, "chorus_f_" + shim, args, False)
    for _, _, shim, _ in HANDLES:
        emit(f"    integer(c_int) function {shim}() bind(C, name=\"{shim}\")")
        emit("      import :: c_int")
        emit(f"    end function {shim}")
    emit("    integer(c_int) function chorus_f_raise_noncontiguous(comm, routine, argument) &")
    emit("        bind(C, name=\"chorus_f_raise_noncontiguous\")")
    emit("      import :: c_int, c_char")
    emit("      integer(c_int), value :: comm")
    emit("      character(kind=c_char), dimension(*), intent(in) :: routine, argument")
    emit("    end function chorus_f_raise_noncontiguous")
    emit("    type(c_ptr) function chorus_f_version_string(length) &")
    emit("        bind(C, name=\"chorus_f_version_string\")")
    emit("      import :: c_ptr, c_size_t")
    emit("      integer(c_size_t), intent(out) :: length")
    emit("    end function chorus_f_version_string")
    emit("  end interface")

    emit()
    emit("contains")
    emit()
    emit("  ! Raise the error of a strided section an _enqueue call cannot take.")
    emit("  integer(c_int) function raise_noncontiguous(comm, routine, argument)")
    emit("    integer, intent(in) :: comm")
    emit("    character(len=*), intent(in) :: routine, argument")
    emit("    raise_noncontiguous = chorus_f_raise_noncontiguous(comm, &")
    emit("        routine // c_null_char, argument // c_null_char)")
    emit("  end function raise_noncontiguous")

    for cname, shim, args in COLLECTIVES:
        for enqueue in (False, True):
            for style, ckind, skind in variants(True, enqueue):
                specific(cname, "chorus_f_" + shim, args, style, ckind, skind)
    for cname, shim, args in SIMPLE:
        for style, ckind, skind in variants(False, False):
            specific(cname, "chorus_f_" + shim, args, style, ckind, skind)

    for f08, f77, shim, htype in HANDLES:
        emit()
        emit(f"  type({htype}) function {f08}()")
        emit(f"    {f08}%MPI_VAL = int({shim}())")
        emit(f"  end function {f08}")
        emit()
        emit(f"  integer function {f77}()")
        emit(f"    {f77} = int({shim}())")
        emit(f"  end function {f77}")

    emit()
    emit("  ! Library version and build configuration, as MPIX_Gpu_version_string.")
    emit("  function MPIX_Gpu_version_string() result(version)")
    emit("    character(len=:), allocatable :: version")
    emit("    character(kind=c_char), pointer :: chars(:)")
    emit("    integer(c_size_t) :: length")
    emit("    integer :: i")
    emit("    call c_f_pointer(chorus_f_version_string(length), chars, [length])")
    emit("    allocate(character(len=length) :: version)")
    emit("    do i = 1, int(length)")
    emit("      version(i:i) = chars(i)")
    emit("    end do")
    emit("  end function MPIX_Gpu_version_string")
    emit()
    emit("end module chorus")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
