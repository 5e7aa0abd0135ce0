# Sourced by the tests/mpi launchers (run-mpi.sh, run-check.sh,
# run-checksum.sh, run-trace.sh, run-kill.sh, run-teardown.sh): the steps
# every one of them takes before and after its mpirun, kept in one place so
# that they choose flags, skip and count passes the same way.

# launch_prepare PROGRAM: sets $mpirun and $flags (scripts/mpirun-flags.sh,
# the one place that picks them; also $mpirun_impl and $mpirun_keep_going),
# or skips (exit 77) when there is no launcher or PROGRAM is not built.
launch_prepare() {
  . "$(dirname "$0")/../../scripts/mpirun-flags.sh"
  [ "$mpirun_impl" != none ] || { echo "skipped: $mpirun not found"; exit 77; }
  [ -x "./$1" ] || { echo "skipped: ./$1 not built"; exit 77; }
  flags=$mpirun_flags
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
