# chorus_cuda.m4 - CUDA (optional): nvcc for src/cuda/*.cu, static cudart.
#
# --with-cuda[=DIR]        default: auto ($CUDA_HOME, /usr/local/cuda, nvcc in PATH)
# --with-nvcc-gencode=FLAGS default: sm_80 and sm_90 cubins + compute_90 PTX
# --enable-cuda-dev-build  instantiate fewer kernels (developer switch)
# --enable-cuda-emulation  no toolkit: the kernels are compiled by the C++
#                          compiler against the CPU emulation of CUDA in
#                          src/cuda/emu (libchorus_cudaemu), so they run in CI
#
# Substitutes NVCC, NVCC_GENCODE, NVCC_FLAGS, CUDA_CPPFLAGS, CUDA_LDFLAGS and
# CUDA_LIBS.  cudart is linked statically (-lcudart_static) so that
# libchorus loads on machines without the CUDA toolkit and without a driver;
# the driver (libcuda.so.1) is opened at run time by cudart itself.
# AM_CONDITIONALs HAVE_CUDA, CUDA_DEV_BUILD and CUDA_EMULATION; defines
# CHORUS_HAVE_CUDA, CHORUS_CUDA_DEV_BUILD and CHORUS_CUDA_EMULATION (in DEFS
# and in CHORUS_DEFS for nvcc).

# _CHORUS_CUDA_TRY(DIR): set chorus_have_cuda=yes and the CUDA_* variables if
# DIR holds a usable toolkit, else set chorus_cuda_why.
AC_DEFUN([_CHORUS_CUDA_TRY], [
chorus_cuda_dir=$1
chorus_have_cuda=no
chorus_nvcc=$NVCC
AS_IF([test -z "$chorus_nvcc"], [chorus_nvcc="$chorus_cuda_dir/bin/nvcc"])
chorus_cuda_libdir=
for chorus_d in "$chorus_cuda_dir/lib64" "$chorus_cuda_dir/lib" \
                "$chorus_cuda_dir"/targets/*/lib; do
  AS_IF([test -f "$chorus_d/libcudart_static.a"],
        [chorus_cuda_libdir=$chorus_d; break])
done
AS_IF([test ! -x "$chorus_nvcc" && ! command -v "$chorus_nvcc" >/dev/null 2>&1],
  [chorus_cuda_why="no ($chorus_nvcc not found)"],
  [test ! -f "$chorus_cuda_dir/include/cuda_runtime.h"],
  [chorus_cuda_why="no ($chorus_cuda_dir/include/cuda_runtime.h not found)"],
  [test -z "$chorus_cuda_libdir"],
  [chorus_cuda_why="no (libcudart_static.a not found under $chorus_cuda_dir)"],
  [chorus_have_cuda=maybe])

AS_IF([test "$chorus_have_cuda" = maybe], [
  AC_LANG_PUSH([C++])
  chorus_save_CPPFLAGS=$CPPFLAGS
  chorus_save_LDFLAGS=$LDFLAGS
  chorus_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS -I$chorus_cuda_dir/include"
  LDFLAGS="$LDFLAGS -L$chorus_cuda_libdir"
  LIBS="-lcudart_static -ldl -lrt -lpthread $LIBS"
  AC_MSG_CHECKING([whether a program links with static cudart from $chorus_cuda_dir])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cuda_runtime.h>]],
      [[int n = 0; return cudaGetDeviceCount(&n) == cudaSuccess ? 0 : 1;]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     chorus_have_cuda=no
     chorus_cuda_why="no (cannot link with -lcudart_static from $chorus_cuda_libdir)"])
  CPPFLAGS=$chorus_save_CPPFLAGS
  LDFLAGS=$chorus_save_LDFLAGS
  LIBS=$chorus_save_LIBS
  AC_LANG_POP([C++])
])

AS_IF([test "$chorus_have_cuda" = maybe], [
  AC_MSG_CHECKING([whether $chorus_nvcc compiles for $NVCC_GENCODE])
  cat > conftest.cu <<CHORUS_CU_EOF
__global__ void chorus_probe(int *p) { p[[threadIdx.x]] = 1; }
int main() { return 0; }
CHORUS_CU_EOF
  AS_IF([$chorus_nvcc -std=c++17 -Xcompiler -fPIC $NVCC_GENCODE $NVCC_FLAGS \
           -c conftest.cu -o conftest.$OBJEXT >&AS_MESSAGE_LOG_FD 2>&1],
    [AC_MSG_RESULT([yes]); chorus_have_cuda=yes],
    [AC_MSG_RESULT([no])
     chorus_cuda_why="no ($chorus_nvcc fails on a trivial kernel with '$NVCC_GENCODE $NVCC_FLAGS'; see config.log)"])
  rm -f conftest.cu conftest.$OBJEXT
])

AS_IF([test "$chorus_have_cuda" = yes], [
  NVCC=$chorus_nvcc
  CUDA_CPPFLAGS="-I$chorus_cuda_dir/include"
  CUDA_LDFLAGS="-L$chorus_cuda_libdir"
  CUDA_LIBS="-lcudart_static -ldl -lrt -lpthread"
  chorus_cuda_version=`$NVCC --version 2>/dev/null | sed -n 's/.*release \([[0-9.]]*\).*/\1/p'`
  chorus_cuda_why="yes ${chorus_cuda_version:+$chorus_cuda_version }($chorus_cuda_dir)"
])
])

