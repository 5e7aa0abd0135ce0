#!/bin/sh
# Run the plain MPI program test_interpose with libchorus_mpi.so preloaded
# and check both its results (against PMPI_) and the routing the library
# reports at MPI_Finalize (CHORUS_DEBUG=INFO) against what the program
# expects.
#
#   interpose.sh NP MODE [LAYOUT [PROGRAM]]
#
# MODE is CHORUS_INTERPOSE (all, device, off); LAYOUT a CHORUS_TEST_LAYOUT
# of nodes played on this machine (../mpi/hostid-wrap.sh), UCX over tcp, or
# "-" for one node; PROGRAM test_interpose (C, the default),
# test_interpose_linked (the same, linked with the library instead of
# preloaded), test_interpose_f (use mpi) or test_interpose_f08 (use mpi_f08).
set -u
np=$1 mode=$2 layout=${3:-} prog=${4:-test_interpose}
[ "$layout" = - ] && layout=
# The launcher and its flags (MPIEXEC_FLAGS added): scripts/mpirun-flags.sh.
. "$(dirname "$0")/../../scripts/mpirun-flags.sh"
[ "$mpirun_impl" != none ] || { echo "skipped: $mpirun not found"; exit 77; }
top=$(cd ../.. && pwd)
lib=$top/src/interpose/.libs/libchorus_mpi.so
[ -f "$lib" ] && [ -x "./$prog" ] || { echo "FAIL: $lib or ./$prog not built"; exit 1; }
flags=$mpirun_flags
wrap=
if [ -n "$layout" ]; then
  if ! "$top/tools/chorus_info" </dev/null 2>/dev/null | grep -q "UCX *: yes"; then
    echo "skipped: layout $layout needs the UCX transport, and this build has none"
    exit 77
  fi
  wrap="$(cd "$(dirname "$0")/../mpi" && pwd)/hostid-wrap.sh"
  export CHORUS_TEST_LAYOUT=$layout UCX_TLS=${UCX_TLS:-tcp}
fi
export CHORUS_INTERPOSE=$mode CHORUS_DEBUG=INFO CHORUS_DEBUG_SUBSYS=COLL CHORUS_TIMEOUT=${CHORUS_TIMEOUT:-60}
unset CHORUS_DEBUG_FILE
out=$(mktemp)
trap 'rm -f "$out"' EXIT
preload=$lib
case $prog in *_linked) preload= ;; esac
echo "$mpirun -np $np $flags $wrap env LD_PRELOAD=$preload ./$prog (CHORUS_INTERPOSE=$mode${layout:+ CHORUS_TEST_LAYOUT=$layout})"
# Only the ranks get the library: mpirun itself is no MPI program.
# shellcheck disable=SC2086
timeout --kill-after=10 "${CHORUS_TEST_TIMEOUT:-300}" "$mpirun" -np "$np" $flags $wrap \
  env LD_PRELOAD="$preload" LD_LIBRARY_PATH="$top/src/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "./$prog" </dev/null >"$out" 2>&1
rc=$?
grep -v "CHORUS INFO" "$out"
[ $rc = 0 ] || { echo "FAIL: exit status $rc"; tail -20 "$out"; exit 1; }
grep -q "^PASS:" "$out" || { echo "FAIL: no PASS line"; exit 1; }
status=0
n=0
for line in $(grep "^expect: " "$out" | sed 's/^expect: //; s/ /,/g'); do
  want=$(echo "$line" | tr ',' ' ')
  got=$(grep -c "CHORUS INFO interpose (CHORUS_INTERPOSE=$mode): $want\$" "$out")
  n=$((n + 1))
  if [ "$got" != "$np" ]; then
    echo "FAIL: '$want' reported by $got of $np ranks; they said:"
    grep "CHORUS INFO interpose .*: ${want%% *} " "$out"
    status=1
  fi
done
[ $n -ge 7 ] || { echo "FAIL: expected 7 or more routing lines from the program, got $n"; exit 1; }
[ $status = 0 ] && echo "PASS: routing as expected on all $np ranks (CHORUS_INTERPOSE=$mode)"
exit $status
