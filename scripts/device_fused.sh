#!/usr/bin/env bash
# On the lent GPU machine (through the device tool, from the repo root, carrying .cutlass/ and build-gen/, which
# holds cusyncgen's headers for examples/mlp/gpt3_mlp.dep and gpt3_mlp_fused.dep made here: the GPU machine has no
# isl, e.g. `for s in gpt3_mlp gpt3_mlp_fused; do build/tools/cusyncgen examples/mlp/$s.dep -o build-gen; done`): builds
# the fused-chain MLP example with all cores, then runs the torch baselines (TORCH_DURING_BUILD=1: during the build,
# faster but biased), then the example (never both on the GPU at once), and prints one table.
# Writes CSVs, logs and the plot under $OUT (per model: MODEL_torch.csv, MODEL_mlp_fused.csv, MODEL_summary.txt,
# MODEL_mlp_fused.png; one checks.log).
#   MODELS            models to run, of gpt3 and llama (default: gpt3)
#   TORCH_AUTOTUNE_M  sizes for torch.compile max-autotune (default: all; each costs about a minute of autotuning);
#                     TORCH_AUTOTUNE_M_gpt3 / TORCH_AUTOTUNE_M_llama override it per model
#   SKIP_CHECK=1      no separate check-only pass (the timed run still checks every variant before timing it)
#   TORCH_BUDGET_S    no new max-autotune shape after this many seconds (default 240)
#   SKIP_TORCH=1      no torch baselines
#   TORCH_WARMUP_MS   torch_baselines.py's --warmup-ms (pass the same --warmup-ms to the example for a fair pair)
#   SKIP_STRESS=1     no stress test and no sanitizers; SANITIZERS="" (or a subset) for fewer sanitizer runs;
#                     SANITIZE_CONFIGS the configurations they run at M = 1 (default fused_64x128x128_s4_ws)
#   CUSYNC_FUSED_CONFIGS  tile configurations to build (examples/gemm/CMakeLists.txt; device_configure.sh passes
#                         it and the other CUSYNC_*_CONFIGS on)
# Extra arguments go to mlp_fused_example.
set -uo pipefail
out=${OUT:-/tmp/cusync-out}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/device_configure.sh"
build=${CUSYNC_BUILD_DIR:-$root/build-gpu}
device_gpu_line | tee "$out/device.txt"
ms=${MS:-1,8,64,128,256,512,1024,2048,4096}
models=${MODELS:-gpt3}
run_torch() {
  for model in $models; do
    autotune_var=TORCH_AUTOTUNE_M_$model
    autotune=${!autotune_var:-${TORCH_AUTOTUNE_M:-}}
    PYTHONUNBUFFERED=1 python3 "$root/bench/mlp/torch_baselines.py" --model "$model" --csv "$out/${model}_torch.csv" \
      --m "$ms" ${autotune:+--autotune-m "$autotune"} --budget-s "${TORCH_BUDGET_S:-240}" \
      --warmup-ms "${TORCH_WARMUP_MS:-0}"
  done >"$out/torch.log" 2>&1
}
# The torch baselines run after the build unless TORCH_DURING_BUILD=1: a host busy compiling on every core delays
# graph launches, and torch timed 163-165 us at GPT-3 M = 256 during a build against 133 for its kernels (session 20).
torch_pid=
if [ "${SKIP_TORCH:-0}" != 1 ] && [ "${TORCH_DURING_BUILD:-0}" = 1 ]; then
  run_torch &
  torch_pid=$!
fi
device_configure "$build" >/dev/null || exit 1
start=$(date +%s)
cmake --build "$build" --target mlp_fused_example mlp_fused_stress -j "$(nproc)" >/tmp/build.log 2>&1
build_rc=$?
grep -E "error|C7510|warning" /tmp/build.log | head -30
echo "build: rc $build_rc in $(( $(date +%s) - start )) s"
[ -n "$torch_pid" ] && { wait "$torch_pid"; tail -3 "$out/torch.log"; }
[ $build_rc -eq 0 ] || exit 1
if [ "${SKIP_TORCH:-0}" != 1 ] && [ -z "$torch_pid" ]; then
  run_torch
  tail -3 "$out/torch.log"
fi
# Every variant at every M checked first (a hang is cut by the timeout and named by the verbose lines), then timed.
: >"$out/checks.log"
for model in $models; do
  [ "${SKIP_CHECK:-0}" = 1 ] && break
  timeout "${CHECK_TIMEOUT_S:-180}" "$build/examples/mlp/mlp_fused_example" --model "$model" --m "$ms" --check-only \
    --verbose --csv /tmp/mlp_fused_check.csv "$@" >>"$out/checks.log" 2>&1
  check_rc=$?
  tail -3 "$out/checks.log"
  echo "check-only $model: rc $check_rc" | tee -a "$out/checks.log"
  [ $check_rc -eq 0 ] || exit 1
done
# Stress (random per-unit delays, every execution checked, graph replays without reset) and compute-sanitizer's
# race and synchronization checks on a small fused run; all appended to checks.log. racecheck also checks cuBLAS's
# own nvjet kernels (the reference and the baseline) and reports shared-memory hazards inside them (2026-11-23:
# 4, all in nvjet, none in cusync's kernels); excluding them (--kernel-name-exclude kns=nvjet) crashed the tool.
if [ "${SKIP_STRESS:-0}" != 1 ]; then
  timeout 240 "$build/examples/mlp/mlp_fused_stress" --executions "${STRESS_EXECUTIONS:-100000}" 2>&1 | tee -a "$out/checks.log" | tail -3
  echo "stress: rc ${PIPESTATUS[0]}"
  for tool in ${SANITIZERS-racecheck synccheck}; do
    timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 "$build/examples/mlp/mlp_fused_example" --m 1 \
      --check-only --configs "${SANITIZE_CONFIGS:-fused_64x128x128_s4_ws}" --csv /tmp/sanitize.csv >>"$out/checks.log" 2>&1
    echo "compute-sanitizer $tool: rc $?" | tee -a "$out/checks.log"
  done
fi
rc=0
for model in $models; do
  timeout "${TIME_TIMEOUT_S:-300}" "$build/examples/mlp/mlp_fused_example" --model "$model" --m "$ms" \
    --csv "$out/${model}_mlp_fused.csv" "$@" >"/tmp/${model}_mlp_fused.log" 2>&1
  model_rc=$?
  [ $model_rc -eq 0 ] || rc=$model_rc
  grep -E "^device|ceilings|FAILED|all results" "/tmp/${model}_mlp_fused.log"
  cat "/tmp/${model}_mlp_fused.log" >>"$out/checks.log"
  if [ -f "$out/${model}_mlp_fused.csv" ]; then
    plot=""
    python3 -c "import matplotlib" 2>/dev/null && plot="$out/${model}_mlp_fused.png"
    torch_csv=""
    [ -f "$out/${model}_torch.csv" ] && torch_csv="$out/${model}_torch.csv"
    echo "== $model (rc $model_rc)" | tee -a "$out/summary.txt"
    python3 "$root/bench/mlp/summarize_fused.py" "$out/${model}_mlp_fused.csv" $torch_csv ${torch_csv:+$plot} | tee -a "$out/summary.txt"
  fi
done
exit $rc
