#!/usr/bin/env bash
# test.sh - build Chorus (scripts/setup.sh) and run make check in _build,
# then the GPU tier on the CPU emulation of CUDA in _build_emu.
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

# Stale results of renamed or removed tests would be counted otherwise.
for dir in _build _build_emu; do
  if [ -d "$dir" ]; then
    find "$dir" -name '*.trs' -type f -delete
  fi
done

# Build the library, then the test programs (in parallel), then run the
# tests one at a time.  A failing step still ends with the summary line.
set +e
bash scripts/setup.sh &&
  make -C _build -j"${CHORUS_JOBS:-2}" check TESTS= &&
  make -C _build -k -j1 check </dev/null
check_status=$?

# The GPU tier once more, on the CPU emulation of CUDA (src/cuda/emu): the
# kernels' own source runs, at np 1, 2 and 4, two ranks per emulated device,
# Simple and LL protocols, and a stalled peer (about 8 minutes on 2 cores,
# build included: 4 to build, 4 to run).
# CHORUS_TEST_EMULATION=0 leaves it out.
emu_status=0
if [ "${CHORUS_TEST_EMULATION:-1}" != 0 ]; then
  mkdir -p _build_emu
  ( cd _build_emu && { [ -f Makefile ] || ../configure --enable-cuda-emulation ${CHORUS_CONFIGURE_FLAGS:-}; } ) &&
    make -C _build_emu/src -j"${CHORUS_JOBS:-2}" &&
    make -C _build_emu/tests/gpu -j"${CHORUS_JOBS:-2}" check TESTS= &&
    CHORUS_TEST_PROTOS=${CHORUS_TEST_PROTOS:-simple ll} make -C _build_emu/tests/gpu -k -j1 check </dev/null
  emu_status=$?
fi
set -e

[ -d _build ] || { echo "test.sh: no _build"; echo "0 passed, 0 failed, 0 skipped"; exit 1; }
builds=(_build)
[ -d _build_emu ] && [ "${CHORUS_TEST_EMULATION:-1}" != 0 ] && builds+=(_build_emu)

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

set +e
bash scripts/count-results.sh "${builds[@]}"
count_status=$?
set -e
if [ "$count_status" -ne 0 ] || [ "$check_status" -ne 0 ] || [ "$emu_status" -ne 0 ]; then
  exit 1
fi
