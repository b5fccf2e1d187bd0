#!/usr/bin/env bash
# Session 12, device call 9 (not committed): QKV GEMV without tickets, the attention stage's trigger after its wait.
set -uo pipefail
export CUSYNC_ATTENTION_PROMPT_QKV_CONFIGS="128,128,64,6,true,1,false"
export CUSYNC_ATTENTION_PROMPT_OUTPUT_CONFIGS="128,256,64,4,true,1,true"
source scripts/device_configure.sh
device_configure build-gpu > /dev/null || exit 1
cmake --build build-gpu --target attention_example attention_decode_stress -j 16 > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
ex=build-gpu/examples/attention/attention_example
timeout 200 build-gpu/examples/attention/attention_decode_stress --executions 20000 > "$OUT/stress.log" 2>&1
echo "stress rc $?"; tail -1 "$OUT/stress.log"
for run in "gpt3 1 1024" "llama 1 1024" "gpt3 4 2048" "llama 4 2048"; do
  read -r model b c <<<"$run"
  for trig in start after-wait; do
    echo "=== $model B=$b S'=$c trigger $trig"
    $ex --model $model --phase decode --batch $b --cache $c --decode-trigger $trig \
      --variants StreamSync,PDL-GridSync,Strided+TileSync+PDL,Strided+RowSync+PDL \
      --gemm-configs 64x128x128_s4_ws_b1_p,gemv_64x128_b4,gemv_64x128_b2,gemv_64x32_b4,gemv_64x32_b2_sw \
      --trace "$OUT/trace_${model}_${b}_${trig}.csv" --csv "$OUT/t_${model}_${b}_${trig}.csv" > "$OUT/log_${model}_${b}_${trig}.txt" 2>&1
    echo "rc $?"
    grep -E "^trace|^  (qkv|attn|out) |^(StreamSync|PDL-GridSync|Strided\+TileSync\+PDL|Strided\+RowSync\+PDL) +[0-9.]+ +[0-9.]+x" "$OUT/log_${model}_${b}_${trig}.txt"
  done
done
cd "$OUT" && tar czf raw.tgz trace_*.csv log_*.txt t_*.csv stress.log && rm -f trace_*.csv log_*.txt t_*.csv stress.log
