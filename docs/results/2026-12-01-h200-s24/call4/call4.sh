#!/usr/bin/env bash
# s24 call 4: why gemm-ws loses end to end: every gemm launch of one 8K prefill timed by ncu
# (duration only) for main b46743e and prefill-ws 183bdb1 (the same plus gemm-ws).
set -u
O=$OUT/call4; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
tar xJf .gpu/gpu.tar.xz -C .gpu; tar xJf .gpu_v/lily.tar.xz -C .gpu_v; chmod +x .gpu_v/lily_*
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1); echo "ncu=$NCU"
for v in main=.gpu/lily ws=.gpu_v/lily_183bdb1; do
  n=${v%%=*}; b=${v#*=}
  timeout 200 $NCU --metrics gpu__time_duration.sum -k regex:gemm -c 500 --csv $b bench --synthetic --contexts 8192 --rounds 1 --steps 2 --no-token-loop > $O/ncu_$n.csv 2> $O/ncu_$n.err
  echo "$n rc=$? rows=$(wc -l < $O/ncu_$n.csv)"
done
cd $OUT && tar czf call4.tgz call4
