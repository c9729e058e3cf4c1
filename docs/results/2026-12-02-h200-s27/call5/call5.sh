#!/usr/bin/env bash
# s27 call 5: how much the decode step's rate depends on where its buffers land (branch
# layout-pad, 76c5add = main 52dfcc7 + pads: LILY_PAD_BEFORE_{KERNELS,WEIGHTS,SEQUENCE}_MB
# allocate that much there and never free it). Decode 512 and 1K, 3 rounds interleaved.
set -u
O=$OUT/call5; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
tar xJf .gpu_v/lily.tar.xz -C .gpu_v; chmod +x .gpu_v/lily_*
L=$(ls .gpu_v/lily_* | head -1)
v=("none=$L")
for p in 2 8 32 128; do v+=("w$p=env LILY_PAD_BEFORE_WEIGHTS_MB=$p $L"); done
for p in 2 8 32 128; do v+=("s$p=env LILY_PAD_BEFORE_SEQUENCE_MB=$p $L"); done
v+=("k8=env LILY_PAD_BEFORE_KERNELS_MB=8 $L")
CONTEXTS=512,1024 ROUNDS=3 BENCH_FLAGS=--no-token-loop timeout 500 scripts/ab_bench.sh $O/ab.md "${v[@]}" > $O/run.log 2>&1; echo "rc=$?"
grep -E "^\| [a-z0-9]+ \| round" $O/ab.md | sort | cut -c1-120
cd $OUT && tar czf call5.tgz call5
