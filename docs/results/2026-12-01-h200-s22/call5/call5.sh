#!/usr/bin/env bash
# Session 22 call 5: gpu_kernels at f3de5cc (the rule test fixed), prefill/decode 8K and 1K against 683f29f.
set -u
OUT=${1:?}
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))'):${LD_LIBRARY_PATH:-}
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache LILY_TINY_FIXTURE=.gpu/fixture
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/r/gpu.txt
tar xJf .gpu/lily.tar.xz -C .gpu; find .gpu -name '*.gz' -exec gunzip -f {} +; chmod +x .gpu/lily_* .gpu/tests_*/*
timeout 120 .gpu/tests_f3de5cc/gpu_kernels --test-threads=1 > $OUT/r/tests_f3de5cc.log 2>&1
grep -H "test result" $OUT/r/tests_*.log
CONTEXTS=1024,8192 ROUNDS=2 BENCH_FLAGS=--no-token-loop timeout 200 scripts/ab_bench.sh $OUT/r/ab.md "old=.gpu/lily_683f29f" "new=.gpu/lily_f3de5cc" > /dev/null 2>&1
cat $OUT/r/ab.md
cd $OUT && tar czf r.tgz r && rm -rf r
