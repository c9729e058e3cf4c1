#!/usr/bin/env bash
# s28 call 8: attn_decode_partial's blocks past the guessed split count (+1) return before their
# wait (branch partial-early-exit) against main 6063886: the variant's gpu_kernels and
# gpu_backend, decode 1K and 2K x 3.
set -u
M=6063886; P=${P:?}
O=$OUT/call8; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache LILY_TINY_FIXTURE=$PWD/.gpu_v/fixture
D=.gpu_v
tar xJf $D/lily.tar.xz -C $D; find $D -name '*.gz' -exec gunzip -f {} +; chmod +x $D/lily_* $D/tests_*/*
for t in gpu_kernels gpu_backend; do
  timeout 100 $D/tests_$P/$t --test-threads=1 --nocapture >> $O/tests_$P.log 2>&1; echo "$t rc=$?" >> $O/tests_$P.log
done
grep -E "rc=|test result|FAILED|panicked" $O/tests_$P.log | head
CONTEXTS=1024,2048 ROUNDS=3 BENCH_FLAGS=--no-token-loop timeout 200 scripts/ab_bench.sh $O/ab.md \
  "main=$D/lily_$M" "early=$D/lily_$P" > /dev/null 2>&1
echo "ab rc=$?"; cut -c1-120 $O/ab.md
