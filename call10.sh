#!/usr/bin/env bash
# Session 16, device call 10: calls 7-9 found the hooked persistent GEMMs' tile order doubling their DRAM traffic
# (row-major) and taking 10-23% off their time column-major. The chain's QKV GEMM runs in 2x1 clusters, whose order
# the probe never varied: the QKV GEMMs alone with their clusters taken 1, 4 or 16 rows at a time (with every split),
# then the GPT-3 chains at 1024-2048 tokens with --qkv-group-rows 1 and 16 (burst search).
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
source scripts/device_configure.sh
device_gpu_line | tee "$out/device.txt"
export CUSYNC_ATTENTION_PROMPT_QKV_CONFIGS="128,128,64,7,true,1,false,2"
export CUSYNC_ATTENTION_PROMPT_OUTPUT_CONFIGS="128,128,64,6,pingpong,1,true;128,256,64,4,true,1,true"
export CUSYNC_ATTENTION_DECODE_QKV_CONFIGS="64,128,128,4,false,1,true"
export CUSYNC_ATTENTION_DECODE_OUTPUT_CONFIGS="64,128,128,4,false,1,true"
export CUSYNC_ATTENTION_DECODE_GEMV_CONFIGS="4,false,128"
export CUSYNC_STOCK_GEMM_CONFIGS="128,128,64,1,pingpong;128,128,64,2,pingpong"
device_configure build-gpu >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
start=$(date +%s)
cmake --build build-gpu --target gemm_shape_probe attention_example -j 16 >"$out/build.log" 2>&1 || { grep error "$out/build.log" | head; exit 1; }
echo "build done at $(( $(date +%s) - start )) s" | tee -a "$out/device.txt"
timeout 90 build-gpu/bench/attention/gemm_shape_probe --m 512,1024,2048 --shapes _qkv_ --group-rows 1,4,16 --splits \
  --kernels hooked --samples 9 > "$out/probe.txt" 2>&1; echo "probe rc $? at $(( $(date +%s) - start )) s" | tee -a "$out/device.txt"
ex=build-gpu/examples/attention/attention_example
for shape in "1 1024" "2 1024" "1 2048"; do
  read -r batch seq <<<"$shape"
  for g in 1 16; do
    timeout 40 $ex --model gpt3 --phase prompt --batch $batch --seq $seq --cache 0 --warmup-ms 300 --qkv-group-rows $g \
      --gemm-configs 128x128x64_s7_coop_b1_c2x1,128x256x64_s4_coop_b1_p --split-kinds unsplit,last-wave,last-wave-sum \
      --csv "$out/chain_${batch}_${seq}_g$g.csv" --variants StreamSync,Strided+TileSync+PDL >>"$out/chains.log" 2>&1
    echo "chain ${batch}x$seq g$g: rc $? at $(( $(date +%s) - start )) s" | tee -a "$out/device.txt"
  done
done
tar czf "$out/raw.tgz" -C "$out" $(cd "$out" && ls chain_*.csv) && (cd "$out" && rm -f chain_*.csv)
gzip -f "$out/build.log" "$out/chains.log"
grep -E "_qkv_|cuBLAS|c2x1 |c2x1_g4 |c2x1_g16 |c2x1.*w132 |c2x1.*w264 |c2x1.*w528 |c2x1.*_sum" "$out/probe.txt" | head -60
