#!/bin/sh
exec "$(dirname "$0")/run-gpu.sh" 4 test_gpu
