#!/usr/bin/env bash
# s28 call 5: the full gpu_check at main 32cc4b4 (partial-merge landed): every GPU test binary,
# the contract bench, transformers side by side, and the agreement check (the digests are
# the previous main's: the merge is bit-identical).
set -u
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
timeout 570 scripts/gpu_check.sh /tmp/run .gpu > /tmp/run.log 2>&1; echo "gpu_check rc=$?" >> /tmp/run.log
cp /tmp/run.log /tmp/run/
grep -E "test result|FAILED|panicked" /tmp/run.log | sort | uniq -c | head -20
tail -45 /tmp/run.log
cd $OUT && tar czf call5.tgz -C /tmp run
