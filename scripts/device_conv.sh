#!/usr/bin/env bash
# On the lent GPU machine, in one device call (run through the device tool from the repo root, carrying .cutlass and
# build-gen): builds conv2d_chain_example and conv2d_chain_stress with every core, checks every model, layer, batch,
# tile configuration and variant (CUTLASS's stock convolution, CUTLASS-stock and CUTLASS-stock-PDL, included) against
# direct convolutions, runs the stress test, times everything with CUDA graphs, runs the cuDNN (torch) baselines on
# the same chains, and prints bench/conv2d/summarize_conv.py's tables last. Files in $OUT: device.txt,
# conv_summary.csv, conv_figure7.png (if matplotlib is there), conv_summary.md, and conv_raw.tgz holding build.log
# (its tail), conv_check.{csv,log}, stress.log, conv_time.{csv,log}, torch_conv.{csv,log} (the device returns at
# most 8 files).
#
# Environment (all optional):
#   MODELS=resnet,vgg,bottleneck,stride2   BATCHES=1,2,4,8,16,32   LAYERS (default: all; e.g. 56,28,14,7)
#   CHECK_BATCHES=1,2,3,4,8,16,32                 (the check adds 3: pixel counts that are no multiple of a tile)
#   STEPS="build check stress time torch table"  (a subset splits the work over calls on a warm machine: the build
#                                                 directory is ignored by git and stays between calls)
#   CUSYNC_CONV_CONFIGS="64,64,64,4,1;..."        (limits the tile configurations built, examples/conv2d/CMakeLists.txt)
#   STEP_TIMEOUT_S=300                            (each run step's limit; the table is printed from what finished)
#   TORCH_WARMUP_MS=0                             (torch_conv_baselines.py's --warmup-ms; pass the same --warmup-ms
#                                                  to conv2d_chain_example for a fair pair: BENCHMARKS, session 11)
#   INTERLEAVE=1                                  (default off: --interleave to the timing run, which then times a
#                                                  layer and batch's chains together in interleaved rounds and checks
#                                                  each again from its own graph's replay, and to the torch baselines,
#                                                  which time a layer's batches so; timed one after another, the first
#                                                  chains get an idle GPU's clocks)
# Extra arguments go to the timing run (e.g. --variants StreamSync,RowSync-PDL).
#
# The GPU machine has no isl, so cusyncgen's headers are made on the CPU machine and carried in build-gen/. The
# build configures every example, so build-gen needs the headers of every spec they use:
#   for s in examples/mlp/gpt3_mlp examples/mlp/llama_mlp examples/mlp/gpt3_mlp_fused examples/mlp/llama_mlp_fused \
#            examples/conv2d/conv2d_3x3; do build-cpu/tools/cusyncgen $s.dep -o build-gen; done
set -uo pipefail
out=${OUT:-/tmp/cusync-out}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUSYNC_BUILD_DIR:-$root/build-gpu}
models=${MODELS:-resnet,vgg,bottleneck,stride2}
batches=${BATCHES:-1,2,4,8,16,32}
check_batches=${CHECK_BATCHES:-1,2,3,4,8,16,32}
layer_args=()  # every layer of each model unless LAYERS narrows them
[[ -n "${LAYERS:-}" ]] && layer_args=(--layers "$LAYERS")
steps=" ${STEPS:-build check stress time torch table} "
limit=${STEP_TIMEOUT_S:-300}
interleave_args=()  # INTERLEAVE=1: --interleave to the timing run and the torch baselines
[[ "${INTERLEAVE:-0}" == 1 ]] && interleave_args=(--interleave)
example="$build/examples/conv2d/conv2d_chain_example"
stress="$build/examples/conv2d/conv2d_chain_stress"
status=0
want() { [[ "$steps" == *" $1 "* ]]; }
fail() { echo "device_conv.sh: $*" >&2; status=1; }

source "$root/scripts/device_configure.sh"
device_gpu_line | tee "$out/device.txt"
# No commit here: the device tool copies the working tree, and the copy's git history may be older than the tree
# (every call of session 18 printed the same stale commit). The caller records the commit it ran.

if want build; then
  for header in gpt3_mlp llama_mlp gpt3_mlp_fused llama_mlp_fused conv2d_3x3; do
    [[ -f "$root/build-gen/$header.h" ]] || { echo "device_conv.sh: build-gen/$header.h missing (see the header)" >&2; exit 2; }
  done
  device_configure "$build" >/dev/null || exit 1  # passes CUSYNC_CONV_CONFIGS on when set
  start=$SECONDS
  cmake --build "$build" --target conv2d_chain_example -j "$(nproc)" >/tmp/conv_build.log 2>&1
  built=$?
  # The stress test's kernels carry the wait watchdog, whose report-and-trap path makes ptxas serialize wgmma
  # (C7510; without CUSYNC_WAIT_TIMEOUT_NS the same instance compiles without it); they are never timed.
  [[ $built -ne 0 ]] || ! want stress ||
    cmake --build "$build" --target conv2d_chain_stress -j "$(nproc)" >/tmp/conv_stress_build.log 2>&1 || built=$?
  cat /tmp/conv_build.log /tmp/conv_stress_build.log 2>/dev/null | tail -200 >"$out/build.log"
  echo "build: $((SECONDS - start)) s on $(nproc) cores"
  [[ $built -eq 0 ]] || { cat /tmp/conv_build.log /tmp/conv_stress_build.log 2>/dev/null | tail -40; exit 1; }
  # C7510 (serialized wgmma) in the timed kernels is a performance bug (docs/GPU_NOTES.md): fail on it.
  if grep -q C7510 /tmp/conv_build.log; then grep C7510 /tmp/conv_build.log | head -3; exit 1; fi
