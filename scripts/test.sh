#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs the whole suite. GPU tests run only where a GPU is
# present; elsewhere ctest reports them as skipped. Without a GPU only the first hooked-GEMM tile configuration is
# compiled (it still instantiates every kernel family), which keeps a 2-core CI run short.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
extra=()
if ! (command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1); then
  extra+=("-DCUSYNC_GEMM_CONFIGS=128,128,64,4,true,1")
  extra+=("-DCUSYNC_GEMM_SM80_CONFIGS=128,128,32,4")  # the sm_80 portable path: one configuration
fi
"$root/scripts/build.sh" "${extra[@]}"
cd "${CUSYNC_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc)"
