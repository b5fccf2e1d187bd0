#!/usr/bin/env bash
# On the lent GPU machine (run through the device tool from the repo root, carrying .cutlass and build-gen): builds
# the hooked convolutions and conv2d_chain_example with all cores, checks every variant at every size, then times
# them; the example's table is printed last. Writes at most 6 files to $OUT: device.txt, build.log,
# conv_check.{csv,log}, conv_time.{csv,log}. Extra arguments go to the timing run (e.g. --layers 56 --batch 8).
# CUSYNC_CONV_CONFIGS (env) limits the tile configurations built (examples/conv2d/CMakeLists.txt).
#
# The GPU machine has no isl, so cusyncgen's headers are made on the CPU machine and carried in build-gen/. The
# build configures every example, so build-gen needs the headers of every spec they use:
#   for s in examples/mlp/gpt3_mlp examples/mlp/llama_mlp examples/mlp/gpt3_mlp_fused examples/mlp/llama_mlp_fused \
#            examples/conv2d/conv2d_3x3; do build/tools/cusyncgen $s.dep -o build-gen; done
set -euo pipefail
out=${OUT:-/tmp/cusync-out}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUSYNC_BUILD_DIR:-$root/build-gpu}
for header in gpt3_mlp llama_mlp gpt3_mlp_fused llama_mlp_fused conv2d_3x3; do
  [[ -f "$root/build-gen/$header.h" ]] || { echo "device_conv.sh: build-gen/$header.h missing (see the header)" >&2; exit 2; }
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee "$out/device.txt"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUSYNC_BUILD_COMPILER=OFF \
  -DCUSYNC_BUILD_TESTS=OFF -DCUSYNC_BUILD_REWRITER=OFF -DCUSYNC_CUTLASS_INCLUDE_DIR="$root/.cutlass/include" \
  -DCUSYNC_PREGENERATED_DIR="$root/build-gen" \
  ${CUSYNC_CONV_CONFIGS:+"-DCUSYNC_CONV_CONFIGS=$CUSYNC_CONV_CONFIGS"} >/dev/null
# C7510 (serialized wgmma) is a performance bug (docs/GPU_NOTES.md): fail on it.
time cmake --build "$build" --target conv2d_chain_example -j "$(nproc)" >"$out/build.log" 2>&1 ||
  { tail -40 "$out/build.log"; exit 1; }
if grep -q C7510 "$out/build.log"; then grep C7510 "$out/build.log" | head -3; exit 1; fi
example="$build/examples/conv2d/conv2d_chain_example"
# Correctness first, every layer and batch; the timing run only if it passed.
"$example" --check-only --csv "$out/conv_check.csv" >"$out/conv_check.log" 2>&1 ||
  { tail -40 "$out/conv_check.log"; echo "device_conv.sh: the check failed" >&2; exit 1; }
tail -3 "$out/conv_check.log"
status=0
"$example" --csv "$out/conv_time.csv" "$@" >"$out/conv_time.log" 2>&1 || status=$?
# The table (from its header line on), or the log's end when the run stopped before it.
sed -n '/^layer /,$p' "$out/conv_time.log" | grep . || tail -40 "$out/conv_time.log"
exit "$status"
