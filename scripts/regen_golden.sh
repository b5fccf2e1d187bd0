#!/usr/bin/env bash
# Regenerates the golden policy headers in tests/golden/ from the bundled specs, with cusyncgen from the build
# directory (build/ or $CUSYNC_BUILD_DIR, built here if needed). Review the change with `git diff tests/golden`;
# the ctest tests `policy: golden <spec>` fail until the goldens match what cusyncgen emits.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUSYNC_BUILD_DIR:-$root/build}
if [[ ! -x "$build/tools/cusyncgen" ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target cusyncgen -j 2 >/dev/null
cd "$root"  # spec paths in the header comments are relative to the repository root
for spec in examples/mlp/gpt3_mlp.dep examples/mlp/gpt3_mlp_fused.dep examples/mlp/llama_mlp.dep \
            examples/mlp/llama_mlp_fused.dep examples/mlp/gpt3_mlp_skinny.dep examples/mlp/llama_mlp_skinny.dep \
            examples/attention/attention.dep \
            examples/attention/attention_decode.dep examples/attention/attention_prompt.dep \
            examples/conv2d/conv2d.dep examples/conv2d/conv2d_3x3.dep examples/conv2d/conv2d_bottleneck.dep \
            examples/conv2d/conv2d_stride2.dep; do
  "$build/tools/cusyncgen" "$spec" -o tests/golden >/dev/null
  echo "regenerated tests/golden/$(basename "$spec" .dep).h"
done
