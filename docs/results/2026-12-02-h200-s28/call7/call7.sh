#!/usr/bin/env bash
# s28 call 7 (typed as one command): the output projections' blocks at 8 warps instead of 16
# (shape gemv_out_warps=8, so that o_proj's blocks fit an SM beside a split-KV block), main
# 3cc8795 from call 6's staging, decode 1K and 128K x 3.
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))') LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
tar xJf .gpu_v/lily.tar.xz -C .gpu_v; chmod +x .gpu_v/lily_*; mkdir -p $OUT/call7
CONTEXTS=1024,131072 ROUNDS=3 BENCH_FLAGS=--no-token-loop timeout 280 scripts/ab_bench.sh $OUT/call7/ab.md \
  "main=.gpu_v/lily_3cc8795" "out8=env LILY_SHAPES=gemv_out_warps=8 .gpu_v/lily_3cc8795"
