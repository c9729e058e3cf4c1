#!/usr/bin/env bash
# s27 call 1: session 26's three prepared GDN branches against main a8f2ee3: gdn-solve-planes
# (67a5db0), gdn-solve-blocked (4fed681, on the planes), gdn-scan-3acc (269fcc1):
# gpu_prefill_gdn and gpu_backend with their measured errors, bench_gdn_prefill_8k twice,
# prefill 8K x 3; then main's per-launch profile of short prefills (256 and 1K tokens).
set -u
MAIN_REV=a8f2ee3
O=$OUT/call1; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
TEST_TIMEOUT=150 BENCHES="gpu_prefill_gdn:bench_gdn_prefill_8k" CONTEXTS=8192 ROUNDS=3 BENCH_FLAGS=--no-token-loop \
  timeout 470 scripts/ab_check.sh $O .gpu_v > $O/run.log 2>&1; echo "rc=$?" >> $O/run.log
grep -h "panicked\|FAIL\|failed" $O/tests_*.log | head -10
grep -h "gdn_prefill_model: prefill of 130.*state" $O/tests_*.log
grep -E "tests:|left out|solve|scan|^\| [0-9a-f]+ \| round [0-9] \| [0-9]+|rc=" $O/run.log | cut -c1-200
timeout 80 .gpu_v/lily_$MAIN_REV bench --synthetic --contexts 256,1024 --no-token-loop --rounds 1 --profile > $O/profile_short.md 2>&1; echo "profile rc=$?"
cd $OUT && tar czf call1.tgz call1
