#!/usr/bin/env bash
# test.sh - build Chorus (scripts/setup.sh) and run make check in _build,
# then the GPU tier on the CPU emulation of CUDA in _build_emu, then the
# sanitizer stage in _build_asan, then the second MPI (MPICH) in
# _build_mpich.  _build, _build_emu and _build_asan are also installed into
# a scratch directory and checked (scripts/check-install.sh: one more test
# result per build).
#
# Test programs are built in parallel, then run with -j1: the multi-rank
# tests are mpirun jobs and must not compete for the cores.  The last line
# of output is "N passed, N failed, N skipped" (scripts/count-results.sh);
# the exit status is non-zero if a test failed or no test ran.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_op=^avx  # Open MPI 4.1.4's AVX int8 sums saturate

# In CI the kernels are compiled for Hopper only (sm_90): the default adds
# sm_80 cubins and compute_90 PTX, the same source compiled twice more, a
# third of the nvcc build's time; tests/gpu/ptx-spills.sh reads the sm_90
# report either way.  A site's own build keeps the default.  CI also
# builds no static library: libtool would compile every host source twice
# (PIC, then again for libchorus.a), about 3 of _build's 8 minutes on 2
# cores, and nothing CI runs or installs-and-checks links libchorus.a.
if [ "${CI:-}" = true ]; then
  CHORUS_CONFIGURE_FLAGS="--with-nvcc-gencode=-gencode=arch=compute_90,code=sm_90 --disable-static ${CHORUS_CONFIGURE_FLAGS:-}"
  export CHORUS_CONFIGURE_FLAGS
fi

# Stale results of renamed or removed tests would be counted otherwise.
for dir in _build _build_emu _build_asan _build_mpich; do
  if [ -d "$dir" ]; then
    find "$dir" -name '*.trs' -type f -delete
  fi
done

# Build the library, then the test programs (in parallel), then run the
# tests one at a time.  A failing step still ends with the summary line.
# tests/mpi is most of this stage (20 minutes in the CI of 2026-12-02):
# there the 64 MiB case runs in the auto runs at 1 to 4 ranks and the other
# runs take 8 MiB, and 7 ranks runs the tree and publish algorithms only
# (ring, one-shot and auto at 7 were the cases of 3, 5 and 8 ranks again),
# which took about 5 minutes off (doc/tests.md, "Unit and multi-rank tests").
# The block collectives' counts of nranks slots a block (nranks^2 slots a
# rank) went too: 15.5 minutes to 10.9 in the CI of 2026-12-06.
set +e
bash scripts/setup.sh &&
  make -C _build -j"${CHORUS_JOBS:-2}" check TESTS= &&
  make -C _build -k -j1 check </dev/null
check_status=$?
if [ -f _build/src/libchorus.la ]; then bash scripts/check-install.sh _build; fi

# The GPU tier once more, on the CPU emulation of CUDA (src/cuda/emu): the
# kernels' own source runs, at np 1, 2 and 4, two ranks per emulated device,
# Simple and LL protocols, and a stalled peer (17 minutes on 2 cores in the
# CI of 2026-12-06, build included: 4 to build, the rest to run; a block's
# threads then became fibers on one host thread, src/cuda/emu/README.md,
# and the tier's tests took 5 minutes on this machine, 6.5 with the ops the
# minutes had cut put back).
# There every rank sees a (emulated) GPU, so the interposer agrees on its
# routing per call: three of its tests run that path too (a few seconds).
# CHORUS_TEST_EMULATION=0 leaves it out.  This build and the sanitizer
# one are configured --disable-static: libtool would compile every source
# twice (PIC for the shared library, again for the static one), and
# nothing here links the static library (_build builds and packages both).
emu_status=0
emu_interpose_tests="interpose-np2-all.test interpose-np3-all-mt.test interpose-np3-device.test"
if [ "${CHORUS_TEST_EMULATION:-1}" != 0 ]; then
  mkdir -p _build_emu
  ( cd _build_emu && { [ -f Makefile ] || ../configure --enable-cuda-emulation --disable-static ${CHORUS_CONFIGURE_FLAGS:-}; } ) &&
    make -C _build_emu/src -j"${CHORUS_JOBS:-2}" &&
    make -C _build_emu/tests/gpu -j"${CHORUS_JOBS:-2}" check TESTS= &&
    CHORUS_TEST_PROTOS=${CHORUS_TEST_PROTOS:-simple ll} make -C _build_emu/tests/gpu -k -j1 check </dev/null &&
    make -C _build_emu/src/interpose -j"${CHORUS_JOBS:-2}" &&
    make -C _build_emu/tests/interpose -k -j1 check TESTS="$emu_interpose_tests" </dev/null
  emu_status=$?
  if [ -f _build_emu/src/libchorus.la ]; then bash scripts/check-install.sh _build_emu; fi
fi

