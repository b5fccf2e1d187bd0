#!/usr/bin/env bash
# Configures and builds cusync into build/ (or $CUSYNC_BUILD_DIR). Extra arguments go to cmake's configure step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUSYNC_BUILD_DIR:-$root/build}
cutlass_include=$("$root/scripts/cutlass_include_dir.sh")
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCUSYNC_CUTLASS_INCLUDE_DIR="$cutlass_include" "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
