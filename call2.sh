#!/usr/bin/env bash
# Session 28, call 2 (issue 14): why the tensor-core GEMV's QKV stage ran slower than the CUDA-core one in call 1's
# chains. Each decode GEMM alone (gemm_shape_probe --phase decode: cuBLASLt, the lean CUTLASS GEMM, every GEMV
# configuration at every split the chain tries, plus 11 and 14 parts), M = 1, 2, 4; the mma loop now runs two
# accumulator chains. Then the chains at B = 4 again.
set -uo pipefail
cd "$(dirname "$0")"
out=${OUT:-/tmp/out}; mkdir -p "$out"; work=/tmp/w2; rm -rf $work; mkdir -p $work
mv .cutlass/examples /tmp/cutlass_examples_hidden 2>/dev/null
source scripts/device_configure.sh
export CUSYNC_ATTENTION_PROMPT_QKV_CONFIGS="128,144,64,6,true,1,false,2"
export CUSYNC_ATTENTION_PROMPT_OUTPUT_CONFIGS="128,256,64,4,true,1,true"
export CUSYNC_STOCK_GEMM_CONFIGS="128,144,64,2,coop"
export CUSYNC_ATTENTION_DECODE_QKV_CONFIGS="64,128,128,4,false,1,lean"
export CUSYNC_ATTENTION_DECODE_OUTPUT_CONFIGS="64,128,128,4,false,1,lean"
start=$(date +%s)
device_gpu_line
{ device_configure build-gpu >/dev/null && cmake --build build-gpu --target attention_example gemm_shape_probe -j 16; } >$work/build.log 2>&1 ||
  { grep -E "error" $work/build.log | head -8 | cut -c1-400; mv /tmp/cutlass_examples_hidden .cutlass/examples; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
mv /tmp/cutlass_examples_hidden .cutlass/examples 2>/dev/null
timeout 200 build-gpu/bench/attention/gemm_shape_probe --phase decode --m 1,2,4 --splits --parts 11,14 \
  --kernels cuBLASLt,hooked --samples 15 --warmup-ms 200 --csv $work/probe.csv >$work/probe.log 2>&1
echo "probe: rc $? at $(( $(date +%s) - start )) s"
ex=build-gpu/examples/attention/attention_example
variants="cuBLAS+attn,StreamSync,Strided+TileSync+PDL,Strided+RowSync+PDL"
for shape in gpt3:4x1024 llama:4x1024 gpt3:1x1024 llama:1x1024; do
  model=${shape%:*}; s=${shape#*:}; batch=${s%x*}; cache=${s#*x}
  [ $(( $(date +%s) - start )) -gt 540 ] && { echo "skipped $shape (time)"; continue; }
  csv=$work/attention_${model}_decode_${batch}_1_${cache}.csv
  timeout 60 $ex --model $model --phase decode --batch $batch --seq 1 --cache $cache --interleave --warmup-ms 500 \
    --samples 15 --variants "$variants" --csv $csv >$work/time_${model}_${s}.log 2>&1
  echo "$shape: rc $? at $(( $(date +%s) - start )) s"
  grep -E "FAILED|incorrect|error" $work/time_${model}_${s}.log | head -3
done
python3 bench/attention/summarize_attention.py $work/attention_*.csv >$work/summary.txt 2>&1
cp $work/summary.txt $work/probe.log "$OUT/"
tar czf "$OUT/raw.tgz" -C $work --exclude=build.log .
grep -vE "^$" $work/probe.log | grep -E "floor|cuBLASLt|mma|gemv_64x128_b2 |gemv_64x128_b2_sk|plean" | cut -c1-110 | head -90
cut -c1-200 $work/summary.txt
