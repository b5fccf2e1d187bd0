#!/usr/bin/env bash
# Configures and builds cusync into build/ (or $CUSYNC_BUILD_DIR). `--target NAME` (repeatable) builds only those
# targets; every other argument goes to cmake's configure step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUSYNC_BUILD_DIR:-$root/build}
configure=()
targets=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--target" ] && [ $# -ge 2 ]; then
    targets+=(--target "$2")
    shift 2
  else
    configure+=("$1")
    shift
  fi
done
cutlass_include=$("$root/scripts/cutlass_include_dir.sh")
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCUSYNC_CUTLASS_INCLUDE_DIR="$cutlass_include" \
  "${configure[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
