#!/usr/bin/env bash
# Session 22 call 3: the device rule without u (rule-draw-only) and the shared-down blocks' dispatch order (shape moe_shared_down_at).
set -u
OUT=${1:?}
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))'):${LD_LIBRARY_PATH:-}
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache LILY_TINY_FIXTURE=.gpu/fixture
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/r/gpu.txt
tar xJf .gpu/lily.tar.xz -C .gpu; find .gpu -name '*.gz' -exec gunzip -f {} +; chmod +x .gpu/lily_* .gpu/tests_*/*
R=.gpu/lily_bf5c031 G=.gpu/lily_33f753e
for t in gpu_sampling gpu_backend gpu_kernels; do timeout 150 .gpu/tests_bf5c031/$t --test-threads=1 >> $OUT/r/tests_bf5c031.log 2>&1; done
for m in 1 2; do for t in gpu_kernels gpu_backend; do
  LILY_SHAPES=moe_shared_down_at=$m timeout 120 .gpu/tests_33f753e/$t --test-threads=1 >> $OUT/r/tests_33f753e_at$m.log 2>&1
done; done
grep -H "test result" $OUT/r/tests_*.log
CONTEXTS=1024 ROUNDS=3 BENCH_FLAGS=--no-token-loop timeout 150 scripts/ab_bench.sh $OUT/r/ab.md \
  "main=$G" "sd_first=env LILY_SHAPES=moe_shared_down_at=1 $G" "sd_last=env LILY_SHAPES=moe_shared_down_at=2 $G" "rule=$R" > /dev/null 2>&1
CONTEXTS=1024 ROUNDS=2 BENCH_FLAGS="--temperature 0.7 --top-p 0.9" timeout 100 scripts/ab_bench.sh $OUT/r/drawn.md "main=$G" "rule=$R" > /dev/null 2>&1
CONTEXTS=131072 ROUNDS=1 BENCH_FLAGS=--no-token-loop timeout 80 scripts/ab_bench.sh $OUT/r/long.md \
  "main=$G" "sd_first=env LILY_SHAPES=moe_shared_down_at=1 $G" "sd_last=env LILY_SHAPES=moe_shared_down_at=2 $G" > /dev/null 2>&1
cat $OUT/r/ab.md $OUT/r/drawn.md $OUT/r/long.md
cd $OUT && tar czf r.tgz r && rm -rf r