fi

# Correctness first, every model, layer, batch, configuration and variant; the timing run only if it passed.
if want check; then
  timeout "$limit" "$example" --check-only --model "$models" "${layer_args[@]}" --batch "$check_batches" \
    --csv "$out/conv_check.csv" >"$out/conv_check.log" 2>&1
  checked=$?
  tail -3 "$out/conv_check.log"
  if [[ $checked -ne 0 ]]; then
    grep -E "FAILED|refused" "$out/conv_check.log" | head -20
    echo "device_conv.sh: the check failed (exit $checked); nothing is timed" >&2
    exit 1
  fi
fi

if want stress; then
  # A call whose STEPS had "build" without "stress" left the stress test unbuilt (session 4, call 3).
  if [[ ! -x "$stress" ]]; then
    cmake --build "$build" --target conv2d_chain_stress -j "$(nproc)" >/tmp/conv_stress_build.log 2>&1 ||
      fail "building the stress test failed: $(tail -3 /tmp/conv_stress_build.log)"
  fi
  timeout "$limit" "$stress" >"$out/stress.log" 2>&1 || fail "the stress test failed (exit $?): stress.log"
  tail -1 "$out/stress.log"
fi

time_cut=0  # the timing run hit STEP_TIMEOUT_S: its CSV holds the rows it finished (the table leaves the last group out)
if want time; then
  timeout "$limit" "$example" --model "$models" "${layer_args[@]}" --batch "$batches" --csv "$out/conv_time.csv" \
    "${interleave_args[@]}" "$@" >"$out/conv_time.log" 2>&1
  timed=$?
  if [[ $timed -eq 124 ]]; then
    time_cut=1
    fail "the timing run hit STEP_TIMEOUT_S=$limit s; the table holds the layers and batches it finished"
  elif [[ $timed -ne 0 ]]; then
    fail "the timing run failed (exit $timed): conv_time.log"
  fi
fi

if want torch; then
  if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    timeout "$limit" python3 "$root/bench/conv2d/torch_conv_baselines.py" --model "$models" "${layer_args[@]}" \
      --batch "$batches" --csv "$out/torch_conv.csv" --warmup-ms "${TORCH_WARMUP_MS:-0}" "${interleave_args[@]}" \
      >"$out/torch_conv.log" 2>&1 ||
      fail "the torch baselines failed (exit $?): torch_conv.log"
  else
    echo "device_conv.sh: no torch with CUDA here; cuDNN baselines skipped" | tee "$out/torch_conv.log"
  fi
fi

if want table; then
  if [[ -s "$out/conv_time.csv" ]]; then
    summary_args=()
    [[ -s "$out/torch_conv.csv" ]] && summary_args=(--torch "$out/torch_conv.csv")
    # --interleave writes a layer and batch's rows only once all of them are timed: a cut run leaves whole groups.
    [[ $time_cut -eq 1 && ${#interleave_args[@]} -eq 0 ]] && summary_args+=(--partial)
    python3 "$root/bench/conv2d/summarize_conv.py" "$out/conv_time.csv" "${summary_args[@]}" \
      --csv "$out/conv_summary.csv" --plot "$out/conv_figure7.png" >"$out/conv_summary.md" 2>&1 ||
      fail "summarize_conv.py: some rows failed their check"
    cat "$out/conv_summary.md"
  else
    # The example's own table, or the log's end when the run stopped before it.
    sed -n '/^model /,$p' "$out/conv_time.log" 2>/dev/null | grep . || tail -40 "$out/conv_time.log" 2>/dev/null
  fi
fi
# The device returns at most 8 files from $OUT: the logs and raw CSVs go back in one archive, the summary, plot and
# device line as they are.
raw=()
for file in build.log conv_check.csv conv_check.log stress.log conv_time.csv conv_time.log torch_conv.csv torch_conv.log; do
  [[ -f "$out/$file" ]] && raw+=("$file")
done
if [[ ${#raw[@]} -gt 0 ]]; then
  tar czf "$out/conv_raw.tgz" -C "$out" "${raw[@]}" && (cd "$out" && rm -f "${raw[@]}")
fi
exit "$status"
