# mpirun-flags.sh - sourced, never run, by every script that starts an MPI
# job (the launchers of tests/mpi, tests/interpose, tests/fortran, tests/gpu
# and tests/packaging, perf/compare.sh, scripts/demo.sh): the one place that
# picks the launcher and its flags for small jobs on one machine, so that
# all of them run Open MPI and MPICH alike.
#
# Reads: MPIEXEC (configure's, passed by make check), else MPIRUN, else
# mpirun; MPIEXEC_FLAGS (extra flags, put after the chosen ones);
# mpirun_bind (the caller's binding, default none; perf binds to cores).
# Sets:
#   mpirun             the launcher
#   mpirun_impl        openmpi, mpich (Hydra), other, or none (not found:
#                      the caller skips)
#   mpirun_flags       more ranks than cores, the binding, MPIEXEC_FLAGS
#   mpirun_keep_going  the flags that let the other ranks run on when one is
#                      killed (empty where the launcher has none: the kill
#                      tests skip)
# Under Open MPI, exports OMPI_MCA_op=^avx unless set, and as root the
# consent it asks for.
#
# Open MPI refuses more ranks than cores without --oversubscribe, binds to
# cores by default, and 4.1's AVX op component saturates int8 sums instead
# of wrapping (MPI, the tests' reference, would be wrong).  MPICH's Hydra
# runs any number of ranks, binds nothing unless told, and takes its flags
# with one dash.
mpirun=${MPIEXEC:-${MPIRUN:-mpirun}}
mpirun_bind=${mpirun_bind:-none}
mpirun_flags=
mpirun_keep_going=
if ! command -v "$mpirun" >/dev/null 2>&1; then
  mpirun_impl=none
else
  case $("$mpirun" --version 2>&1 </dev/null) in
    *"Open MPI"* | *OpenRTE*) mpirun_impl=openmpi ;;
    *HYDRA* | *Hydra*) mpirun_impl=mpich ;;
    *) mpirun_impl=other ;;
  esac
fi
case $mpirun_impl in
  openmpi)
    mpirun_flags="--oversubscribe --bind-to $mpirun_bind"
    mpirun_keep_going="--mca orte_abort_on_non_zero_status 0"
    # In the environment: an MCA parameter given twice on the command line
    # (here and in MPIEXEC_FLAGS) is an error.
    OMPI_MCA_op=${OMPI_MCA_op:-^avx}
    export OMPI_MCA_op
    if [ "$(id -u)" = 0 ]; then
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
    fi ;;
  mpich)
    mpirun_flags="-bind-to ${mpirun_bind%%:*}"
    mpirun_keep_going="-disable-auto-cleanup" ;;
esac
mpirun_flags="$mpirun_flags${MPIEXEC_FLAGS:+ $MPIEXEC_FLAGS}"
mpirun_flags=${mpirun_flags# }
