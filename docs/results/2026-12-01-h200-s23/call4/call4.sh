#!/usr/bin/env bash
# s23 call 4: the full GPU check at f8311ef (gemm by TMA), then 8K prefill A/B against main 6dd5158.
set -u
O=$OUT/call4; mkdir -p $O
scripts/gpu_check.sh /tmp/run .gpu > /tmp/run.log 2>&1; echo "gpu_check rc=$?"
cp /tmp/run.log /tmp/run/
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
tar xJf .gpu/lily.tar.xz -C .gpu; chmod +x .gpu/lily_*
CONTEXTS=8192 ROUNDS=3 BENCH_FLAGS=--no-token-loop timeout 150 scripts/ab_bench.sh $O/ab8k.md main=.gpu/lily_6dd5158 tma=.gpu/lily
tar czf $O/run.tgz -C /tmp run
grep -h "test result" /tmp/run/*.log | head -20
