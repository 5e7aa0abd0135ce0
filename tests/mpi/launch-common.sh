# Sourced by the tests/mpi launchers (run-check.sh, run-checksum.sh,
# run-trace.sh, run-kill.sh): the steps every one of them takes before and
# after its mpirun, kept in one place so that they choose flags, skip and
# count passes the same way.

# launch_prepare PROGRAM [EXTRA_OPENMPI_FLAGS]: sets $mpirun and $flags, or
# skips (exit 77) when there is no mpirun or PROGRAM is not built.  Open
# MPI's mpirun gets --oversubscribe --bind-to none (tests run more ranks than
# this machine has cores) plus the extra flags, and may run as root.
launch_prepare() {
  mpirun=${MPIEXEC:-mpirun}
  command -v "$mpirun" >/dev/null 2>&1 || { echo "skipped: $mpirun not found"; exit 77; }
  [ -x "./$1" ] || { echo "skipped: ./$1 not built"; exit 77; }
  flags=
  if "$mpirun" --version 2>&1 </dev/null | grep -q "Open MPI\|OpenRTE"; then
    flags="--oversubscribe --bind-to none${2:+ $2}"
    if [ "$(id -u)" = 0 ]; then
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
    fi
  fi
}

# launch_layout: with CHORUS_TEST_LAYOUT set (several nodes played on this
# machine, see hostid-wrap.sh), sets $wrap to the wrapper and UCX_TLS to tcp
# unless given, or skips when this build has no UCX transport.  Without a
# layout, $wrap is empty.
launch_layout() {
  wrap=
  [ -n "${CHORUS_TEST_LAYOUT:-}" ] || return 0
  info=../../tools/chorus_info
  if [ -x "$info" ] && ! "$info" </dev/null 2>/dev/null | grep -q "UCX *: yes"; then
    echo "skipped: layout $CHORUS_TEST_LAYOUT needs the UCX transport"; exit 77
  fi
  wrap="$(cd "$(dirname "$0")" && pwd)/hostid-wrap.sh"
  UCX_TLS=${UCX_TLS:-tcp}
  export CHORUS_TEST_LAYOUT UCX_TLS
}

# launch_expect_passes LOG RC WANT: fails (exit 1, showing the log's tail)
# unless mpirun exited RC 0 and LOG holds WANT lines starting with PASS.
launch_expect_passes() {
  pass=$(grep -c "^PASS" "$1")
  if [ "$2" -ne 0 ] || [ "$pass" -ne "$3" ]; then
    echo "FAIL: mpirun exited $2, $pass of $3 ranks passed"; tail -20 "$1"; exit 1
  fi
}
