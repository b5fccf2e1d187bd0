#!/usr/bin/env bash
# The main job: cusyncgen on the bundled GPT-3 MLP spec, then the MLP example when a GPU is present.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUSYNC_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
"$build/tools/cusyncgen" "$root/examples/mlp/gpt3_mlp.dep" --check -o "$build/generated"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  "$build/examples/mlp/mlp_example"
else
  echo "run: no GPU here; skipping the MLP example (run it on a GPU machine with the same command)"
fi
