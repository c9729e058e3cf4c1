#!/usr/bin/env bash
# s26 call 2: the full gpu_check at main b219ff0 (gdn-scan-bf16x3 merged: the scan's W S0,
# q S0 and K^T D on bf16 halves): every GPU test binary, the contract bench, transformers side by side, the agreement check that decides its landing.
set -u
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
timeout 560 scripts/gpu_check.sh /tmp/run .gpu > /tmp/run.log 2>&1; echo "gpu_check rc=$?" >> /tmp/run.log
cp /tmp/run.log /tmp/run/
grep -E "test result|FAILED|panicked" /tmp/run.log | sort | uniq -c | head -20
tail -45 /tmp/run.log
cd $OUT && tar czf call2.tgz -C /tmp run
