#!/usr/bin/env bash
# On the lent GPU machine (through the device tool, from the repo root, carrying .cutlass/ and build-gen/): builds
# attention_example with all cores while the torch baselines run (they use the GPU, the build only the CPU), then
# checks every variant and GEMM configuration at three or four sizes per phase and model, then times the example at
# every shape (each variant searching its GEMM configurations, every one checked before it is timed), and prints one
# table last (bench/attention/summarize_attention.py). Writes under $OUT (7 files: the device returns 8 at most):
# device.txt, checks.log, attention_torch.csv, attention_shapes.tgz (one attention_MODEL_PHASE_B_S_CACHE.csv per
# timed shape, one row per configuration), logs.tgz (build.log, torch.log, time.log), summary.txt, attention.png
# (if matplotlib is there).
# Expected to fit one 10-minute device call; estimated, not yet measured:
#   build   46 CUTLASS instances (per model: prompt QKV 3 + output 6 x 2 T policies, decode QKV 2 + output 3 x 2;
#           examples/attention/CMakeLists.txt), 25-30 s of nvcc each (measured one at a time on the CPU machine),
#           three rounds on 16 cores: 2-3 min, with torch (24 shapes, eager and torch.compile) running beside it
#           (torch.compile stops recompiling after 8 shapes, torch's recompile_limit, and runs eager after that);
#   checks  14 --check-only runs (every configuration once, about 2-3 s each): under 1 min;
#   timing  24 runs: decode about 46 configurations of ~0.1 ms chains, prompt about 31 of 0.1-1 ms chains, each
#           checked then timed over 23 graph replays of 10 chains: 3-5 s per decode shape, 4-10 s per prompt shape,
#           about 3 min.
# Fewer configurations: pass --gemm-configs (e.g. --gemm-configs 128x128x64_s4_coop_b1,64x128x128_s4_ws_b1_p: the
# baselines) to restrict the timed runs; fewer instances to build: set the CUSYNC_ATTENTION_*_CONFIGS lists in the environment.
#
# The GPU machine has no isl, so cusyncgen's headers are made on the CPU machine and carried in build-gen/. The
# build configures every example, so build-gen needs the headers of every spec they use:
#   for s in examples/mlp/gpt3_mlp examples/mlp/llama_mlp examples/mlp/gpt3_mlp_fused examples/mlp/llama_mlp_fused \
#            examples/conv2d/conv2d_3x3 examples/attention/attention_decode examples/attention/attention_prompt; do
#     build-cpu/tools/cusyncgen $s.dep -o build-gen; done
#   MODELS          of gpt3 and llama (default: both)
#   DECODE          token-generation shapes BxS' (default 1x512 1x1024 1x2048 2x1024 4x1024 4x2048)
#   PROMPT          prompt shapes BxS (default 1x512 2x512 4x512 1x1024 2x1024 1x2048: attention_prompt.dep proves
#                   S = 512, 1024 and 2048 for every B*S up to 4096; attention_example refuses any other S)
#   SKIP_TORCH=1    no torch baselines; NO_COMPILE=1 torch eager only; TORCH_WARMUP_MS their --warmup-ms (pass the
#                   same --warmup-ms to attention_example for a fair pair: docs/BENCHMARKS.md, session 11)
# Extra arguments go to every timed attention_example run (e.g. --samples 50).
set -uo pipefail
out=${OUT:-/tmp/cusync-out}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUSYNC_BUILD_DIR:-$root/build-gpu}
for header in gpt3_mlp llama_mlp gpt3_mlp_fused llama_mlp_fused conv2d_3x3 attention_decode attention_prompt; do
  [[ -f "$root/build-gen/$header.h" ]] || { echo "device_attention.sh: build-gen/$header.h missing (see the header)" >&2; exit 2; }
  # cusyncgen run from the repository root emits exactly the golden header: anything else is stale.
  cmp -s "$root/build-gen/$header.h" "$root/tests/golden/$header.h" ||
    { echo "device_attention.sh: build-gen/$header.h differs from tests/golden/$header.h: regenerate it (see the header)" >&2; exit 2; }
done
source "$root/scripts/device_configure.sh"
device_gpu_line | tee "$out/device.txt"
models=${MODELS:-gpt3 llama}
decode=${DECODE:-1x512 1x1024 1x2048 2x1024 4x1024 4x2048}
prompt=${PROMPT:-1x512 2x512 4x512 1x1024 2x1024 1x2048}
torch_pid=
if [ "${SKIP_TORCH:-0}" != 1 ]; then
  PYTHONUNBUFFERED=1 python3 "$root/bench/attention/torch_attention_baselines.py" --csv "$out/attention_torch.csv" \
    --model "$(tr ' ' , <<<"$models")" --decode "$(tr ' ' , <<<"$decode")" --prompt "$(tr ' ' , <<<"$prompt")" \
    ${NO_COMPILE:+--no-compile} --warmup-ms "${TORCH_WARMUP_MS:-0}" >"$out/torch.log" 2>&1 &
  torch_pid=$!
fi
device_configure "$build" >/dev/null || exit 1  # passes the CUSYNC_ATTENTION_*_CONFIGS lists on when set
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

# Correctness first: the gpu ctest set (three decode sizes, each proven prompt S), every variant and GEMM
# configuration; a hang is cut by timeout.
: >"$out/checks.log"
check_rc=0
for model in $models; do
  for shape in "decode 1 1 1024" "decode 2 1 512" "decode 4 1 2048" "prompt 1 512 0" "prompt 4 512 0" \
               "prompt 2 1024 0" "prompt 1 2048 0"; do
    read -r phase batch seq cache <<<"$shape"
    timeout 120 "$example" --check-only --model "$model" --phase "$phase" --batch "$batch" --seq "$seq" \
      --cache "$cache" --csv /tmp/attention_check.csv >>"$out/checks.log" 2>&1
    rc=$?
    echo "check $model $phase B=$batch S=$seq S'=$cache: rc $rc" | tee -a "$out/checks.log"
    [ $rc -eq 0 ] || check_rc=1
  done
done
[ $check_rc -eq 0 ] || { grep -E "FAILED|error" "$out/checks.log" | head -20; echo "device_attention.sh: a check failed" >&2; exit 1; }

# Timing: every shape, every variant, every GEMM configuration the search runs (each checked again before it is
# timed).
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
# The device returns at most 8 files from $OUT: the per-shape CSVs go back in one archive (session 4 lost them).
if [ ${#csvs[@]} -gt 0 ]; then
  tar czf "$out/attention_shapes.tgz" -C "$out" "${csvs[@]##*/}" && rm -f "${csvs[@]}"
fi
logs=()
for log in build.log torch.log time.log; do [ -f "$out/$log" ] && logs+=("$log"); done
if [ ${#logs[@]} -gt 0 ]; then
  tar czf "$out/logs.tgz" -C "$out" "${logs[@]}" && (cd "$out" && rm -f "${logs[@]}")
fi
cat "$out/summary.txt"
exit $(( rc | summary_rc ))
