#!/usr/bin/env bash
# s27 call 7: gemm-ahead3 (9c5a542: the dense and gate|up GEMMs' loads three K steps ahead)
# against main f09c7a3: the variant's gpu_prefill_moe; bench_gemm_8k, bench_gemm_1k and
# bench_moe_prefill_8k twice each; prefill 1K and 8K x 2 (the same arithmetic: the digests must
# not move).
set -u
O=$OUT/call7; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
TEST_TIMEOUT=120 BENCHES="gpu_prefill_moe:bench_gemm_8k gpu_prefill_moe:bench_gemm_1k gpu_prefill_moe:bench_moe_prefill_8k" \
  CONTEXTS=1024,8192 ROUNDS=2 BENCH_FLAGS=--no-token-loop \
  timeout 280 scripts/ab_check.sh $O .gpu_v > $O/run.log 2>&1; echo "rc=$?" >> $O/run.log
grep -h "panicked\|FAIL\|failed" $O/tests_*.log | head -10
grep -E "tests:|left out|gemm |per layer|gemm_moe|^\| [0-9a-f]+ \| round [0-9] \| [0-9]+|rc=" $O/run.log | cut -c1-160
cd $OUT && tar czf call7.tgz call7
