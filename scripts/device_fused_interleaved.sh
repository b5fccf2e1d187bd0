#!/usr/bin/env bash
# On the lent GPU machine (from the repo root, carrying .cutlass/ and build-gen/ as scripts/device_fused.sh says):
# the fused chain's standing with interleaved timing on both sides. The example builds first; then, per model,
# torch_baselines.py --interleave times torch's variants of each M together (one warm-up of WARMUP_MS over all of
# them, then interleaved rounds); then, per winner (model, M), mlp_fused_example --interleave times cuBLASLt, the
# fused chain (both unit waits, g4 and g8 orders) and the same kernels stream-ordered together the same way, in its
# own process. Nothing is timed while the build runs: a host busy on every core delays graph launches, and the
# GPU's wait for them was counted (session 20: torch at GPT-3 M = 256 165 us during a build, 133 after).
# Every variant is checked before and after timing. Prints bench/mlp/summarize_fused.py's table per model last (its
# cross-process line compares the two processes' cuBLASLt); CSVs and logs in $OUT.
# Why interleaved: timed one after another, each variant meets the clocks and temperature the previous ones left
# (docs/BENCHMARKS.md, sessions 11 and 19); sessions 11-15's sustained standings timed variants in sequence.
#   MODELS      gpt3 and/or llama (default both)
#   WARMUP_MS   the interleaved warm-up per M, both sides (default 2000)
#   SAMPLES     timed rounds per M (default 15)
#   WINNERS     "model:M:configurations:splits:skinny-splits ..." (lists comma-separated; "-" for none; default: the
#               winners of session 11's calls 6, 11 and 12, at M = 256 session 20's call 8, at GPT-3 M = 128
#               session 21's call 1, at LLaMA M = 128 session 36's call 3 (beside the H100's) and at LLaMA M = 64
#               its call 4's 2 x 1 split (beside the unsplit chain), at M = 1 session 26's
#               whole-rows GEMV beside session 25's 2x1 gemv_32_p4, at M = 8 session 27's tensor-core whole-rows GEMV
#               beside the fused chain)
#   TORCH_AUTOTUNE_M_gpt3, TORCH_AUTOTUNE_M_llama  M for torch.compile max-autotune (default 1 and 1,64: where it was
#               the best anchor in session 20; each costs about a minute of autotuning)
#   SKIP_TORCH=1, SKIP_BUILD=1
#   CUSYNC_FUSED_CONFIGS, CUSYNC_SWIGLU_FUSED_CONFIGS  what to build: must contain the winners' configurations
set -uo pipefail
out=${OUT:-/tmp/cusync-out}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/device_configure.sh"
build=${CUSYNC_BUILD_DIR:-$root/build-gpu}
warmup=${WARMUP_MS:-2000}
samples=${SAMPLES:-15}
models=${MODELS:-gpt3 llama}
winners=${WINNERS:-"gpt3:1:gemv_rows_p4,gemv_32_p4:none:1x1,2x1 gpt3:8:fused_64x128x128_s4_ws,gemv_rows_mma_p2:5x3:1x1
gpt3:64:fused_64x96x128_s4_ws:2x1:- gpt3:128:fused_64x96x64_s10_ws_c2_n192_gemm2s6,fused_128x96x64_s6_coop:none,2x1:-
gpt3:256:fused_128x96x64_s7_coop_c2_n192_gemm2s5,fused_128x192x64_s5_coop_c2:none,2x1:- gpt3:512:fused_128x192x64_s5_coop_c2:none:-
gpt3:1024:fused_256x192x64_s3_coop:none:- gpt3:2048:fused_256x192x64_s3_coop:none:-
gpt3:4096:fused_256x192x64_s3_coop:none:-
llama:1:gemv_rows_p4,gemv_32_p4:none:1x1,2x1 llama:8:fused_64x128x128_s4_ws,gemv_rows_mma_p2:3x2:1x1 llama:64:fused_64x96x128_s4_ws:none,2x1:-
llama:128:fused_64x96x64_s10_ws_c2_n128_gemm2s8,fused_64x96x128_s4_ws_n128:none:- llama:256:fused_128x96x64_s7_coop_c2_n128_gemm2s6,fused_128x128x64_s6_coop_c2:none:-
llama:512:fused_128x176x64_s4_coop_c2_n256:none:- llama:1024:fused_128x176x64_s4_coop_c2_n256:none:-
llama:2048:fused_256x176x64_s3_coop:none:- llama:4096:fused_256x176x64_s3_coop:none:-"}
export CUSYNC_FUSED_CONFIGS=${CUSYNC_FUSED_CONFIGS:-"64,128,128,4,false;64,96,128,4,false;128,96,64,6,true;128,192,64,5,true,2;128,96,64,7,true,2,192,cutlass,64,5;64,96,64,10,false,2,192,cutlass,64,6;256,192,64,3,true"}
export CUSYNC_SWIGLU_FUSED_CONFIGS=${CUSYNC_SWIGLU_FUSED_CONFIGS:-"64,128,128,4,false;64,96,128,4,false;64,96,128,4,false,1,128;128,128,64,6,true,2;128,176,64,4,true,2,256;128,96,64,7,true,2,128,cutlass,64,6;256,176,64,3,true;64,96,64,10,false,2,128,cutlass,64,8"}
export CUSYNC_STOCK_GEMM_CONFIGS=${CUSYNC_STOCK_GEMM_CONFIGS:-"128,256,64,1,coop"}
device_gpu_line | tee "$out/device.txt"
winner_ms() { tr ' ' '\n' <<<"$winners" | awk -F: -v m="$1" '$1 == m {print $2}' | paste -sd, -; }
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  start=$(date +%s)
  { device_configure "$build" >/dev/null && cmake --build "$build" --target mlp_fused_example -j "$(nproc)"; } \
    >/tmp/build.log 2>&1 || { grep -E "error" /tmp/build.log | head; exit 1; }
  echo "build: $(( $(date +%s) - start )) s"
fi
if [ "${SKIP_TORCH:-0}" != 1 ]; then
  for model in $models; do
    autotune_var=TORCH_AUTOTUNE_M_$model
    default_autotune=$([ "$model" = gpt3 ] && echo 1 || echo 1,64)
    PYTHONUNBUFFERED=1 python3 "$root/bench/mlp/torch_baselines.py" --model "$model" --m "$(winner_ms "$model")" \
      --autotune-m "${!autotune_var:-$default_autotune}" --budget-s 400 --interleave --warmup-ms "$warmup" \
      --samples "$samples" --csv "$out/${model}_torch.csv" >>"$out/torch.log" 2>&1
    echo "torch $model: rc $?"
  done
  grep -E "FAILED|Error" "$out/torch.log" | head -5
fi
header="M,config,variant,us,relative_error,correct,waves_gemm1,waves_gemm2,avoided_wait_kernel"
for model in $models; do echo "$header" >"$out/${model}_fused.csv"; done
status=0
for winner in $winners; do
  IFS=: read -r model m configs splits skinny <<<"$winner"
  [[ " $models " == *" $model "* ]] || continue
  args=(--model "$model" --m "$m" --configs "$configs" --orders g4,g8 --interleave --warmup-ms "$warmup"
        --samples "$samples" --csv /tmp/interleaved.csv)
  [ "$splits" != - ] && args+=(--splits "$splits")
  [ "$skinny" != - ] && args+=(--skinny-splits "$skinny")
  timeout 150 "$build/examples/mlp/mlp_fused_example" "${args[@]}" >/tmp/interleaved.log 2>&1 ||
    { echo "FAILED: $winner (rc $?)"; tail -3 /tmp/interleaved.log; status=1; }
  grep -E "^measured ceilings" /tmp/interleaved.log | sed "s/^/$model M=$m: /" >>"$out/ceilings.txt"
  cat /tmp/interleaved.log >>"$out/${model}_fused.log"
  tail -n +2 /tmp/interleaved.csv >>"$out/${model}_fused.csv"
done
: >"$out/summary.txt"
for model in $models; do
  echo "== $model (interleaved, warm-up $warmup ms per M, $samples rounds)" >>"$out/summary.txt"
  python3 "$root/bench/mlp/summarize_fused.py" "$out/${model}_fused.csv" "$out/${model}_torch.csv" \
    >>"$out/summary.txt" 2>&1 || status=1
done
cat "$out/summary.txt"
exit $status
