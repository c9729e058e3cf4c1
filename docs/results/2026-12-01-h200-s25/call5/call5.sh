#!/usr/bin/env bash
# s25 call 5: gdn-scan-pd2 (P D's two tile rows per warp in one loop) against main 425bb34
# (gdn-scan-ldsm landed): gpu_prefill_gdn and gpu_backend, the GDN prefill benchmark, prefill 8K x 3.
set -u
O=$OUT/call5; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
TEST_TIMEOUT=150 BENCHES="gpu_prefill_gdn:bench_gdn_prefill_8k" CONTEXTS=8192 ROUNDS=3 BENCH_FLAGS=--no-token-loop \
  timeout 520 scripts/ab_check.sh $O .gpu_v > $O/run.log 2>&1; echo "rc=$?" >> $O/run.log
grep -h "panicked\|FAIL\|failed" $O/tests_*.log | head -10
grep -E "gdn|GDN|scan|solve|tests:|left out|^\| [0-9a-f]+ \| round [0-9] \| [0-9]+|rc=" $O/run.log | cut -c1-220
cd $OUT && tar czf call5.tgz call5
