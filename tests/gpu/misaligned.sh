#!/bin/sh
# The emulation's alignment trap (emu_misaligned.cc): the aligned load
# passes, the misaligned one aborts the process with a message that names
# the access, the kernel and the address.
out=$(./emu_misaligned 2>&1)
rc=$?
printf '%s\n' "$out"
case $out in
  *"aligned 16-byte load: no trap"*) ;;
  *) echo "FAIL: the aligned load did not complete"; exit 1 ;;
esac
if [ "$rc" = 0 ] || [ "$rc" = 1 ]; then
  echo "FAIL: exit status $rc, not an abort"
  exit 1
fi
case $out in
  *"misaligned 16-byte load at 0x"*"in kernel loadVector"*) echo "PASS: the misaligned load trapped" ;;
  *) echo "FAIL: the trap's message does not name the access and the kernel"; exit 1 ;;
esac
