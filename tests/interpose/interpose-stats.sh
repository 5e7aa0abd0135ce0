#!/bin/sh
# What libchorus_mpi.so says about its routing (issue 33, item 7), on 2 ranks
# with host buffers: test_interpose_stats, preloaded, CHORUS_STATS=1.
#  - The default CHORUS_INTERPOSE (device) in a job where no rank sees a GPU
#    routes nothing: one WARN in the job, by rank 0, naming
#    CHORUS_INTERPOSE=all; every rank's total line counts all its calls as
#    MPI's, for no-gpu.  (Where a rank sees a GPU, the ranks agree per call,
#    find host buffers, and say nothing: host-memory.)
#  - CHORUS_INTERPOSE=all: no WARN; the supported calls routed, the one with
#    a user-defined op MPI's, for its arguments.
# The program checks every result against its own arithmetic and prints
# how many calls it made.
set -u
np=2
# The launcher and its flags (MPIEXEC_FLAGS added): scripts/mpirun-flags.sh.
. "$(dirname "$0")/../../scripts/mpirun-flags.sh"
[ "$mpirun_impl" != none ] || { echo "skipped: $mpirun not found"; exit 77; }
top=$(cd ../.. && pwd)
lib=$top/src/interpose/.libs/libchorus_mpi.so
[ -f "$lib" ] && [ -x ./test_interpose_stats ] || { echo "FAIL: $lib or ./test_interpose_stats not built"; exit 1; }
unset CHORUS_DEBUG CHORUS_DEBUG_FILE CHORUS_INTERPOSE
export CHORUS_STATS=1 CHORUS_TIMEOUT=${CHORUS_TIMEOUT:-60}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# run [MODE]: the job, with CHORUS_INTERPOSE=MODE or unset; sets calls,
# supported and gpu from the program's "calls:" line.
run() {
  if [ $# -gt 0 ]; then export CHORUS_INTERPOSE="$1"; else unset CHORUS_INTERPOSE; fi
  echo "$mpirun -np $np $mpirun_flags env LD_PRELOAD=$lib ./test_interpose_stats (CHORUS_INTERPOSE=${1:-unset})"
  # shellcheck disable=SC2086
  timeout --kill-after=10 120 "$mpirun" -np $np $mpirun_flags \
    env LD_PRELOAD="$lib" LD_LIBRARY_PATH="$top/src/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    ./test_interpose_stats </dev/null >"$out" 2>&1
  rc=$?
  cat "$out"
  [ $rc = 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
  grep -q "^PASS:" "$out" || { echo "FAIL: no PASS line"; exit 1; }
  # shellcheck disable=SC2046
  set -- $(sed -n 's/^calls: \([0-9]*\) supported \([0-9]*\) gpu \([0-9]*\)$/\1 \2 \3/p' "$out")
  [ $# = 3 ] || { echo "FAIL: no 'calls:' line"; exit 1; }
  calls=$1 supported=$2 gpu=$3
}
# How many ranks printed "CHORUS STATS interpose ...: WHAT" (WHAT: the call
# and its counts).
ranks() { grep -c "^CHORUS STATS interpose rank [0-9]*/$np: $1\$" "$out"; }
warns() { grep -c "CHORUS WARN .*routes no MPI call" "$out"; }

run
if [ "$gpu" = 0 ]; then
  why=no-gpu nwarn=1
else
  why=host-memory nwarn=0
fi
want="total routed=0 mpi=$calls why=$why:$calls"
[ "$(ranks "$want")" = $np ] || fail "default setting: '$want' said by $(ranks "$want") of $np ranks"
[ "$(warns)" = $nwarn ] || fail "default setting: $(warns) WARN lines about the routing, $nwarn expected"
if [ $nwarn = 1 ] && ! grep -q "\[rank 0\] CHORUS WARN .*routes no MPI call.*CHORUS_INTERPOSE=all" "$out"; then
  fail "default setting: the WARN is not rank 0's, or does not name CHORUS_INTERPOSE=all"
fi

run all
refused=$((calls - supported))
want="total routed=$supported mpi=$refused why=arguments:$refused"
[ "$(ranks "$want")" = $np ] || fail "CHORUS_INTERPOSE=all: '$want' said by $(ranks "$want") of $np ranks"
want="MPI_Allreduce routed=2 mpi=1 why=arguments:1"
[ "$(ranks "$want")" = $np ] || fail "CHORUS_INTERPOSE=all: '$want' said by $(ranks "$want") of $np ranks"
[ "$(warns)" = 0 ] || fail "CHORUS_INTERPOSE=all: $(warns) WARN lines about the routing, none expected"
[ $status = 0 ] && echo "PASS: routing said once and counted with its reasons, $calls calls on $np ranks"
exit $status
