#!/bin/sh
# run-fortran.sh NP [PROGRAM] - run ./PROGRAM (default test_fortran) under
# mpirun with NP ranks.
#
# MPIEXEC and MPIEXEC_FLAGS come from configure through make check; the
# launcher's flags from scripts/mpirun-flags.sh (the one place for them).
np=${1:?usage: run-fortran.sh NP [PROGRAM]}
prog=./${2:-test_fortran}
if [ ! -x "$prog" ]; then
  echo "run-fortran.sh: $prog is missing (make check builds it)" >&2
  exit 99
fi
. "$(dirname "$0")/../../scripts/mpirun-flags.sh"
[ "$mpirun_impl" != none ] || { echo "skipped: $mpirun not found"; exit 77; }
limit=
if command -v timeout >/dev/null 2>&1; then
  limit="timeout 300"
fi
echo "$mpirun $mpirun_flags -np $np $prog"
# No stdin: mpirun would otherwise forward the terminal to rank 0.
exec $limit "$mpirun" $mpirun_flags -np "$np" "$prog" </dev/null