# The sanitizers: AddressSanitizer and UndefinedBehaviorSanitizer on the
# unit tests and on multi-rank tests chosen to cross every boundary (shared
# memory, UCX between played nodes, ring, tree, direct, single copy, a killed rank,
# corrupted messages), in _build_asan (host only, -O1).
# tests/sanitizers/README.md explains the run environment and suppressions.
# The unit tests' own sources are compiled at -O0 (still instrumented: the
# sanitizer flags are in CHORUS_CXXFLAGS): their Boost.Test cases over
# every functor took 3 minutes to compile at -O1 (test_lowp.cc: 45 s of CPU
# at -O1 -g, 10 s at -O0 -g) and run in a second; the library stays at -O1,
# and the multi-rank tests below run its own instantiations.
# CHORUS_TEST_SANITIZERS=0 leaves it out.
asan_status=0
# netfaults-np4-2x2: forged and malformed UCX messages (a 4096-line header,
# a number outside the window) must be refused before a byte is copied,
# which the sanitizers see.
# proxy-np3-each(-apart): the device proxy's thread and its links (played
# kernels; the slots apart as under GPUDirect RDMA).
asan_tests="coll-np3-ring.test coll-np3-tree.test coll-np4-direct.test coll-np4-2x2.test kill-np3-one.test
  kill-np2-each.test checksum-np2-one.test checksum-np4-2x2.test coll-np3-single_copy.test netfaults-np4-2x2.test
  proxy-np3-each.test proxy-np3-each-apart.test"
asan_programs="test_collectives test_kill test_checksum test_netfaults net_forger test_proxy"
if [ "${CHORUS_TEST_SANITIZERS:-1}" != 0 ]; then
  mkdir -p _build_asan
  (
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_odr_violation=0:fast_unwind_on_malloc=0
    export OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
    export LSAN_OPTIONS=suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    export UCX_MEM_EVENTS=no CHORUS_TEST_HUGE_MB=0
    cd _build_asan &&
      { [ -f Makefile ] || ../configure --without-cuda --disable-fortran --enable-sanitizers --disable-static \
          CXXFLAGS="-O1 -g" CFLAGS="-O1 -g" ${CHORUS_CONFIGURE_FLAGS:-}; } &&
      make -C src -j"${CHORUS_JOBS:-2}" && make -C tools -j"${CHORUS_JOBS:-2}" &&
      make -C tests/unit -j"${CHORUS_JOBS:-2}" check CXXFLAGS="-O0 -g" &&
      make -C tests/mpi -j"${CHORUS_JOBS:-2}" $asan_programs &&
      make -C tests/mpi -k -j1 check check_PROGRAMS="$asan_programs" TESTS="$(echo $asan_tests)" </dev/null
  )
  asan_status=$?
  if [ -f _build_asan/src/libchorus.la ]; then bash scripts/check-install.sh _build_asan; fi
fi

# The second MPI: Debian's MPICH 4.0 (mpicc.mpich, Hydra's mpiexec.mpich),
# host only, in _build_mpich (scripts/test-mpich.sh): multi-rank tests
# chosen to cross every boundary once (shared memory, UCX
# between 2x2 played nodes, ring, tree, direct, nonblocking, bad arguments),
# the Fortran module, and libchorus_mpi.so under MPICH's symbol names from
# C and from Fortran (`use mpi`, `use mpi_f08`).  The killed-rank tests skip
# under Hydra.  CHORUS_TEST_MPICH=0 leaves it out.
mpich_status=0
if [ "${CHORUS_TEST_MPICH:-1}" != 0 ]; then
  bash scripts/test-mpich.sh
  mpich_status=$?
fi
set -e

[ -d _build ] || { echo "test.sh: no _build"; echo "0 passed, 0 failed, 0 skipped"; exit 1; }
builds=(_build)
[ -d _build_emu ] && [ "${CHORUS_TEST_EMULATION:-1}" != 0 ] && builds+=(_build_emu)
[ -d _build_asan ] && [ "${CHORUS_TEST_SANITIZERS:-1}" != 0 ] && builds+=(_build_asan)
[ -d _build_mpich ] && [ "${CHORUS_TEST_MPICH:-1}" != 0 ] && builds+=(_build_mpich)

# Logs of the failing tests, before the summary line.
while IFS= read -r -d '' trs; do
  if grep -Eq '^:test-result: (FAIL|ERROR|XPASS)' "$trs"; then
    log=${trs%.trs}.log
    echo "==================== ${log#./} (last 40 lines)"
    tail -n 40 "$log" 2>/dev/null || echo "(no log)"
  fi
done < <(find "${builds[@]}" -name '*.trs' -type f -print0 | sort -z)
if [ "$check_status" -ne 0 ]; then
  echo "==================== build or make check exited with status $check_status"
fi
if [ "$emu_status" -ne 0 ]; then
  echo "==================== the emulated GPU tier (_build_emu) exited with status $emu_status"
fi
if [ "$asan_status" -ne 0 ]; then
  echo "==================== the sanitizer stage (_build_asan) exited with status $asan_status"
fi
if [ "$mpich_status" -ne 0 ]; then
  echo "==================== the MPICH stage (_build_mpich) exited with status $mpich_status"
fi

set +e
bash scripts/count-results.sh "${builds[@]}"
count_status=$?
set -e
if [ "$count_status" -ne 0 ] || [ "$check_status" -ne 0 ] || [ "$emu_status" -ne 0 ] || [ "$asan_status" -ne 0 ] ||
  [ "$mpich_status" -ne 0 ]; then
  exit 1
fi
