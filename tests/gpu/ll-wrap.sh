#!/bin/sh
# LL flags narrowed to 4 bits (CHORUS_LL_FLAG_BITS): they wrap every 16
# messages of a FIFO, so test_gpu_wrap's back-to-back collectives cross
# dozens of wraps, and a stale line that matches (or a zeroed one read as
# flag 0) turns into a wrong element.  The same program checks the order of
# launches across streams, graphs and host threads; at 3 ranks it runs on
# Simple too, whose FIFOs those orderings protect alike.
dir=$(dirname "$0")
CHORUS_LL_FLAG_BITS=4 CHORUS_TEST_PROTOS=ll "$dir/run-gpu.sh" 2 test_gpu_wrap || exit $?
CHORUS_LL_FLAG_BITS=4 CHORUS_TEST_PROTOS="ll simple" exec "$dir/run-gpu.sh" 3 test_gpu_wrap
