#!/usr/bin/env bash
# s28 call 3: attn_decode_partial's merge weights once per (warp, head) (branch partial-merge)
# against main 32b0363: gpu_kernels and gpu_backend, decode 1K / 8K / 128K x 3 rounds, a traced
# step at 1K of the variant.
set -u
M=32b0363; P=${P:?}
O=$OUT/call3; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache LILY_TINY_FIXTURE=$PWD/.gpu_v/fixture
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version --format=csv > $O/gpu.txt
D=.gpu_v
tar xJf $D/lily.tar.xz -C $D; find $D -name '*.gz' -exec gunzip -f {} +; chmod +x $D/lily_* $D/tests_*/*
for t in gpu_kernels gpu_backend; do
  timeout 150 $D/tests_$P/$t --test-threads=1 >> $O/tests_$P.log 2>&1; echo "$t rc=$?" >> $O/tests_$P.log
done
grep -E "rc=|test result|FAILED|panicked" $O/tests_$P.log | head
CONTEXTS=1024,8192,131072 ROUNDS=3 BENCH_FLAGS=--no-token-loop timeout 300 scripts/ab_bench.sh $O/ab.md \
  "main=$D/lily_$M" "merge=$D/lily_$P" > /dev/null 2>&1
echo "ab rc=$?"; cut -c1-160 $O/ab.md
timeout 70 $D/lily_$P bench --synthetic --contexts 1024 --no-token-loop --trace /tmp/t_pm.csv > /dev/null 2>&1 &&
  python3 scripts/trace_summary.py /tmp/t_pm.csv > $O/trace_merge.md && grep -E "attn" $O/trace_merge.md
cd $OUT && tar czf call3.tgz call3
