#!/usr/bin/env bash
# test.sh - build Chorus (scripts/setup.sh) and run make check in _build.
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
if [ -d _build ]; then
  find _build -name '*.trs' -type f -delete
fi

# Build the library, then the test programs (in parallel), then run the
# tests one at a time.  A failing step still ends with the summary line.
set +e
bash scripts/setup.sh &&
  make -C _build -j"${CHORUS_JOBS:-2}" check TESTS= &&
  make -C _build -k -j1 check </dev/null
check_status=$?
set -e

cd _build 2>/dev/null || { echo "test.sh: no _build"; echo "0 passed, 0 failed, 0 skipped"; exit 1; }

# Logs of the failing tests, before the summary line.
while IFS= read -r -d '' trs; do
  if grep -Eq '^:test-result: (FAIL|ERROR|XPASS)' "$trs"; then
    log=${trs%.trs}.log
    echo "==================== ${log#./} (last 40 lines)"
    tail -n 40 "$log" 2>/dev/null || echo "(no log)"
  fi
done < <(find . -name '*.trs' -type f -print0 | sort -z)
if [ "$check_status" -ne 0 ]; then
  echo "==================== build or make check exited with status $check_status"
fi

cd "$root"
set +e
bash scripts/count-results.sh _build
count_status=$?
set -e
if [ "$count_status" -ne 0 ] || [ "$check_status" -ne 0 ]; then
  exit 1
fi
