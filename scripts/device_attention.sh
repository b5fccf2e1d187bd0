#!/usr/bin/env bash
# On the lent GPU machine (through the device tool, from the repo root, carrying .cutlass/ and build-gen/): builds
# attention_example with all cores while the torch baselines run (they use the GPU, the build only the CPU), then
# checks every variant at three sizes per phase and model, then times the example at every shape, and prints one
# table last (bench/attention/summarize_attention.py). Writes under $OUT: device.txt, build.log, checks.log,
# torch.log, attention_torch.csv, one attention_MODEL_PHASE_B_S_CACHE.csv per timed shape, time.log, summary.txt,
# attention.png (if matplotlib is there). Expected to fit one 10-minute device call (not yet measured: the build is
# 12 CUTLASS instances; torch.compile compiles once per shape while the build runs; 12 check and 18 timed runs).
#
# The GPU machine has no isl, so cusyncgen's headers are made on the CPU machine and carried in build-gen/. The
# build configures every example, so build-gen needs the headers of every spec they use:
#   for s in examples/mlp/gpt3_mlp examples/mlp/llama_mlp examples/mlp/gpt3_mlp_fused examples/mlp/llama_mlp_fused \
#            examples/conv2d/conv2d_3x3 examples/attention/attention_decode examples/attention/attention_prompt; do
#     build-cpu/tools/cusyncgen $s.dep -o build-gen; done
#   MODELS          of gpt3 and llama (default: both)
#   DECODE          token-generation shapes BxS' (default 1x512 1x1024 1x2048 2x1024 4x1024 4x2048)
#   PROMPT          prompt shapes BxS (default 1x512 2x512 4x512)
#   SKIP_TORCH=1    no torch baselines; NO_COMPILE=1 torch eager only
# Extra arguments go to every timed attention_example run (e.g. --samples 50).
set -uo pipefail
out=${OUT:-/tmp/cusync-out}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUSYNC_BUILD_DIR:-$root/build-gpu}
for header in gpt3_mlp llama_mlp gpt3_mlp_fused llama_mlp_fused conv2d_3x3 attention_decode attention_prompt; do
  [[ -f "$root/build-gen/$header.h" ]] || { echo "device_attention.sh: build-gen/$header.h missing (see the header)" >&2; exit 2; }
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee "$out/device.txt"
models=${MODELS:-gpt3 llama}
decode=${DECODE:-1x512 1x1024 1x2048 2x1024 4x1024 4x2048}
prompt=${PROMPT:-1x512 2x512 4x512}
torch_pid=
if [ "${SKIP_TORCH:-0}" != 1 ]; then
  PYTHONUNBUFFERED=1 python3 "$root/bench/attention/torch_attention_baselines.py" --csv "$out/attention_torch.csv" \
    --model "$(tr ' ' , <<<"$models")" --decode "$(tr ' ' , <<<"$decode")" --prompt "$(tr ' ' , <<<"$prompt")" \
    ${NO_COMPILE:+--no-compile} >"$out/torch.log" 2>&1 &
  torch_pid=$!
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUSYNC_BUILD_COMPILER=OFF \
  -DCUSYNC_BUILD_TESTS=OFF -DCUSYNC_BUILD_REWRITER=OFF -DCUSYNC_CUTLASS_INCLUDE_DIR="$root/.cutlass/include" \
  -DCUSYNC_PREGENERATED_DIR="$root/build-gen" >/dev/null || exit 1
start=$(date +%s)
cmake --build "$build" --target attention_example -j "$(nproc)" >"$out/build.log" 2>&1
build_rc=$?
grep -E "error|C7510" "$out/build.log" | head -30
echo "build: rc $build_rc in $(( $(date +%s) - start )) s"
[ -n "$torch_pid" ] && { wait "$torch_pid"; echo "torch baselines: rc $?"; tail -2 "$out/torch.log"; }
[ $build_rc -eq 0 ] || { tail -40 "$out/build.log"; exit 1; }
# C7510 (serialized wgmma) is a performance bug (docs/GPU_NOTES.md): fail on it.
if grep -q C7510 "$out/build.log"; then exit 1; fi
example="$build/examples/attention/attention_example"

# Correctness first: three sizes per phase and model (the gpu ctest set), every variant; a hang is cut by timeout.
: >"$out/checks.log"
check_rc=0
for model in $models; do
  for shape in "decode 1 1 1024" "decode 2 1 512" "decode 4 1 2048" "prompt 1 512 0" "prompt 2 512 0" \
               "prompt 4 512 0"; do
    read -r phase batch seq cache <<<"$shape"
    timeout 120 "$example" --check-only --model "$model" --phase "$phase" --batch "$batch" --seq "$seq" \
      --cache "$cache" --csv /tmp/attention_check.csv >>"$out/checks.log" 2>&1
    rc=$?
    echo "check $model $phase B=$batch S=$seq S'=$cache: rc $rc" | tee -a "$out/checks.log"
    [ $rc -eq 0 ] || check_rc=1
  done
done
[ $check_rc -eq 0 ] || { grep -E "FAILED|error" "$out/checks.log" | head -20; echo "device_attention.sh: a check failed" >&2; exit 1; }

# Timing: every shape, every variant (each checked again before it is timed).
: >"$out/time.log"
csvs=()
rc=0
for model in $models; do
  for phase in decode prompt; do
    shapes=$decode; [ "$phase" = prompt ] && shapes=$prompt
    for shape in $shapes; do
      batch=${shape%x*}; second=${shape#*x}
      if [ "$phase" = decode ]; then seq=1; cache=$second; else seq=$second; cache=0; fi
      csv="$out/attention_${model}_${phase}_${batch}_${seq}_${cache}.csv"
      timeout 180 "$example" --model "$model" --phase "$phase" --batch "$batch" --seq "$seq" --cache "$cache" \
        --csv "$csv" "$@" >>"$out/time.log" 2>&1 || rc=1
      [ -f "$csv" ] && csvs+=("$csv")
    done
  done
done
grep -E "^device|FAILED" "$out/time.log" | sort -u | head -10
torch_csv=()
[ -f "$out/attention_torch.csv" ] && torch_csv=(--torch "$out/attention_torch.csv")
python3 "$root/bench/attention/summarize_attention.py" "${torch_csv[@]}" --plot "$out/attention.png" "${csvs[@]}" \
  >"$out/summary.txt"
summary_rc=$?
cat "$out/summary.txt"
exit $(( rc | summary_rc ))
