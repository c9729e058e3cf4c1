set -u
d=.gpu_ab
tar xJf $d/lily.tar.xz -C $d && find $d -name '*.gz' -exec gunzip -f {} + && chmod +x $d/lily_* $d/tests_*/*
export LILY_TINY_FIXTURE=$d/fixture LILY_KERNEL_CACHE=/tmp/lkc
R="gemv_normed_reg_rows=1,moe_reg_items=1,moe_warps=16,moe_stages=1"
for t in $d/tests_7e7d205/*; do n=$(basename $t); timeout 100 $t --test-threads=1 > $OUT/tests_${n}_default.log 2>&1; echo "$n default rc=$? $(grep -h 'test result' $OUT/tests_${n}_default.log)"; LILY_SHAPES=$R timeout 100 $t --test-threads=1 > $OUT/tests_${n}_reg.log 2>&1; echo "$n reg rc=$? $(grep -h 'test result' $OUT/tests_${n}_reg.log)"; done
B=$d/lily_7e7d205; N=$d/lily_2a24f74
CONTEXTS=1024,131072 ROUNDS=2 timeout 380 scripts/ab_bench.sh $OUT/ab.md main=$d/lily_9a03d73 n=$N "n-r1=env LILY_SHAPES=gemv_normed_reg_rows=1 $N" "n-r1-s2=env LILY_SHAPES=gemv_normed_reg_rows=1,gemv_normed_stages=2 $N" "b-m16r1s1=env LILY_SHAPES=moe_warps=16,moe_reg_items=1,moe_stages=1 $B" "b-m8r1s2=env LILY_SHAPES=moe_warps=8,moe_reg_items=1,moe_stages=2 $B" "b-all-r1=env LILY_SHAPES=$R $B"
for v in "n-r1 gemv_normed_reg_rows=1 $N" "b-all-r1 $R $B"; do set -- $v; LILY_SHAPES=$2 timeout 40 $3 bench --synthetic --contexts 1024 --trace $OUT/t_$1.csv > /dev/null 2>&1 && python3 scripts/trace_summary.py --launches $OUT/t_$1.csv > $OUT/trace_$1.md; xz $OUT/t_$1.csv; done
echo done
