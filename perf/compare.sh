#!/bin/sh
# compare.sh - Chorus against MPI, repeated runs, median tables.
#
#   perf/compare.sh [BUILD_DIR] [OUT_DIR]     (source tree: BUILD_DIR/perf/chorus_*_perf)
#   chorus_perf_compare [OUT_DIR]             (installed: the tools beside it)
#
# Runs each tool (default: all seven collectives, barrier included, float
# sum, host memory, --mpi) under mpirun with 2, 4 and 8 ranks
# (oversubscribed where there are fewer cores), in both timings (TIMINGS:
# "back-to-back", the nccl-tests way, and "sync", a barrier before each
# timed call, the OSU way), REPEATS times each (default 5), over the sizes
# 0 B, 8 B to 8 MiB by factors of 4, and 16 MiB (RANGES, ';'-separated),
# writes every run's JSON to OUT_DIR, then prints per tool, rank count and
# timing the median table of perf/median.py (with each row's spread over
# the runs), checked against the targets: median ratio MPI/Chorus >=
# MIN_RATIO at every size (default 0.95), and MIN_RATIO_FROM (default
# 1M:1.5) for the tools in RATIO_FROM_TOOLS (default allreduce_perf
# reduce_scatter_perf).  Exit status 1 when a target is missed.  Tools are
# named with or without their chorus_ prefix.
#
# Environment: REPEATS, NPS ("2 4 8"), TOOLS, TIMINGS, RANGES, MPIRUN
# (mpirun), MPIRUN_FLAGS, PERF_FLAGS (extra tool flags, e.g. "-n 50"), WRAP
# (a command put before the tool, e.g. tests/mpi/hostid-wrap.sh to play
# several nodes), MIN_RATIO, MIN_RATIO_FROM, RATIO_FROM_TOOLS.
#
# Several nodes played on this machine, Open MPI on the same UCX transport:
#   MPIRUN_FLAGS="--oversubscribe --bind-to core:overload-allowed --mca op ^avx --mca pml ucx
#     --mca pml_ucx_tls any --mca pml_ucx_devices any -x UCX_TLS=tcp,self -x CHORUS_TEST_LAYOUT"
#   CHORUS_TEST_LAYOUT=each WRAP=tests/mpi/hostid-wrap.sh MIN_RATIO=0.95 MIN_RATIO_FROM=1M:1.3 \
#     RANGES="-b 8 -e 64M -f 8" NPS="2 4" TIMINGS=back-to-back perf/compare.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
# make install sets this to where it puts mpirun-flags.sh.
installed_flags=
if [ -n "$installed_flags" ]; then
  bindir=$here
  median=$here/chorus_perf_median
  flags_sh=$installed_flags
  out=${1:-perf-results}
else
  bindir=${1:-_build}/perf
  median=$here/median.py
  flags_sh=$here/../scripts/mpirun-flags.sh
  out=${2:-perf-results}
fi
repeats=${REPEATS:-5}
nps=${NPS:-2 4 8}
tools=${TOOLS:-allreduce_perf reduce_perf broadcast_perf allgather_perf reduce_scatter_perf alltoall_perf barrier_perf}
timings=${TIMINGS:-back-to-back sync}
ranges=${RANGES:--b 0 -e 0;-b 8 -e 16M -f 4;-b 16M -e 16M}
ratio_from_tools=${RATIO_FROM_TOOLS:-allreduce_perf reduce_scatter_perf}
wrap=${WRAP:-}
# The launcher and its flags: ../scripts/mpirun-flags.sh, here with ranks
# bound to cores (two per core at 4 ranks): unbound, two ranks of a 2-rank
# run can share a core for thousands of calls before the scheduler
# separates them, which made the first sizes' figures a matter of luck.
# MPIRUN_FLAGS, when set, replaces the flags.
mpirun_bind=core:overload-allowed
. "$flags_sh"
flags=${MPIRUN_FLAGS:-$mpirun_flags}
mkdir -p "$out"
status=0
for tool in $tools; do
  tool=chorus_${tool#chorus_}
  tool_ranges=$ranges
  [ "$tool" = chorus_barrier_perf ] && tool_ranges="-b 0 -e 0"  # no data: one row
  ratio_from=
  case " $ratio_from_tools " in *" $tool "* | *" ${tool#chorus_} "*) ratio_from="--min-ratio-from ${MIN_RATIO_FROM:-1M:1.5}" ;; esac
  for np in $nps; do
    for timing in $timings; do
      sync=
      [ "$timing" = sync ] && sync=--sync
      i=1
      while [ "$i" -le "$repeats" ]; do
        part=1
        # Each range is its own mpirun; median.py merges them by size.
        old_ifs=$IFS
        IFS=';'
        for range in $tool_ranges; do
          IFS=$old_ifs
          json="$out/$tool-np$np-$timing-run$i-part$part.json"
          # shellcheck disable=SC2086  # flag lists split on purpose
          if ! "$mpirun" $flags -np "$np" $wrap "$bindir/$tool" $range --mpi $sync ${PERF_FLAGS:-} -J "$json" \
              </dev/null >"${json%.json}.txt" 2>&1; then
            echo "compare.sh: $tool -np $np $timing run $i ($range) failed; see ${json%.json}.txt" >&2
            status=1
          fi
          part=$((part + 1))
        done
        IFS=$old_ifs
        i=$((i + 1))
      done
      # shellcheck disable=SC2086
      python3 "$median" "$out/$tool-np$np-$timing-run"*.json --min-ratio "${MIN_RATIO:-0.95}" $ratio_from ||
        status=1
      echo
    done
  done
done
exit $status
