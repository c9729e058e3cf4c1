#!/usr/bin/env bash
# Session 22 call 2: the L2 prefetch size of the weight streams (shape l2_prefetch), the read ceiling.
set -u
OUT=${1:?}
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))'):${LD_LIBRARY_PATH:-}
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache LILY_TINY_FIXTURE=.gpu/fixture
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/r/gpu.txt
(nvcc -arch=sm_90a -O3 .gpu/readbw.cu -o /tmp/readbw && timeout 60 /tmp/readbw) > $OUT/r/readbw.md 2>&1
tar xJf .gpu/lily.tar.xz -C .gpu; find .gpu -name '*.gz' -exec gunzip -f {} +; chmod +x .gpu/lily_* .gpu/tests_*/*
B=.gpu/lily_478c7f7
for t in gpu_kernels gpu_backend; do
  LILY_SHAPES=l2_prefetch=3 timeout 120 .gpu/tests_478c7f7/$t --test-threads=1 >> $OUT/r/tests_256B.log 2>&1
done
grep -h "test result" $OUT/r/tests_256B.log
CONTEXTS=1024 ROUNDS=3 BENCH_FLAGS=--no-token-loop timeout 200 scripts/ab_bench.sh $OUT/r/ab.md \
  "none=$B" "f64=env LILY_SHAPES=l2_prefetch=1 $B" "f128=env LILY_SHAPES=l2_prefetch=2 $B" "f256=env LILY_SHAPES=l2_prefetch=3 $B" > /dev/null 2>&1
CONTEXTS=131072 ROUNDS=1 BENCH_FLAGS=--no-token-loop timeout 80 scripts/ab_bench.sh $OUT/r/long.md \
  "none=$B" "f256=env LILY_SHAPES=l2_prefetch=3 $B" "f128=env LILY_SHAPES=l2_prefetch=2 $B" > /dev/null 2>&1
cat $OUT/r/readbw.md $OUT/r/ab.md $OUT/r/long.md
cd $OUT && tar czf r.tgz r && rm -rf r
