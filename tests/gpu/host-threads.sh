#!/bin/sh
# The emulation's other way of running a block (src/cuda/emu/block.cc):
# CHORUS_EMU_THREADS=host makes every device thread a host thread of its
# own, preempted anywhere, so that a block's threads interleave between
# barriers as a GPU's warps may (the default runs them as fibers, switched
# only at barriers and clock reads).  2 ranks, sums, both protocols,
# against the reference; and a value it does not know is refused by name.
out=$(CHORUS_EMU_THREADS=preempted ./emu_misaligned 2>&1)
case $out in
  *'CHORUS_EMU_THREADS="preempted": expected "fibers" or "host"'*) ;;
  *) printf '%s\n' "$out"; echo "FAIL: CHORUS_EMU_THREADS=preempted was not refused by name"; exit 1 ;;
esac
CHORUS_EMU_THREADS=host CHORUS_TEST_OPS=sum CHORUS_TEST_PROTOS="simple ll" "$(dirname "$0")/run-gpu.sh" 2 test_gpu || exit $?
echo "PASS: the kernels with a host thread per device thread"
