#!/bin/sh
# Device buffers on 4 ranks of one node.  On the CPU emulation, two devices
# (run-gpu.sh) take ranks 0 and 2, and 1 and 3 (test_gpu: node rank modulo
# devices), so the device rings must put ranks that share a GPU side by
# side, 0 2 1 3 (GPU topology order, not rank order), and say so at INFO.
out=$(CHORUS_DEBUG=INFO CHORUS_DEBUG_SUBSYS=CUDA "$(dirname "$0")/run-gpu.sh" 4 test_gpu 2>&1)
rc=$?
printf '%s\n' "$out" | grep -v ' CHORUS INFO '
[ "$rc" = 0 ] || exit "$rc"
case $out in
  *"Chorus CPU emulation"*)
    if ! printf '%s\n' "$out" | grep -q '\[rank 3\] CHORUS INFO device rings in GPU topology order: 0 2 1 3$'; then
      echo "FAIL: the device rings do not follow the GPUs (0 2 1 3)"
      printf '%s\n' "$out" | grep 'device rings' | head -3
      exit 1
    fi
    echo "PASS: the device rings follow the GPUs (0 2 1 3)" ;;
esac
