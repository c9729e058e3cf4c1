#!/usr/bin/env bash
# s29 call 1: resid-bulk (7b997d6, shape resid_bulk: the normed products' residual into shared
# memory by one TMA copy per block; mask 1 streamed products, 2 router, 4 lm_head; 0 = main's
# per-thread L2 loads, the same code as main otherwise). gpu_kernels and gpu_backend under
# resid_bulk=7; decode 1K x 3 rounds of main, 1, 1 with every ring row before the wait, 7;
# 128K once of main and 7.
set -u
P=7b997d6
O=$OUT/call1; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache LILY_TINY_FIXTURE=$PWD/.gpu_v/fixture
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version --format=csv > $O/gpu.txt
D=.gpu_v
tar xJf $D/lily.tar.xz -C $D; find $D -name '*.gz' -exec gunzip -f {} +; chmod +x $D/lily_* $D/tests_*/*
for t in gpu_kernels gpu_backend; do
  LILY_SHAPES=resid_bulk=7 timeout 120 $D/tests_$P/$t --test-threads=1 >> $O/tests_b7.log 2>&1; echo "$t rc=$?" >> $O/tests_b7.log
done
grep -E "rc=|test result|FAILED|panicked" $O/tests_b7.log | head
CONTEXTS=1024 ROUNDS=3 BENCH_FLAGS=--no-token-loop timeout 330 scripts/ab_bench.sh $O/ab.md \
  "main=$D/lily_$P" "b1=env LILY_SHAPES=resid_bulk=1 $D/lily_$P" \
  "b1e2=env LILY_SHAPES=resid_bulk=1,gemv_normed_early=2 $D/lily_$P" "b7=env LILY_SHAPES=resid_bulk=7 $D/lily_$P" > /dev/null 2>&1
echo "ab rc=$?"
CONTEXTS=131072 ROUNDS=1 BENCH_FLAGS=--no-token-loop timeout 90 scripts/ab_bench.sh $O/ab.md \
  "main=$D/lily_$P" "b7=env LILY_SHAPES=resid_bulk=7 $D/lily_$P" > /dev/null 2>&1
echo "ab128 rc=$?"; cut -c1-150 $O/ab.md