AC_DEFUN([CHORUS_CHECK_CUDA], [
AC_ARG_WITH([cuda],
  [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
    [build the CUDA executor with the toolkit in DIR (default: auto-detect
     $CUDA_HOME, /usr/local/cuda, or nvcc in PATH; --without-cuda disables)])],
  [], [with_cuda=auto])
chorus_default_gencode='-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90'
AC_ARG_WITH([nvcc-gencode],
  [AS_HELP_STRING([--with-nvcc-gencode=FLAGS],
    [nvcc code generation flags (default: Ampere and Hopper cubins plus
     Hopper PTX: -gencode=arch=compute_80,code=sm_80
     -gencode=arch=compute_90,code=sm_90
     -gencode=arch=compute_90,code=compute_90)])],
  [NVCC_GENCODE=$withval], [NVCC_GENCODE=$chorus_default_gencode])
AC_ARG_ENABLE([cuda-dev-build],
  [AS_HELP_STRING([--enable-cuda-dev-build],
    [instantiate only a few kernels, for fast developer builds (default: no)])],
  [], [enable_cuda_dev_build=no])
AC_ARG_VAR([NVCC], [CUDA compiler (default: DIR/bin/nvcc)])
AC_ARG_VAR([NVCC_FLAGS], [extra nvcc flags (default: -O2)])
AS_IF([test -z "$NVCC_FLAGS"], [NVCC_FLAGS="-O2"])

AC_ARG_ENABLE([cuda-emulation],
  [AS_HELP_STRING([--enable-cuda-emulation],
    [build the CUDA executor against a CPU emulation of CUDA instead of a
     toolkit (src/cuda/emu): the kernels run as host threads, for CI on
     machines without a GPU; not for production (default: no)])],
  [], [enable_cuda_emulation=no])

chorus_have_cuda=no
AS_IF([test "x$enable_cuda_emulation" = xyes], [with_cuda=emulation])
AS_CASE([$with_cuda],
  [emulation], [
    chorus_have_cuda=yes
    chorus_cuda_why="yes, emulated on the CPU (src/cuda/emu; --enable-cuda-emulation)"],
  [no], [chorus_cuda_why="no (--without-cuda)"],
  [yes|auto], [
    chorus_cuda_candidates=
    AS_IF([test -n "$CUDA_HOME"], [chorus_cuda_candidates="$CUDA_HOME"])
    chorus_cuda_candidates="$chorus_cuda_candidates /usr/local/cuda"
    chorus_nvcc_path=`command -v ${NVCC:-nvcc} 2>/dev/null`
    AS_IF([test -n "$chorus_nvcc_path"],
      [chorus_cuda_candidates="$chorus_cuda_candidates `dirname \`dirname $chorus_nvcc_path\``"])
    chorus_cuda_why="no (no CUDA toolkit in $chorus_cuda_candidates)"
    for chorus_cand in $chorus_cuda_candidates; do
      AS_IF([test -d "$chorus_cand"], [
        _CHORUS_CUDA_TRY([$chorus_cand])
        AS_IF([test "$chorus_have_cuda" = yes], [break])
      ])
    done],
  [_CHORUS_CUDA_TRY([$with_cuda])])

AS_IF([test "$chorus_have_cuda" != yes && test "x$with_cuda" != xno &&
       test "x$with_cuda" != xauto && test "x$with_cuda" != xemulation],
  [AC_MSG_ERROR([--with-cuda=$with_cuda given but CUDA is unusable: $chorus_cuda_why])])

AC_MSG_CHECKING([for CUDA])
AC_MSG_RESULT([$chorus_cuda_why])

AS_IF([test "x$with_cuda" = xemulation], [
  # Substituted unexpanded: make expands them in each directory.
  NVCC=
  CUDA_CPPFLAGS='-I$(top_srcdir)/src/cuda/emu/include'
  CUDA_LDFLAGS=
  CUDA_LIBS='$(top_builddir)/src/libchorus_cudaemu.la'
  AC_DEFINE([CHORUS_CUDA_EMULATION], [1], [CUDA is the CPU emulation of src/cuda/emu])
  CHORUS_DEFS="$CHORUS_DEFS -DCHORUS_CUDA_EMULATION=1"
])

AS_IF([test "$chorus_have_cuda" = yes], [
  AC_DEFINE([CHORUS_HAVE_CUDA], [1], [CUDA executor is built])
  CHORUS_DEFS="$CHORUS_DEFS -DCHORUS_HAVE_CUDA=1"
  AS_IF([test "x$enable_cuda_dev_build" = xyes], [
    AC_DEFINE([CHORUS_CUDA_DEV_BUILD], [1], [instantiate only a few kernels])
    CHORUS_DEFS="$CHORUS_DEFS -DCHORUS_CUDA_DEV_BUILD=1"
  ])
], [
  NVCC=
  CUDA_CPPFLAGS=
  CUDA_LDFLAGS=
  CUDA_LIBS=
  enable_cuda_dev_build=no
])
chorus_cuda_dev_build=$enable_cuda_dev_build

AC_SUBST([NVCC_GENCODE])
AC_SUBST([CUDA_CPPFLAGS])
AC_SUBST([CUDA_LDFLAGS])
AC_SUBST([CUDA_LIBS])
AM_CONDITIONAL([HAVE_CUDA], [test "$chorus_have_cuda" = yes])
AM_CONDITIONAL([CUDA_EMULATION], [test "x$with_cuda" = xemulation])
AM_CONDITIONAL([CUDA_DEV_BUILD],
  [test "$chorus_have_cuda" = yes && test "x$enable_cuda_dev_build" = xyes])
])
