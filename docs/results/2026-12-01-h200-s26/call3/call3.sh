#!/usr/bin/env bash
# s26 call 3: gdn-solve-bf16x3 (the solve's products on bf16 halves) against main 1c40cc0
# (the scan's bf16x3 landed): gpu_prefill_gdn and gpu_backend with their measured errors, the
# GDN prefill benchmark, prefill 8K x 3; the variant's agreement with transformers; where the
# new scan and solve stall (Nsight Compute on the variant's bench_gdn_prefill_8k).
set -u
MAIN_REV=1c40cc0
O=$OUT/call3; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
TEST_TIMEOUT=150 BENCHES="gpu_prefill_gdn:bench_gdn_prefill_8k" CONTEXTS=8192 ROUNDS=3 BENCH_FLAGS=--no-token-loop \
  timeout 330 scripts/ab_check.sh $O .gpu_v > $O/run.log 2>&1; echo "rc=$?" >> $O/run.log
grep -h "panicked\|FAIL\|failed" $O/tests_*.log | head -10
grep -h "gdn_prefill_model: prefill of 130.*state" $O/tests_*.log
grep -E "tests:|left out|solve|scan|^\| [0-9a-f]+ \| round [0-9] \| [0-9]+|rc=" $O/run.log | cut -c1-200
v=$(ls .gpu_v/lily_* | grep -v "lily_$MAIN_REV" | head -1)
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/agreement_check.py $v $O/agreement > $O/agreement.log 2>&1; echo "agreement rc=$?"
grep -E '"top1_agreement"|mean_nll_diff|disagreements' $O/agreement.log | head -5
export PATH=/usr/local/cuda/bin:$PATH
t=.gpu_v/tests_${v##*/lily_}/gpu_prefill_gdn
timeout 150 scripts/ncu_kernels.sh $O/ncu_gdn 'gdn_chunk_(solve|scan)' $t --ignored bench_gdn_prefill_8k > /dev/null 2>&1; echo "ncu rc=$?"
head -40 $O/ncu_gdn/summary.txt
rm -f $O/ncu_gdn/profile.ncu-rep; xz -9 $O/ncu_gdn/sass.csv 2>/dev/null
cd $OUT && tar czf call3.tgz call3
