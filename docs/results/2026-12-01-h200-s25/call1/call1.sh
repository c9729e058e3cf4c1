#!/usr/bin/env bash
# s25 call 1: gemm-n128 2dc4c96 (the dense product in 128-column tiles where 256-column ones
# would leave more than half the SMs idle) against main eca2695: gpu_prefill_moe and
# gpu_backend, the dense GEMM benchmarks at 1K and 8K rows, prefill at 1K, 2K, 8K x 3.
set -u
O=$OUT/call1; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
TEST_TIMEOUT=120 BENCHES="gpu_prefill_moe:bench_gemm_1k gpu_prefill_moe:bench_gemm_8k" CONTEXTS=1024,2048,8192 ROUNDS=3 BENCH_FLAGS=--no-token-loop \
  timeout 500 scripts/ab_check.sh $O .gpu_v > $O/run.log 2>&1; echo "rc=$?" >> $O/run.log
grep -h "panicked\|FAIL\|failed" $O/tests_*.log | head -10
grep -E "TFLOP|tests:|left out|^\| [0-9a-f]+ \| round [0-9] \| [0-9]+|rc=" $O/run.log | cut -c1-200
cd $OUT && tar czf call1.tgz call1
