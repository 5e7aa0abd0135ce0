#!/usr/bin/env bash
# test-mpich.sh - the second MPI: build Chorus against Debian's MPICH
# (mpicc.mpich, mpicxx.mpich, mpifort.mpich; mpiexec.mpich, whose launcher
# is Hydra) in _build_mpich, host only, and run a subset of the tests chosen
# to cross every boundary once: shared memory and UCX between played nodes
# (2x2: see node_tests below), the ring, tree and direct algorithms, nonblocking collectives with
# the progress thread, bad arguments, the Fortran module, and libchorus_mpi.so under MPICH's symbol names from C (preloaded
# and linked) and from Fortran (mpif.h-style `use mpi` and `use mpi_f08`).
# Called by scripts/test.sh; its .trs results are counted with the others'.
# Not here: the killed-rank tests (run-kill.sh skips under Hydra, whose job
# ends before every survivor has reported), and the unit tests (one process,
# no MPI difference to cross; their build alone takes minutes on 2 cores).
# Measured once, on the shared 2-core machine under a load of 10 to 15
# (others' builds): 22 minutes with a partial rebuild and the unit tests;
# the tests alone take about 6 of them there.
#
# Environment: CHORUS_JOBS (make parallelism, default 2),
# CHORUS_CONFIGURE_FLAGS (extra configure arguments, first configure only),
# CHORUS_MPICH_TESTS (the tests/mpi tests to run instead of the default),
# CHORUS_MPICH_NODE_TESTS (the same for the played-node runs),
# CHORUS_MPICH_UCX_TLS (their UCX_TLS, default tcp,sm,self).
# Exit status: non-zero when the build failed or a test failed.
set -euo pipefail

cd "$(dirname "$0")/.."
jobs=${CHORUS_JOBS:-2}

command -v mpicc.mpich >/dev/null 2>&1 && command -v mpiexec.mpich >/dev/null 2>&1 || {
  echo "test-mpich.sh: MPICH not installed (scripts/setup.sh installs mpich libmpich-dev)" >&2
  exit 1
}

mpi_tests=${CHORUS_MPICH_TESTS:-"coll-np3-ring.test coll-np3-tree.test coll-np4-direct.test
  nonblocking-np3.test errors-np2.test"}
mpi_programs="test_collectives test_nonblocking test_errors test_teardown"
interpose_tests="interpose-np2-all.test interpose-linked-np3-all.test
  interpose-fortran-np3-all.test interpose-f08-np2-all.test interpose-f08-np3-all-mt.test"
fortran_tests="np3.sh"
# The played-node (2x2) runs, with UCX_TLS=tcp,sm,self where the layout
# runs default to tcp.  MPICH 4.0.2 here is ch4:ucx (UCX 1.13.1): UCX_TLS=tcp
# also puts MPICH's own endpoints on tcp, and then MPICH's MPI_Finalize
# hangs now and then closing them (ucp_worker_progress), Chorus or not: a
# plain 4-rank MPI_Allreduce program hung in 4 of 28 runs with
# UCX_TLS=tcp, in 0 of 32 with tcp,sm,self (openucx/ucx#8738,
# "TCP transport hangs during cleanup").  Chorus connects played nodes by
# network addresses only (UCP_WORKER_ADDRESS_FLAG_NET_ONLY), so its links
# stay on tcp while MPICH's go through shared memory.  CHORUS_TEST_TIMEOUT
# bounds a hang all the same: one failed test, not a sunk stage.
# release-late: a rank late to a communicator's release, which Open MPI
# aborted on before its barrier moved to a private communicator; MPICH's
# handling of an abandoned barrier is checked the same way.
node_tests=${CHORUS_MPICH_NODE_TESTS:-"coll-np4-2x2.test release-late-np4-2x2.test"}
node_interpose_tests="interpose-np4-2x2-all.test"
node_env="UCX_TLS=${CHORUS_MPICH_UCX_TLS:-tcp,sm,self} CHORUS_TEST_TIMEOUT=${CHORUS_TEST_TIMEOUT:-240}"

mkdir -p _build_mpich
cd _build_mpich
# MPIEXEC is found next to mpicc.mpich (config/chorus_mpi.m4); named here
# all the same, so that no mpiexec of Open MPI earlier in PATH is taken.
# -O1 without -g: this build checks MPICH's ABI and behaviour, not code
# generation (_build does that at -O2); a host source compiles in about two
# thirds of the CPU time of -O2 -g, and the subset's runs are short.
[ -f Makefile ] || ../configure --without-cuda --disable-static \
  MPICC=mpicc.mpich MPICXX=mpicxx.mpich MPIFC=mpifort.mpich MPIEXEC=mpiexec.mpich \
  CXXFLAGS=-O1 CFLAGS=-O1 ${CHORUS_CONFIGURE_FLAGS:-}
grep -q '^MPIEXEC = .*mpiexec.mpich' tests/mpi/Makefile || {
  echo "test-mpich.sh: _build_mpich is not configured with MPICH's mpiexec" >&2
  exit 1
}
make -C src -j"$jobs"
make -C src/fortran -j"$jobs"
make -C src/interpose -j"$jobs"
make -C tools -j"$jobs"
make -C tests/mpi -j"$jobs" $mpi_programs
make -C tests/interpose -j"$jobs" check TESTS=
make -C tests/fortran -j"$jobs" check TESTS=

# The tests one at a time (they are mpiexec jobs); every directory runs
# even when one before it failed.
status=0
make -C tests/mpi -k -j1 check check_PROGRAMS="$mpi_programs" TESTS="$(echo $mpi_tests)" </dev/null || status=1
env $node_env make -C tests/mpi -k -j1 check check_PROGRAMS="$mpi_programs" TESTS="$(echo $node_tests)" </dev/null ||
  status=1
env $node_env make -C tests/interpose -k -j1 check TESTS="$node_interpose_tests" </dev/null || status=1
make -C tests/interpose -k -j1 check TESTS="$(echo $interpose_tests)" </dev/null || status=1
make -C tests/fortran -k -j1 check TESTS="$fortran_tests" </dev/null || status=1
exit $status
