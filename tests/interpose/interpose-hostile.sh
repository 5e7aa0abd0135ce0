#!/bin/sh
# interpose-hostile.sh CASE: test_interpose_hostile CASE on 2 ranks with
# libchorus_mpi.so preloaded and CHORUS_INTERPOSE=all (issue 33, item 6).
# CASE full-shm preloads full_shm.so first, so that /dev/shm looks full to
# Chorus: every collective must fall back to MPI (the routing report counts
# them as MPI's), and the set-up's failure must be said once per rank.
# Passes when both ranks printed PASS and the job exited 0 within 120 s.
set -u
case=$1
# The launcher and its flags (MPIEXEC_FLAGS added): scripts/mpirun-flags.sh.
. "$(dirname "$0")/../../scripts/mpirun-flags.sh"
[ "$mpirun_impl" != none ] || { echo "skipped: $mpirun not found"; exit 77; }
top=$(cd ../.. && pwd)
lib=$top/src/interpose/.libs/libchorus_mpi.so
shim=$PWD/.libs/full_shm.so
[ -f "$lib" ] && [ -x ./test_interpose_hostile ] || { echo "FAIL: $lib or ./test_interpose_hostile not built"; exit 1; }
preload=$lib
if [ "$case" = full-shm ]; then
  [ -f "$shim" ] || { echo "FAIL: $shim not built"; exit 1; }
  preload=$shim:$lib
fi
flags=$mpirun_flags
export CHORUS_INTERPOSE=all CHORUS_DEBUG=INFO CHORUS_DEBUG_SUBSYS=COLL CHORUS_TIMEOUT=20
unset CHORUS_DEBUG_FILE
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "$mpirun -np 2 $flags env LD_PRELOAD=$preload ./test_interpose_hostile $case"
# shellcheck disable=SC2086
timeout --kill-after=10 120 "$mpirun" -np 2 $flags \
  env LD_PRELOAD="$preload" LD_LIBRARY_PATH="$top/src/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  ./test_interpose_hostile "$case" </dev/null >"$out" 2>&1
rc=$?
grep -E "^(PASS|FAIL)|WARN" "$out"
pass=$(grep -c "^PASS" "$out")
if [ $rc != 0 ] || [ "$pass" != 2 ]; then
  echo "FAIL: exit status $rc, $pass of 2 ranks passed"; tail -20 "$out"; exit 1
fi
if [ "$case" = full-shm ]; then
  said=$(grep -c "could not set up on this communicator" "$out")
  routed=$(grep -c "interpose (CHORUS_INTERPOSE=all): MPI_Allreduce chorus=0 mpi=3$" "$out")
  if [ "$said" != 2 ] || [ "$routed" != 2 ]; then
    echo "FAIL: the fall-back was said by $said of 2 ranks (once each), counted by $routed of 2"; exit 1
  fi
fi
echo "PASS: $case"
exit 0
