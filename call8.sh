#!/usr/bin/env bash
# Session 12, device call 8 (not committed): block traces of the decode chains.
set -uo pipefail
export CUSYNC_ATTENTION_PROMPT_QKV_CONFIGS="128,128,64,6,true,1,false"
export CUSYNC_ATTENTION_PROMPT_OUTPUT_CONFIGS="128,256,64,4,true,1,true"
source scripts/device_configure.sh
device_configure build-gpu > /dev/null || exit 1
cmake --build build-gpu --target attention_example -j 16 > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
ex=build-gpu/examples/attention/attention_example
for run in "gpt3 1 1024" "llama 1 1024" "gpt3 4 2048" "llama 4 2048"; do
  read -r model b c <<<"$run"
  echo "=== $model B=$b S'=$c"
  $ex --model $model --phase decode --batch $b --cache $c \
    --variants StreamSync,PDL-GridSync,Strided+TileSync+PDL,Strided+TileSync+WaitKernel \
    --gemm-configs gemv_64x128_b4,gemv_64x128_b2,gemv_64x32_b4,gemv_64x32_b2_sw \
    --trace "$OUT/trace_${model}_${b}_${c}.csv" --csv /tmp/t.csv > "$OUT/log_${model}_${b}.txt" 2>&1
  echo "rc $?"
  grep -E "^trace|^  (qkv|attn|out) |^(StreamSync|PDL-GridSync|Strided\+TileSync\+PDL|Strided\+TileSync\+WaitKernel) +[0-9.]+ +[0-9.]+x" "$OUT/log_${model}_${b}.txt"
done
cd "$OUT" && tar czf raw.tgz trace_*.csv log_*.txt && rm -f trace_*.csv log_*.txt
