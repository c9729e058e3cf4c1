#!/usr/bin/env bash
# s26 call 4: gdn-solve-overlap (P computed by six warps while two substitute) against main
# 4511331 (the scan's and the solve's bf16x3 landed): gpu_prefill_gdn and gpu_backend with their
# measured errors, the GDN prefill benchmark, prefill 8K x 3 (digests should not move).
set -u
O=$OUT/call4; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
TEST_TIMEOUT=150 BENCHES="gpu_prefill_gdn:bench_gdn_prefill_8k" CONTEXTS=8192 ROUNDS=3 BENCH_FLAGS=--no-token-loop \
  timeout 400 scripts/ab_check.sh $O .gpu_v > $O/run.log 2>&1; echo "rc=$?" >> $O/run.log
grep -h "panicked\|FAIL\|failed" $O/tests_*.log | head -10
grep -h "gdn_prefill_model: prefill of 130.*state" $O/tests_*.log
grep -E "tests:|left out|solve|scan|^\| [0-9a-f]+ \| round [0-9] \| [0-9]+|rc=" $O/run.log | cut -c1-200
cd $OUT && tar czf call4.tgz call4
