#!/usr/bin/env bash
# s27 call 2: gemm-split-k (9833eea: the narrow dense product split in K where its tiles leave
# most SMs idle) against main c1b10fe: gpu_prefill_moe (the dense product against the CPU at
# split and unsplit shapes) and, for the variant, gpu_backend; bench_gemm_1k twice; prefill
# 256..2K and 8K x 2; then the split size swept on the variant (LILY_SHAPES gemm_split_steps,
# host-only: no recompile) with bench_gemm_256 and prefill 256..1K.
set -u
VAR=9833eea
O=$OUT/call2; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
TEST_TIMEOUT=200 BENCHES="gpu_prefill_moe:bench_gemm_1k" CONTEXTS=256,512,1024,2048,8192 ROUNDS=2 BENCH_FLAGS=--no-token-loop \
  timeout 400 scripts/ab_check.sh $O .gpu_v > $O/run.log 2>&1; echo "rc=$?" >> $O/run.log
grep -h "panicked\|FAIL\|failed" $O/tests_*.log | head -10
grep -h "gemm .*x.*x" $O/tests_*.log | head -30
grep -E "tests:|left out|gemm |^\| [0-9a-f]+ \| round [0-9] \| [0-9]+|rc=" $O/run.log | cut -c1-200
for round in 1 2; do
  for s in 0 8 4 16; do
    echo "== gemm_split_steps=$s round $round" >> $O/sweep.md
    LILY_SHAPES=gemm_split_steps=$s timeout 60 .gpu_v/tests_$VAR/gpu_prefill_moe --ignored --exact bench_gemm_256 --nocapture 2>&1 | grep "^gemm" >> $O/sweep.md
    LILY_SHAPES=gemm_split_steps=$s timeout 60 .gpu_v/lily_$VAR bench --synthetic --contexts 256,512,1024 --no-token-loop --rounds 1 2>&1 | grep -E "^\| [0-9]" >> $O/sweep.md
  done
done
cat $O/sweep.md
cd $OUT && tar czf call2.tgz call2
