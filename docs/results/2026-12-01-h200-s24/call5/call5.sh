#!/usr/bin/env bash
# s24 call 5: the GEMMs' loader as a warp (gemm-ws-warp d8e77cc, 288 threads) against the loader
# warpgroup (prefill-ws 183bdb1, 384) and main b46743e (no warp specialisation in the GEMMs).
set -u
O=$OUT/call5; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
TEST_TIMEOUT=150 BENCHES="gpu_prefill_moe:bench_moe_prefill_8k gpu_prefill_moe:bench_gemm_8k" CONTEXTS=8192 ROUNDS=3 BENCH_FLAGS=--no-token-loop \
  timeout 500 scripts/ab_check.sh $O .gpu_v > $O/run.log 2>&1; echo "rc=$?" >> $O/run.log
grep -h "test result\|panicked\|FAIL\|failed" $O/tests_*.log | head -30
grep -E "TFLOP|tests:|left out|^\| [0-9a-f]+ \| round [0-9] \| 8192|rc=" $O/run.log | cut -c1-220 | tail -60
cd $OUT && tar czf call5.tgz call5
