#!/usr/bin/env bash
# s27 call 6: combine-norm (the next layer's input norm inside moe_combine) against main:
# the variant's gpu_prefill_moe (combine's norm asserted bit-equal to rmsnorm's) and
# gpu_backend; bench_moe_prefill_8k twice; prefill 256, 1K, 8K x 3 (the digests must not move).
set -u
O=$OUT/call6; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
TEST_TIMEOUT=200 BENCHES="gpu_prefill_moe:bench_moe_prefill_8k" CONTEXTS=256,1024,8192 ROUNDS=3 BENCH_FLAGS=--no-token-loop \
  timeout 420 scripts/ab_check.sh $O .gpu_v > $O/run.log 2>&1; echo "rc=$?" >> $O/run.log
grep -h "panicked\|FAIL\|failed" $O/tests_*.log | head -10
grep -h "next norm\|moe prefill .* tokens" $O/tests_*.log | head -10
grep -E "tests:|left out|per layer|moe_combine|rmsnorm|^\| [0-9a-f]+ \| round [0-9] \| [0-9]+|rc=" $O/run.log | cut -c1-200
cd $OUT && tar czf call6.tgz call6
