#!/usr/bin/env bash
# Session 28, call 5 (issue 14): the whole-rows GEMV with more weight bytes in flight: two 4 KB pieces per thread at
# 2 blocks per SM (gemv_64x128_b2_rows2), or one at 3 blocks per SM (gemv_64x128_b3_rows); both spill 16-48 bytes
# (ptxas). Decode stress with rows2; each decode GEMM alone (M = 1, 4); the chains at B = 1, 2, 4 interleaved.
set -uo pipefail
cd "$(dirname "$0")"
out=${OUT:-/tmp/out}; mkdir -p "$out"; work=/tmp/w5; rm -rf $work; mkdir -p $work
mv .cutlass/examples /tmp/cutlass_examples_hidden 2>/dev/null
source scripts/device_configure.sh
export CUSYNC_ATTENTION_PROMPT_QKV_CONFIGS="128,144,64,6,true,1,false,2"
export CUSYNC_ATTENTION_PROMPT_OUTPUT_CONFIGS="128,256,64,4,true,1,true"
export CUSYNC_STOCK_GEMM_CONFIGS="128,144,64,2,coop"
export CUSYNC_ATTENTION_DECODE_QKV_CONFIGS="64,128,128,4,false,1,lean"
export CUSYNC_ATTENTION_DECODE_OUTPUT_CONFIGS="64,128,128,4,false,1,lean"
start=$(date +%s)
device_gpu_line
{ device_configure build-gpu >/dev/null &&
  cmake --build build-gpu --target attention_example attention_decode_stress gemm_shape_probe -j 16; } >$work/build.log 2>&1 ||
  { grep -E "error" $work/build.log | head -8 | cut -c1-400; mv /tmp/cutlass_examples_hidden .cutlass/examples; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
mv /tmp/cutlass_examples_hidden .cutlass/examples 2>/dev/null
timeout 150 build-gpu/examples/attention/attention_decode_stress --executions 12000 >$work/stress.log 2>&1
echo "stress: rc $? at $(( $(date +%s) - start )) s"; grep -vE "^  running" $work/stress.log | tail -1
echo "rows2 cases with 0 mismatches: $(grep -E "_rows2" $work/stress.log | grep -v "^  running" | grep -c " 0 mismatched")"
grep -E "mismatched elements" $work/stress.log | grep -v " 0 mismatched" | head -3
timeout 60 build-gpu/bench/attention/gemm_shape_probe --phase decode --m 1,4 --splits --shapes qkv \
  --kernels cuBLASLt,gemv_64x128_b2,gemv_64x128_b4,rows --samples 15 --warmup-ms 200 \
  --csv $work/probe.csv >$work/probe.log 2>&1
echo "probe: rc $? at $(( $(date +%s) - start )) s"
ex=build-gpu/examples/attention/attention_example
variants="cuBLAS+attn,StreamSync,Strided+TileSync+PDL,Strided+RowSync+PDL"
for shape in gpt3:4x1024 llama:4x1024 gpt3:4x2048 llama:4x2048 gpt3:1x1024 llama:1x1024 gpt3:2x1024 llama:2x1024; do
  model=${shape%:*}; s=${shape#*:}; batch=${s%x*}; cache=${s#*x}
  [ $(( $(date +%s) - start )) -gt 400 ] && { echo "skipped $shape (time)"; continue; }
  csv=$work/attention_${model}_decode_${batch}_1_${cache}.csv
  timeout 60 $ex --model $model --phase decode --batch $batch --seq 1 --cache $cache --interleave --warmup-ms 1000 \
    --samples 15 --variants "$variants" --csv $csv >$work/time_${model}_${s}.log 2>&1
  echo "$shape: rc $? at $(( $(date +%s) - start )) s $(grep -cE "FAILED|incorrect" $work/time_${model}_${s}.log) failed"
done
python3 bench/attention/summarize_attention.py $work/attention_*_decode_*.csv >$work/summary.txt 2>&1
cp $work/summary.txt $work/probe.log "$OUT/"
tar czf "$OUT/raw.tgz" -C $work --exclude=build.log .
grep -E "floor|cuBLASLt|rows|_b2_sk|_b4_sk" $work/probe.log | cut -c1-100 | head -40
cut -c1-250 $work/summary.txt
