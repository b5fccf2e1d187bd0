#!/usr/bin/env bash
# Session 16, device call 3: why stream-K on the persistent hooked GEMM takes 126 us at GPT-3's QKV GEMM (512
# tokens) where 1.09 tiles of k-blocks per block should take about 90 (calls 1-2). CUTLASS's own Stream-K GEMM of the
# same tile beside it (gemm_shape_probe), and block traces of the QKV stage in StreamSync's chain: the persistent
# GEMM's stream-K (one record per block: its first unit's start and last MMA, its last unit's end) against the
# clustered one-tile GEMM with its last wave split.
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
source scripts/device_configure.sh
device_gpu_line | tee "$out/device.txt"
export CUSYNC_ATTENTION_PROMPT_QKV_CONFIGS="128,128,64,7,true,1,false,2;128,128,64,6,true,1,true"
export CUSYNC_ATTENTION_PROMPT_OUTPUT_CONFIGS="128,256,64,4,true,1,true"
export CUSYNC_ATTENTION_DECODE_QKV_CONFIGS="64,128,128,4,false,1,true"
export CUSYNC_ATTENTION_DECODE_OUTPUT_CONFIGS="64,128,128,4,false,1,true"
export CUSYNC_ATTENTION_DECODE_GEMV_CONFIGS="4,false,128"
export CUSYNC_STOCK_GEMM_CONFIGS="128,128,64,2,pingpong"
device_configure build-gpu >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
start=$(date +%s)
cmake --build build-gpu --target attention_example gemm_shape_probe -j 16 >"$out/build.log" 2>&1
build_rc=$?
echo "build: rc $build_rc in $(( $(date +%s) - start )) s" | tee -a "$out/device.txt"
[ $build_rc -eq 0 ] || { grep -E "error" "$out/build.log" | head; tail -30 "$out/build.log"; exit 1; }
timeout 90 build-gpu/bench/attention/gemm_shape_probe --m 512,1024 --splits --samples 9 --csv "$out/probe.csv" >"$out/probe.txt" 2>&1
echo "probe rc $? at $(( $(date +%s) - start )) s" | tee -a "$out/device.txt"
ex=build-gpu/examples/attention/attention_example
for model in gpt3 llama; do
  timeout 60 $ex --model $model --phase prompt --batch 1 --seq 512 --cache 0 --warmup-ms 300 --variants StreamSync \
    --gemm-configs 128x128x64_s6_coop_b1_p,128x256x64_s4_coop_b1_p --split-kinds unsplit,stream-k \
    --trace "$out/trace_${model}_streamk.csv" --csv /tmp/t.csv >"$out/trace_${model}_streamk.log" 2>&1
  echo "trace $model stream-k: rc $? at $(( $(date +%s) - start )) s" | tee -a "$out/device.txt"
  timeout 60 $ex --model $model --phase prompt --batch 1 --seq 512 --cache 0 --warmup-ms 300 --variants StreamSync \
    --gemm-configs 128x128x64_s7_coop_b1_c2x1,128x256x64_s4_coop_b1_p --split-kinds unsplit,last-wave \
    --trace "$out/trace_${model}_lastwave.csv" --csv /tmp/t.csv >"$out/trace_${model}_lastwave.log" 2>&1
  echo "trace $model last-wave: rc $? at $(( $(date +%s) - start )) s" | tee -a "$out/device.txt"
done
python3 bench/attention/summarize_block_trace.py "$out"/trace_*.csv > "$out/trace_summary.txt" 2>&1
tar czf "$out/raw.tgz" -C "$out" $(cd "$out" && ls trace_*.csv trace_*.log probe.csv) && (cd "$out" && rm -f trace_*.csv trace_*.log)
gzip -f "$out/build.log"
grep -E "qkv_512|qkv_1024|streamk|cuBLAS|c2x1_sk5w|c2x1_sk11w|c2x1_sk2w|c2x1  " "$out/probe.txt" | head -30
head -60 "$out/trace_summary.txt"
