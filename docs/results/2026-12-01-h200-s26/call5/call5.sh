#!/usr/bin/env bash
# s26 call 5: gpu_check at main 4511331 (the scan's and the solve's bf16x3 landed) without
# transformers and the agreement check (call 2 ran them at b219ff0, call 3 the agreement with
# the solve's change): every GPU test binary and the contract bench, 256 .. 128K.
set -u
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
mkdir -p $OUT/run
SKIP_TRANSFORMERS=1 SKIP_AGREEMENT=1 timeout 290 scripts/gpu_check.sh $OUT/run .gpu > $OUT/run/run.log 2>&1; echo "gpu_check rc=$?" >> $OUT/run/run.log
grep -E "test result|FAILED|panicked" $OUT/run/run.log | sort | uniq -c | head -20
cat $OUT/run/bench.md 2>/dev/null; tail -3 $OUT/run/run.log
