#!/usr/bin/env bash
# On the lent GPU machine (from the repo root, carrying .cutlass/ and build-gen/ as scripts/device_fused.sh says):
# the standing of the fused chain against the torch anchors in burst and in sustained timing, as session 11's call 11
# measured it (docs/BENCHMARKS.md). Each winner (model, M, configuration, split) runs in its own process, first with
# the default short timing and then after a --warmup-ms warm-up; torch_baselines.py runs the same two ways. Prints
# bench/mlp/summarize_sustained.py's tables last; CSVs in $OUT.
# Superseded for standings by scripts/device_fused_interleaved.sh: timed one variant after another, as here, each
# meets the clocks the previous ones left (session 20 found session 11's standing order-biased; docs/BENCHMARKS.md).
#   WARMUP_MS   the sustained warm-up, both sides (default 1000; session 11's call 15 found 1 s not yet steady,
#               call 16 used 3000)
#   WINNERS     "model:M:configuration:split ..." (default: the winners of session 11's calls 6 and 11)
#   CUSYNC_FUSED_CONFIGS, CUSYNC_SWIGLU_FUSED_CONFIGS  what to build: must contain the winners' configurations
set -uo pipefail
out=${OUT:-/tmp/cusync-out}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/device_configure.sh"
build=${CUSYNC_BUILD_DIR:-$root/build-gpu}
warmup=${WARMUP_MS:-1000}
winners=${WINNERS:-"gpt3:64:fused_64x96x128_s4_ws:2x1 gpt3:128:fused_128x96x64_s6_coop:2x1
gpt3:256:fused_128x192x64_s5_coop_c2:2x1 gpt3:512:fused_128x192x64_s5_coop_c2:none
gpt3:1024:fused_256x192x64_s3_coop:none gpt3:2048:fused_256x192x64_s3_coop:none gpt3:4096:fused_256x192x64_s3_coop:none
llama:64:fused_64x96x128_s4_ws:none llama:128:fused_64x96x128_s4_ws_n128:none llama:256:fused_128x128x64_s6_coop_c2:none
llama:512:fused_128x176x64_s4_coop_c2_n256:none llama:1024:fused_128x176x64_s4_coop_c2_n256:none
llama:2048:fused_256x176x64_s3_coop:none llama:4096:fused_256x176x64_s3_coop:none"}
export CUSYNC_FUSED_CONFIGS=${CUSYNC_FUSED_CONFIGS:-"64,96,128,4,false;128,96,64,6,true;128,192,64,5,true,2;256,192,64,3,true"}
export CUSYNC_SWIGLU_FUSED_CONFIGS=${CUSYNC_SWIGLU_FUSED_CONFIGS:-"64,96,128,4,false;64,96,128,4,false,1,128;128,128,64,6,true,2;128,176,64,4,true,2,256;256,176,64,3,true"}
export CUSYNC_STOCK_GEMM_CONFIGS=${CUSYNC_STOCK_GEMM_CONFIGS:-"128,256,64,1,coop"}
device_gpu_line | tee "$out/device.txt"
models=$(tr ' ' '\n' <<<"$winners" | cut -d: -f1 | sort -u)
(for w in 0 "$warmup"; do
   for model in $models; do
     ms=$(tr ' ' '\n' <<<"$winners" | awk -F: -v m="$model" '$1 == m {print $2}' | paste -sd, -)
     PYTHONUNBUFFERED=1 python3 "$root/bench/mlp/torch_baselines.py" --model "$model" --m "$ms" --autotune-m 99999 \
       --warmup-ms "$w" --csv "$out/${model}_torch_w$w.csv"
   done
 done) >"$out/torch.log" 2>&1 &
torch_pid=$!
device_configure "$build" >/dev/null || exit 1
cmake --build "$build" --target mlp_fused_example -j "$(nproc)" >/tmp/build.log 2>&1 || { grep error /tmp/build.log | head; exit 1; }
wait "$torch_pid" || { tail -5 "$out/torch.log"; exit 1; }
header="warmup_ms,M,config,variant,us,relative_error,correct,waves_gemm1,waves_gemm2,avoided_wait_kernel"
for model in $models; do echo "$header" >"$out/${model}_fused.csv"; done
status=0
for winner in $winners; do
  IFS=: read -r model m config split <<<"$winner"
  for w in 0 "$warmup"; do
    "$build/examples/mlp/mlp_fused_example" --model "$model" --m "$m" --configs "$config" --splits "$split" \
      --orders g4,g8,g4:g8 --warmup-ms "$w" --csv /tmp/sustained.csv >/tmp/sustained.log 2>&1 ||
      { echo "FAILED: $winner, warm-up $w ms"; tail -3 /tmp/sustained.log; status=1; }
    tail -n +2 /tmp/sustained.csv | sed "s/^/$w,/" >>"$out/${model}_fused.csv"
  done
done
: >"$out/summary.txt"
for model in $models; do
  echo "== $model" >>"$out/summary.txt"
  python3 "$root/bench/mlp/summarize_sustained.py" "$out/${model}_fused.csv" "$out/${model}_torch_w0.csv" \
    "$out/${model}_torch_w$warmup.csv" >>"$out/summary.txt" 2>&1 || status=1
done
cat "$out/summary.txt"
exit $status
