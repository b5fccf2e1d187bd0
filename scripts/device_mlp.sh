#!/usr/bin/env bash
# On the lent GPU machine (run through the device tool from the repo root, with .cutlass carried): builds the
# hooked GEMMs and the MLP example with all cores and runs the benchmark: by default the tuned configuration of
# examples/mlp/tuning_table.json and the baselines; pass --search for the exhaustive search (whose CSV and log
# `cusync-tune --example` turns into table entries: examples/mlp/README.md). Writes CSV and the log under $OUT.
# CUTLASS headers: .cutlass/include (a copy of the nvidia-cutlass package's headers; the GPU machine has no
# package registry). Extra arguments go to the example. CUSYNC_GEMM_CONFIGS (env) limits the tile configurations
# built (examples/gemm/CMakeLists.txt), to save build time on the device. MODEL=llama (env) builds and runs the
# LLaMA example (mlp_llama_example, CSV/log/plot mlp_llama.*) instead of GPT-3 (MODEL=gpt3, the default).
set -euo pipefail
model=${MODEL:-gpt3}
case "$model" in
  gpt3) target=mlp_example title="GPT-3 MLP" ;;
  llama) target=mlp_llama_example title="LLaMA MLP" ;;
  *) echo "device_mlp.sh: MODEL must be gpt3 or llama, not '$model'" >&2; exit 2 ;;
esac
out=${OUT:-/tmp/cusync-out}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/device_configure.sh"
build=${CUSYNC_BUILD_DIR:-$root/build-gpu}
device_gpu_line | tee "$out/device.txt"
# The GPU machine has neither isl nor Clang, so what they make is prepared on the CPU machine and carried:
#   build-gen/        policies: build/tools/cusyncgen examples/mlp/gpt3_mlp.dep -o build-gen (and llama_mlp.dep)
#   build-rewritten/  the "+Rw" mainloop: copy build/examples/gemm/tile_rewrite/cusync_example_gemms_reordered/
#                     (cusync/cutlass/tile_sync_mainloop.hpp, rewritten by cusync-tile-rewriter during the build)
device_configure "$build" -DCUSYNC_PREREWRITTEN_INCLUDE_DIR="$root/build-rewritten" >/dev/null
time cmake --build "$build" --target "$target" -j "$(nproc)" 2>&1 | grep -E "error|C7510|warning" || true
"$build/examples/mlp/$target" --csv "$out/mlp_$model.csv" "$@" 2>&1 | tee "$out/mlp_$model.log"
if python3 -c "import matplotlib" 2>/dev/null; then
  python3 "$root/bench/mlp/plot_mlp.py" "$out/mlp_$model.csv" "$out/mlp_$model.png" "$title, $(head -c 40 "$out/device.txt")"
fi
