#!/usr/bin/env bash
# s24 call 1: prefill attention variants (attn-wgmma, its LBO/SBO swap, attn-ws) against main.
# Staged by: TESTS="gpu_prefill_attention" scripts/stage_variants.sh .gpu main attn-wgmma attn-wgmma-swap attn-ws
set -u
O=$OUT/call1; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt
TEST_TIMEOUT=120 BENCHES="gpu_prefill_attention:bench_attention_prefill_8k" CONTEXTS=8192 ROUNDS=2 BENCH_FLAGS=--no-token-loop \
  timeout 540 scripts/ab_check.sh $O .gpu > $O/run.log 2>&1; echo "rc=$?" >> $O/run.log
grep -h "test result\|panicked\|FAIL\|failed" $O/tests_*.log | head -30
cat $O/run.log | tail -40
cd $OUT && tar czf call1.tgz call1
