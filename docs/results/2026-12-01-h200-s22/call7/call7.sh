#!/usr/bin/env bash
# Session 22 call 7: the bench with the token loop in its warm-up (fc656b7) against f3de5cc, 1K and 128K.
set -u
OUT=${1:?}
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))'):${LD_LIBRARY_PATH:-}
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
tar xJf .gpu/lily.tar.xz -C .gpu; chmod +x .gpu/lily_*
for s in 16 64; do
  CONTEXTS=1024 ROUNDS=2 BENCH_FLAGS="--steps $s --rounds 1" timeout 80 scripts/ab_bench.sh $OUT/steps$s.md "old=.gpu/lily_f3de5cc" "warm=.gpu/lily_fc656b7" > /dev/null 2>&1
done
CONTEXTS=1024,131072 ROUNDS=1 timeout 240 scripts/ab_bench.sh $OUT/contract.md "old=.gpu/lily_f3de5cc" "warm=.gpu/lily_fc656b7" > /dev/null 2>&1
cat $OUT/*.md
