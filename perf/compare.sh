#!/bin/sh
# compare.sh - Chorus against MPI, repeated runs, median tables.
#
#   perf/compare.sh [BUILD_DIR] [OUT_DIR]
#
# Runs allreduce_perf, allgather_perf, broadcast_perf and reduce_scatter_perf
# (float sum, host memory, -b 8 -e 64M -f 4 --mpi, then 64M alone, which the
# factor-4 sweep skips) under mpirun with 2 and 4
# ranks (oversubscribed where there are fewer cores), REPEATS times each
# (default 5), writes every run's JSON to OUT_DIR, then prints per tool and
# rank count the median table of perf/median.py, checked against the perf
# targets: median ratio MPI/Chorus >= 1.0 at every size, >= 1.5 from 1 MiB.
# Exit status 1 when a target is missed.
#
# Environment: REPEATS, NPS ("2 4"), TOOLS, MPIRUN (mpirun), MPIRUN_FLAGS,
# PERF_FLAGS (extra tool flags, e.g. "-n 50"), WRAP (a command put before
# the tool, e.g. tests/mpi/hostid-wrap.sh to play several nodes), MIN_RATIO
# and MIN_RATIO_FROM (the targets, default 1.0 and 1M:1.5).
#
# Several nodes played on this machine, Open MPI on the same UCX transport:
#   MPIRUN_FLAGS="--oversubscribe --bind-to core:overload-allowed --mca op ^avx --mca pml ucx
#     --mca pml_ucx_tls any --mca pml_ucx_devices any -x UCX_TLS=tcp,self -x CHORUS_TEST_LAYOUT"
#   CHORUS_TEST_LAYOUT=each WRAP=tests/mpi/hostid-wrap.sh MIN_RATIO=0.95 MIN_RATIO_FROM=1M:1.3 perf/compare.sh
set -u
build=${1:-_build}
out=${2:-perf-results}
here=$(cd "$(dirname "$0")" && pwd)
repeats=${REPEATS:-5}
nps=${NPS:-2 4}
tools=${TOOLS:-allreduce_perf allgather_perf broadcast_perf reduce_scatter_perf}
mpirun=${MPIRUN:-mpirun}
wrap=${WRAP:-}
flags=${MPIRUN_FLAGS:-}
if [ -z "$flags" ] && "$mpirun" --version 2>&1 </dev/null | grep -q "Open MPI"; then
  # Ranks bound to cores (two per core at 4 ranks): unbound, two ranks of a
  # 2-rank run can share a core for thousands of calls before the scheduler
  # separates them, which made the first sizes' figures a matter of luck.
  flags="--oversubscribe --bind-to core:overload-allowed --mca op ^avx"
  [ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mkdir -p "$out"
status=0
for tool in $tools; do
  for np in $nps; do
    i=1
    while [ "$i" -le "$repeats" ]; do
      json="$out/$tool-np$np-run$i.json"
      # -f 4 from 8 B stops at 32 MiB: time 64 MiB, the top of the
      # targets' range, in a second run (median.py merges by size).
      for range in "-b 8 -e 64M -f 4" "-b 64M -e 64M"; do
        case $range in *"-b 64M"*) json="$out/$tool-np$np-run$i-64M.json" ;; esac
        # shellcheck disable=SC2086  # flag lists split on purpose
        if ! "$mpirun" $flags -np "$np" $wrap "$build/perf/$tool" $range --mpi ${PERF_FLAGS:-} -J "$json" \
            </dev/null >"${json%.json}.txt" 2>&1; then
          echo "compare.sh: $tool -np $np run $i failed; see ${json%.json}.txt" >&2
          status=1
        fi
      done
      i=$((i + 1))
    done
    python3 "$here/median.py" "$out/$tool-np$np-run"*.json --min-ratio "${MIN_RATIO:-1.0}" \
      --min-ratio-from "${MIN_RATIO_FROM:-1M:1.5}" || status=1
    echo
  done
done
exit $status
