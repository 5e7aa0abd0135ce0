#!/bin/sh
exec "$(dirname "$0")/run-gpu.sh" 1 test_gpu
