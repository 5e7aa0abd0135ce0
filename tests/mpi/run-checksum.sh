#!/bin/sh
# run-checksum.sh NP: test_checksum under mpirun with CHORUS_CHECKSUM=1
# (CHORUS_TEST_LAYOUT as for run-mpi.sh).  Passes when every rank printed
# PASS (collectives agree with MPI; the corrupted messages fail on rank 1
# naming the link) and rank 1's flight recorder holds the failure.
np=$1
mpirun=${MPIEXEC:-mpirun}
command -v "$mpirun" >/dev/null 2>&1 || { echo "skipped: $mpirun not found"; exit 77; }
[ -x ./test_checksum ] || { echo "skipped: ./test_checksum not built"; exit 77; }
flags=
if "$mpirun" --version 2>&1 </dev/null | grep -q "Open MPI\|OpenRTE"; then
  flags="--oversubscribe --bind-to none --mca op ^avx"
  if [ "$(id -u)" = 0 ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
  fi
fi
layout=${CHORUS_TEST_LAYOUT:-one}
wrap=
if [ -n "${CHORUS_TEST_LAYOUT:-}" ]; then
  info=../../tools/chorus_info
  if [ -x "$info" ] && ! "$info" </dev/null 2>/dev/null | grep -q "UCX *: yes"; then
    echo "skipped: layout $CHORUS_TEST_LAYOUT needs the UCX transport"; exit 77
  fi
  wrap="$(cd "$(dirname "$0")" && pwd)/hostid-wrap.sh"
  UCX_TLS=${UCX_TLS:-tcp}
  export CHORUS_TEST_LAYOUT UCX_TLS
fi
rm -f checksum-np$np-$layout-trace-*.txt
# CHORUS_TIMEOUT bounds rank 0's wait in the corrupted allreduce.
CHORUS_CHECKSUM=1 CHORUS_TIMEOUT=3 CHORUS_TRACE_FILE=$PWD/checksum-np$np-$layout-trace-%r.txt
export CHORUS_CHECKSUM CHORUS_TIMEOUT CHORUS_TRACE_FILE
log=checksum-np$np-$layout.out
timeout --kill-after=10 120 "$mpirun" -np "$np" $flags $wrap ./test_checksum </dev/null >"$log" 2>&1
rc=$?
grep -E "^(PASS|FAIL|rank)" "$log"
pass=$(grep -c "^PASS" "$log")
if [ "$rc" -ne 0 ] || [ "$pass" -ne "$np" ]; then
  echo "FAIL: mpirun exited $rc, $pass of $np ranks passed"; tail -20 "$log"; exit 1
fi
if ! grep -q "link rank 0 -> rank 1.*arrived corrupted" checksum-np$np-$layout-trace-1.txt 2>/dev/null; then
  echo "FAIL: rank 1's flight recorder does not hold the corrupted message"; exit 1
fi
echo "checksums: collectives agree with MPI; corrupted messages named on their link"
exit 0
