#!/usr/bin/env bash
# s24 call 2: gemm-ws and prefill-ws (gemm-ws + attn-ws merged) against main.
# Staged by: TESTS="gpu_prefill_moe gpu_backend gpu_prefill_attention" scripts/stage_variants.sh .gpu main gemm-ws prefill-ws
set -u
O=$OUT/call2; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
TEST_TIMEOUT=150 BENCHES="gpu_prefill_moe:bench_moe_prefill_8k gpu_prefill_moe:bench_gemm_8k" CONTEXTS=8192 ROUNDS=3 BENCH_FLAGS=--no-token-loop \
  timeout 540 scripts/ab_check.sh $O .gpu > $O/run.log 2>&1; echo "rc=$?" >> $O/run.log
grep -h "test result\|panicked\|FAIL\|failed" $O/tests_*.log | head -30
cat $O/run.log | tail -40
cd $OUT && tar czf call2.tgz call2
