#!/usr/bin/env bash
# The attention GEMM lists' Persistent field "lean" (examples/attention/CMakeLists.txt): accepted for a persistent
# configuration, refused at configure time, naming the configuration, for a pingpong one (the pingpong kernel has no
# lean form). Configures the project into a temporary directory, which it removes; exits 77 (skipped) without nvcc
# or CUTLASS, which the attention example needs to be configured at all.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cutlass=$("$root/scripts/cutlass_include_dir.sh")
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ] || [ ! -d "$cutlass" ]; then
  echo "skipped: no nvcc or no CUTLASS"; exit 77
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
configure() {  # decode output list, prompt output list
  cmake -S "$root" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCUSYNC_CUTLASS_INCLUDE_DIR="$cutlass" \
    -DCUSYNC_BUILD_TESTS=OFF -DCUSYNC_BUILD_REWRITER=OFF -DCUSYNC_BUILD_COMPILER=OFF \
    -DCUSYNC_PREGENERATED_DIR="$root/tests/golden" "-DCUSYNC_ATTENTION_DECODE_OUTPUT_CONFIGS=$1" \
    "-DCUSYNC_ATTENTION_PROMPT_OUTPUT_CONFIGS=$2" >"$work/log" 2>&1
}
configure "64,128,128,4,false,1,lean" "128,256,64,4,true,1,lean" ||
  { echo "FAIL: lean persistent configurations refused"; tail -20 "$work/log"; exit 1; }
# A glob, not ls | grep -q: under pipefail, grep -q leaving at its first match kills ls with SIGPIPE once the listing
# passes one pipe write (65 files, 4.3 KB), and the pipeline fails although the instance is there.
lean_instances=("$work"/build/examples/attention/instances/*_lean_*)
[ -e "${lean_instances[0]}" ] || { echo "FAIL: no lean instance generated"; ls "$work/build/examples/attention"; exit 1; }
rm -rf "$work/build"
if configure "64,128,128,4,false,1,true" "128,128,64,6,pingpong,1,lean"; then
  echo "FAIL: a lean pingpong configuration was accepted"; exit 1
fi
# CMake wraps its messages: compare with the whitespace collapsed.
# grep without -q reads to the end, so tr never writes into a closed pipe.
tr -s ' \n' '  ' <"$work/log" | grep "'128,128,64,6,pingpong,1,lean': pingpong is not lean" >/dev/null ||
  { echo "FAIL: the refusal does not name the configuration"; tail -20 "$work/log"; exit 1; }
echo "attention lists: lean accepted for persistent configurations, refused for pingpong"
