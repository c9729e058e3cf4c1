#!/usr/bin/env bash
# s28 call 6: where attn_decode_partial's ~6 us after its wait go, by diagnostic builds (wrong
# output by design) that end the kernel earlier: after its wait and its prologue keys (diag-p1),
# once it also has q (diag-p3), after its tiles without the warps' merge (diag-p2); main
# 3cc8795. A traced step at 1K of each, and decode 1K once each untraced.
set -u
O=$OUT/call6; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
D=.gpu_v
tar xJf $D/lily.tar.xz -C $D; chmod +x $D/lily_*
V="main:3cc8795 p1:4df805b p3:4c12438 p2:0a089d3"
for v in $V; do
  n=${v%%:*}; r=${v#*:}
  timeout 90 $D/lily_$r bench --synthetic --contexts 1024 --no-token-loop --trace /tmp/t_$n.csv > $O/bench_trace_$n.log 2>&1 &&
    python3 scripts/trace_summary.py /tmp/t_$n.csv > $O/trace_$n.md && echo "== $n" && grep -E "attn|one decode step" $O/trace_$n.md | cut -c1-150
done
CONTEXTS=1024 ROUNDS=1 BENCH_FLAGS=--no-token-loop timeout 150 scripts/ab_bench.sh $O/ab.md \
  "main=$D/lily_3cc8795" "p1=$D/lily_4df805b" "p3=$D/lily_4c12438" "p2=$D/lily_0a089d3" > /dev/null 2>&1
echo "ab rc=$?"; cut -c1-120 $O/ab.md
cd $OUT && tar czf call6.tgz call6
