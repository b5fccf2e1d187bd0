#!/usr/bin/env bash
# Session 28, call 6 (issue 14): the final token-generation standing on the default GEMV list (gemv_64x128_b3_rows
# added after call 5), the decode CUTLASS lists cut to the lean GEMM (no other CUTLASS configuration won a decode
# chain in call 4): B = 1, 2, 4 of both models, attention_example --interleave (1 s warm-up, 15 rounds, every variant
# checked), torch's decode baselines in another process of the same call, one table.
set -uo pipefail
cd "$(dirname "$0")"
out=${OUT:-/tmp/out}; mkdir -p "$out"; work=/tmp/w6; rm -rf $work; mkdir -p $work
mv .cutlass/examples /tmp/cutlass_examples_hidden 2>/dev/null
source scripts/device_configure.sh
export CUSYNC_ATTENTION_PROMPT_QKV_CONFIGS="128,144,64,6,true,1,false,2"
export CUSYNC_ATTENTION_PROMPT_OUTPUT_CONFIGS="128,256,64,4,true,1,true"
export CUSYNC_STOCK_GEMM_CONFIGS="128,144,64,2,coop"
export CUSYNC_ATTENTION_DECODE_QKV_CONFIGS="64,128,128,4,false,1,lean"
export CUSYNC_ATTENTION_DECODE_OUTPUT_CONFIGS="64,128,128,4,false,1,lean"
start=$(date +%s)
device_gpu_line
{ device_configure build-gpu >/dev/null && cmake --build build-gpu --target attention_example -j 16; } >$work/build.log 2>&1 ||
  { grep -E "error" $work/build.log | head -8 | cut -c1-400; mv /tmp/cutlass_examples_hidden .cutlass/examples; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
mv /tmp/cutlass_examples_hidden .cutlass/examples 2>/dev/null
ex=build-gpu/examples/attention/attention_example
for model in gpt3 llama; do for s in 1x1024 2x1024 4x1024 4x2048; do
  batch=${s%x*}; cache=${s#*x}
  [ $(( $(date +%s) - start )) -gt 260 ] && { echo "skipped $model $s (time)"; continue; }
  csv=$work/attention_${model}_decode_${batch}_1_${cache}.csv
  timeout 60 $ex --model $model --phase decode --batch $batch --seq 1 --cache $cache --interleave --warmup-ms 1000 \
    --samples 15 --csv $csv >$work/time_${model}_${s}.log 2>&1
  echo "$model $s: rc $? at $(( $(date +%s) - start )) s $(grep -cE "FAILED|incorrect" $work/time_${model}_${s}.log) failed"
done; done
left=$(( 330 - ($(date +%s) - start) ))
echo "torch budget: $left s"
PYTHONUNBUFFERED=1 timeout $left python3 bench/attention/torch_attention_baselines.py --csv $work/attention_torch.csv \
  --model gpt3,llama --decode 1x1024,2x1024,4x1024,4x2048 --prompt "" --warmup-ms 1000 >$work/torch.log 2>&1
echo "torch: rc $?"
torch_csv=(); [ -s $work/attention_torch.csv ] && torch_csv=(--torch $work/attention_torch.csv)
python3 bench/attention/summarize_attention.py "${torch_csv[@]}" $work/attention_*_decode_*.csv >$work/summary.txt 2>&1
cp $work/summary.txt "$OUT/"
tar czf "$OUT/raw.tgz" -C $work --exclude=build.log .
cut -c1-300 $work/summary.txt
