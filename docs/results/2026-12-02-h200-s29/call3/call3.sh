#!/usr/bin/env bash
# s29 call 3: the SM clock and power during decode alone: main (ab9e4e5) at 1K x 3 and 128K x 1
# under CLOCKS=1 (each run's samples kept), and what nvidia-smi says of the power limits and
# clocks (read only: the settings are left as they are).
set -u
O=$OUT/call3; mkdir -p $O
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))')
export LILY_KERNEL_CACHE=/tmp/lily-kernel-cache
tar xJf .gpu/gpu.tar.xz -C .gpu
nvidia-smi -q -d POWER,CLOCK,PERFORMANCE > $O/smi_before.txt 2>&1
i=0
for ctx in 1024 1024 1024 131072; do
  i=$((i + 1))
  scripts/clock_log.sh $O/clocks_${i}_$ctx.csv .gpu/lily bench --synthetic --contexts $ctx --no-token-loop 2>>$O/bench.err | grep -E "^\| [0-9]" | tee -a $O/bench.md
  cat $O/clocks_${i}_$ctx.csv.summary | tee -a $O/bench.md
done
# nvidia-smi -q while a decode runs: its power capping state then.
( sleep 6; nvidia-smi -q -d POWER,CLOCK,PERFORMANCE > $O/smi_during.txt 2>&1 ) &
.gpu/lily bench --synthetic --contexts 1024 --no-token-loop 2>/dev/null | grep -E "^\| [0-9]" | tee -a $O/bench.md
wait
grep -iE "power (limit|draw)|Current Power Limit|Enforced|Default Power|SW Power|HW Slowdown|Thermal|Applications Clocks|^ *SM  |Graphics" $O/smi_during.txt | head -30
