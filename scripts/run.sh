#!/usr/bin/env bash
# The main job: cusyncgen on the bundled GPT-3 MLP spec (check + generated header), then, when a GPU is present,
# the MLP example (every variant checked against cuBLAS, timed, table last). Without a GPU only the spec compiler
# is built, so the job stays a few minutes long on a small machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUSYNC_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  "$root/scripts/build.sh"
  gpu=yes
else
  "$root/scripts/build.sh" --target cusyncgen
  gpu=no
fi
"$build/tools/cusyncgen" "$root/examples/mlp/gpt3_mlp.dep" --check -o "$build/generated"
if [ "$gpu" = yes ]; then
  "$build/examples/mlp/mlp_example" --csv "$build/mlp_gpt3.csv"
else
  echo "run: no GPU here; the MLP example runs where one is present (same command)"
fi
