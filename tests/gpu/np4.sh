#!/bin/sh
# 4 ranks, two to a device: the kernels across devices (CUDA IPC).
# On the CPU emulation (CHORUS_GPU_MUST_RUN, tests/gpu/Makefile.am) the
# protocols other than Simple run the sum and the pair types' ops only
# (CHORUS_TEST_OPS), and their large case at 2 MiB (CHORUS_TEST_LARGE_BYTES:
# still 8 LL slices a channel, where 8 MiB gave 32): LL's whole matrix took
# 180 s there against Simple's 63, most of it the 8 MiB cases of 4 ranks
# polling on 2 cores.  An op's functor is the same whichever protocol
# carries its data, and np2.sh runs LL over every op and the 8 MiB cases.
# A real GPU runs the whole matrix.
dir=$(dirname "$0")
status=0
for proto in ${CHORUS_TEST_PROTOS:-simple ll auto}; do
  if [ "$proto" != simple ] && [ -n "${CHORUS_GPU_MUST_RUN:-}" ] && [ -z "${CHORUS_TEST_OPS+set}" ]; then
    CHORUS_TEST_OPS=sum,minloc,maxloc CHORUS_TEST_LARGE_BYTES=2097152 CHORUS_TEST_PROTOS=$proto "$dir/run-gpu.sh" 4 test_gpu
  else
    CHORUS_TEST_PROTOS=$proto "$dir/run-gpu.sh" 4 test_gpu
  fi
  rc=$?
  [ "$rc" = 77 ] && exit 77
  [ "$rc" != 0 ] && status=$rc
done
exit $status
