#!/usr/bin/env bash
# Session 16, device call 9: the output GEMM is the largest stage gap left at GPT-3's 512-1024 tokens (call 5: 46.2
# against cuBLAS's 32.2 us), and CUTLASS's stock pingpong kernel matches cuBLAS there. Nsight Compute on GPT-3's
# output GEMM at 512 tokens (K = 1536): the hooked pingpong and cooperative persistent kernels against stock pingpong.
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
cmake --build build-gpu --target gemm_shape_probe -j 16 >"$out/build.log" 2>&1 || { grep error "$out/build.log" | head; exit 1; }
echo "build done at $(( $(date +%s) - start )) s" | tee -a "$out/device.txt"
p=build-gpu/bench/attention/gemm_shape_probe
timeout 60 $p --m 512,1024,2048 --shapes _out_ --group-rows 1,16 --samples 9 > "$out/probe.txt" 2>&1; echo "probe rc $?" | tee -a "$out/device.txt"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats"
run_ncu() {  # name, kernel regex, probe arguments...
  local name=$1 regex=$2; shift 2
  timeout 100 $NCU -k regex:$regex -c 1 $sections $p --samples 3 --m 512 --shapes gpt3_out "$@" > "$out/ncu_$name.txt" 2>&1
  echo "ncu $name rc $?" | tee -a "$out/device.txt"
}
run_ncu hooked_pingpong tileSyncGemmEntry --kernels pingpong
run_ncu hooked_coop tileSyncGemmEntry --kernels 128x256x64_s4_coop
run_ncu stock_pingpong_1x1 device_kernel --kernels c1x1_pingpong
echo "done at $(( $(date +%s) - start )) s" | tee -a "$out/device.txt"
gzip -f "$out/build.log"
grep -E "_out_|cuBLAS|cutlass_|hooked_" "$out/probe.txt" | head -40
for f in "$out"/ncu_*.txt; do echo "== $f"; grep -E "  Duration|SM Frequency|DRAM Throughput|L2 Hit|Compute \(SM\) Throughput|Issued Warp Per|No Eligible|Warp Cycles Per Issued|Grid Size|Dynamic Shared" "$f" | head -12; done
