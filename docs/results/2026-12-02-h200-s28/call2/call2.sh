#!/usr/bin/env bash
# s28 call 2: where the decode step's warps stall, per kernel: one step at 1K (main 32b0363)
# under Nsight Compute as one graph, with PC sampling (SourceCounters) and WarpStateStats.
set -u
M=32b0363
O=$OUT/call2; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
D=.gpu_v
tar xJf $D/lily.tar.xz -C $D; chmod +x $D/lily_*
timeout 400 ncu --profile-from-start off --graph-profiling graph --clock-control none \
  --section WarpStateStats --section SourceCounters -o $O/step -f \
  $D/lily_$M bench --synthetic --contexts 1024 --rounds 1 --steps 8 --profiler-step > $O/ncu_run.log 2>&1
echo "ncu rc=$?"; tail -5 $O/ncu_run.log
ncu -i $O/step.ncu-rep --page source --print-source sass --csv > $O/sass.csv 2> $O/sass.err; echo "src rc=$? $(wc -c < $O/sass.csv)"
ncu -i $O/step.ncu-rep --page details > $O/details.txt 2>&1
python3 scripts/ncu_summary.py $O/sass.csv --top 5 > $O/summary.txt 2>&1; echo "sum rc=$?"
head -c 6000 $O/summary.txt
grep -i "no_instruction\|No Instruction" $O/details.txt | head
gzip -f $O/sass.csv; rm -f $O/step.ncu-rep
cd $OUT && tar czf call2.tgz call2
