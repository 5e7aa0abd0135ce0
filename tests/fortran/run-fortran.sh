#!/bin/sh
# run-fortran.sh NP - run ./test_fortran under mpirun with NP ranks.
#
# MPIEXEC and MPIEXEC_FLAGS come from configure through make check; by hand
# they default to mpiexec and Open MPI's flags for small one-node runs
# (--oversubscribe, and --mca op ^avx since Open MPI 4.1's AVX int8 sums
# saturate).  As root, Open MPI also wants OMPI_ALLOW_RUN_AS_ROOT=1
# OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 or --allow-run-as-root.
np=${1:?usage: run-fortran.sh NP}
prog=./test_fortran
if [ ! -x "$prog" ]; then
  echo "run-fortran.sh: $prog is missing (make check builds it)" >&2
  exit 99
fi
: "${MPIEXEC:=mpiexec}"
MPIEXEC_FLAGS=${MPIEXEC_FLAGS---oversubscribe --mca op ^avx}
limit=
if command -v timeout >/dev/null 2>&1; then
  limit="timeout 300"
fi
echo "$MPIEXEC $MPIEXEC_FLAGS -np $np $prog"
# No stdin: mpirun would otherwise forward the terminal to rank 0.
exec $limit $MPIEXEC $MPIEXEC_FLAGS -np "$np" "$prog" </dev/null
