#!/usr/bin/env bash
# s24 call 10: gemm-staged-store 580283a (the expert products' bf16 epilogues through shared
# memory, 16-byte row chunks) against main 2adbac7: its gpu_prefill_moe and gpu_backend, the MoE
# benchmark once each, 8K x 2.
set -u
O=$OUT/call10; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
TEST_TIMEOUT=90 BENCHES="gpu_prefill_moe:bench_moe_prefill_8k" CONTEXTS=8192 ROUNDS=2 BENCH_FLAGS=--no-token-loop \
  timeout 250 scripts/ab_check.sh $O .gpu_v > $O/run.log 2>&1; echo "rc=$?" >> $O/run.log
grep -h "panicked\|FAIL\|failed" $O/tests_*.log | head -10
grep -E "TFLOP|tests:|left out|^\| [0-9a-f]+ \| round [0-9] \| 8192|rc=" $O/run.log | cut -c1-200
cd $OUT && tar czf call10.tgz call10
