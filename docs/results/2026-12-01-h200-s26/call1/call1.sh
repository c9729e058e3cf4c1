#!/usr/bin/env bash
# s26 call 1: the scan's precision (gdn-tf32-1x, a diagnostic) and its cheaper product
# (gdn-scan-bf16x3) against main e0496bb: gpu_prefill_gdn and gpu_backend, the GDN prefill
# benchmark, prefill 8K x 3. A variant whose tests fail is benched directly after.
set -u
O=$OUT/call1; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
TEST_TIMEOUT=150 BENCHES="gpu_prefill_gdn:bench_gdn_prefill_8k" CONTEXTS=8192 ROUNDS=3 BENCH_FLAGS=--no-token-loop \
  timeout 420 scripts/ab_check.sh $O .gpu_v > $O/run.log 2>&1; echo "rc=$?" >> $O/run.log
for bin in .gpu_v/lily_*; do
  rev=${bin##*/lily_}
  grep -q "| $rev | round" $O/benches.md 2>/dev/null && continue
  echo "== $rev benched directly (tests failed)" >> $O/direct.log
  timeout 60 .gpu_v/tests_$rev/gpu_prefill_gdn --ignored --exact bench_gdn_prefill_8k --nocapture >> $O/direct.log 2>&1
  timeout 90 $bin bench --synthetic --contexts 8192 --no-token-loop >> $O/direct.log 2>&1
done
grep -h "panicked\|FAIL\|failed\|max err\|error" $O/tests_*.log | head -30
grep -E "gdn|GDN|scan|solve|tests:|left out|^\| [0-9a-f]+ \| round [0-9] \| [0-9]+|rc=" $O/run.log | cut -c1-220
[ -e $O/direct.log ] && grep -E "==|scan|solve|8192|gdn" $O/direct.log | cut -c1-220
cd $OUT && tar czf call1.tgz call1
