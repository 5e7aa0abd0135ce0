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
# The right answers alone would not show that this mode ran: fibers give
# them too.  In host mode the emulator counts, in its first grid, the host
# threads block 0's threads ran on and says so once per process; under
# fibers that count would be 1.
out=$(CHORUS_EMU_THREADS=host CHORUS_TEST_OPS=sum CHORUS_TEST_PROTOS="simple ll" "$(dirname "$0")/run-gpu.sh" 2 test_gpu 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc = 0 ] || exit $rc
reports=$(printf '%s\n' "$out" | grep -c "CHORUS_EMU_THREADS=host: a block's [0-9]* threads ran on [0-9]* host threads")
one=$(printf '%s\n' "$out" | grep -c "CHORUS_EMU_THREADS=host: a block's [0-9]* threads ran on 1 host threads")
# 2 ranks, 2 protocols: a report from each process.
if [ "$reports" -ne 4 ] || [ "$one" -ne 0 ]; then
  echo "FAIL: expected 4 processes to report a block on several host threads; got $reports reports, $one of them on one host thread"
  exit 1
fi
echo "PASS: the kernels with a host thread per device thread"
