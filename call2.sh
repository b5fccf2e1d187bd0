#!/usr/bin/env bash
# Session 16, device call 2: stream-K in groups of row tiles (commit 015c114; call 1 ran it ungrouped: 127 us at GPT-3 QKV 512).
# with every split the chain would try (gemm_shape_probe --splits: last-wave split-K on the clustered one-tile
# kernel, stream-K on the persistent one, cuBLASLt); the prompt stress test (stream-K QKV and output GEMMs under
# random attention delays); then the chains at the eight prompt shapes, burst-timed search (0.3 s warm-up).
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
source scripts/device_configure.sh
device_gpu_line | tee "$out/device.txt"
export CUSYNC_ATTENTION_PROMPT_QKV_CONFIGS="128,128,64,7,true,1,false,2;128,128,64,6,true,1,true"
export CUSYNC_ATTENTION_PROMPT_OUTPUT_CONFIGS="128,256,64,4,true,1,true;256,128,64,4,true,1,true;256,128,64,4,true,1,false,2"
export CUSYNC_ATTENTION_DECODE_QKV_CONFIGS="64,128,128,4,false,1,true"
export CUSYNC_ATTENTION_DECODE_OUTPUT_CONFIGS="64,128,128,4,false,1,true"
export CUSYNC_ATTENTION_DECODE_GEMV_CONFIGS="4,false,128"
export CUSYNC_STOCK_GEMM_CONFIGS="128,128,64,2,pingpong"
device_configure build-gpu >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
start=$(date +%s)
cmake --build build-gpu --target attention_example gemm_shape_probe attention_prompt_stress -j 16 >"$out/build.log" 2>&1
build_rc=$?
echo "build: rc $build_rc in $(( $(date +%s) - start )) s" | tee -a "$out/device.txt"
[ $build_rc -eq 0 ] || { grep -E "error" "$out/build.log" | head; tail -30 "$out/build.log"; exit 1; }
timeout 120 build-gpu/bench/attention/gemm_shape_probe --m 512,1024,2048 --splits --samples 9 --csv "$out/probe.csv" >"$out/probe.txt" 2>&1
echo "probe rc $? at $(( $(date +%s) - start )) s" | tee -a "$out/device.txt"
timeout 120 build-gpu/examples/attention/attention_prompt_stress --executions 4000 >"$out/stress.txt" 2>&1
echo "prompt stress: rc $? at $(( $(date +%s) - start )) s" | tee -a "$out/device.txt"
grep -E "cases|executions," "$out/stress.txt" | grep -v "^  running" | tail -3 | tee -a "$out/device.txt"
grep -c "sk132g" "$out/stress.txt" | sed 's/^/stress rows with stream-K: /' | tee -a "$out/device.txt"
ex=build-gpu/examples/attention/attention_example
for model in gpt3 llama; do
  for shape in "1 512" "1 1024" "2 1024" "1 2048"; do
    read -r batch seq <<<"$shape"
    [ $(( $(date +%s) - start )) -gt 540 ] && { echo "skipped $model $batch $seq (time)" | tee -a "$out/device.txt"; continue; }
    timeout 45 $ex --model $model --phase prompt --batch $batch --seq $seq --cache 0 --warmup-ms 300 \
      --csv "$out/chain_${model}_${batch}_${seq}.csv" \
      --gemm-configs 128x128x64_s7_coop_b1_c2x1,128x128x64_s6_coop_b1_p,128x256x64_s4_coop_b1_p,256x128x64_s4_coop_b1_c2x1 --variants StreamSync,Strided+TileSync+PDL >>"$out/chains.log" 2>&1
    echo "chain $model ${batch}x$seq: rc $? at $(( $(date +%s) - start )) s" | tee -a "$out/device.txt"
  done
done
tar czf "$out/raw.tgz" -C "$out" $(cd "$out" && ls chain_*.csv chains.log probe.csv 2>/dev/null) && (cd "$out" && rm -f chain_*.csv)
gzip -f "$out/build.log" "$out/stress.txt" "$out/chains.log"
grep -v "^$" "$out/probe.txt" | head -90
