#!/usr/bin/env bash
# Installs the current cusync build into a temporary prefix and builds examples/consumer (a project of its own, outside
# the build tree) against it with find_package(cusync CONFIG REQUIRED): the installed cusyncgen generates the
# consumer's policy header at build time and nvcc compiles its kernels. The temporary prefix and build are removed
# afterwards, on failure too. Exit 77 (ctest: skipped) without nvcc.
#
#   check_consumer_project.sh <cusync build dir> <cusync source dir> <work dir> <nvcc or ""> <CUDA architectures>
set -euo pipefail
build=$1 source=$2 work=$3 nvcc=$4 architectures=$5

if [ -z "$nvcc" ] || [ ! -x "$nvcc" ]; then
  nvcc=$(command -v nvcc || true)
fi
if [ -z "$nvcc" ]; then
  echo "SKIPPED: no nvcc to compile the consumer project with"
  exit 77
fi

rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$source/examples/consumer" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$architectures"
cmake --build "$work/build"

# What was used is the installed package, not cusync's build tree.
grep -q "cusync_DIR:PATH=$work/prefix/" "$work/build/CMakeCache.txt"
test -f "$work/build/generated/row_sums/row_sums.h"
echo "consumer project built against $work/prefix"
