#!/usr/bin/env bash
# s29 call 2: the full gpu_check at main (v33's kernels; the benchmark now under
# scripts/clock_log.sh): every GPU test binary, the contract bench with the SM clock and power it
# ran at, transformers side by side, the agreement check.
set -u
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
timeout 570 scripts/gpu_check.sh /tmp/run .gpu > /tmp/run.log 2>&1; echo "gpu_check rc=$?" >> /tmp/run.log
cp /tmp/run.log /tmp/run/
grep -E "test result|FAILED|panicked" /tmp/run.log | sort | uniq -c | head -20
cat /tmp/run/clocks.csv.summary
tail -45 /tmp/run.log
cd $OUT && tar czf call2.tgz -C /tmp run
