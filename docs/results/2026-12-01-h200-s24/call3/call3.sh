#!/usr/bin/env bash
# s24 call 3: per-kernel prefill times (nsys) of main b46743e (attn-ws landed) and prefill-ws
# 183bdb1 (the same plus gemm-ws), then the full gpu_check at b46743e.
set -u
O=$OUT/call3; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
tar xJf .gpu/gpu.tar.xz -C .gpu; tar xJf .gpu_v/lily.tar.xz -C .gpu_v; chmod +x .gpu_v/lily_*
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "nsys=$NSYS" > $O/nsys.txt
if [ -n "$NSYS" ]; then
  for v in main=.gpu/lily ws=.gpu_v/lily_183bdb1; do
    n=${v%%=*}; b=${v#*=}
    timeout 90 $NSYS profile -o /tmp/p_$n -f true $b bench --synthetic --contexts 8192 --rounds 1 --steps 8 --no-token-loop > $O/nsys_$n.log 2>&1
    timeout 60 $NSYS stats -r cuda_gpu_kern_sum --format csv -o $O/kern_$n /tmp/p_$n.nsys-rep >> $O/nsys_$n.log 2>&1
  done
fi
ls $O
timeout 470 scripts/gpu_check.sh /tmp/run .gpu > /tmp/run.log 2>&1; echo "gpu_check rc=$?" >> /tmp/run.log
cp /tmp/run.log /tmp/run/
grep -E "test result|FAILED|panicked" /tmp/run.log | sort | uniq -c | head -20
tail -45 /tmp/run.log
cd $OUT && tar czf call3.tgz call3 -C /tmp run
