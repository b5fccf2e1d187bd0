#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs the whole suite. GPU tests run only where a GPU is
# present; elsewhere ctest reports them as skipped. Without a GPU only two hooked-GEMM tile configurations are
# compiled (one per kernel family: one tile per block, persistent), one fused-chain configuration, one convolution
# configuration and one configuration per attention GEMM role, which keeps a 2-core CI run short.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
extra=()
if ! (command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1); then
  # Three configurations: the non-persistent, the persistent and the pingpong kernel families (each with both
  # policies and roles; the rewriter's "+Rw" copies too).
  extra+=("-DCUSYNC_GEMM_CONFIGS=128,128,64,4,true,1;64,128,64,4,false,2,true;128,128,64,6,pingpong,1,true")
  extra+=("-DCUSYNC_GEMM_SM80_CONFIGS=128,128,32,4")  # the sm_80 portable path: one configuration
  extra+=("-DCUSYNC_FUSED_CONFIGS=64,128,128,4,false")  # the fused chain: one configuration
  extra+=("-DCUSYNC_SWIGLU_FUSED_CONFIGS=64,128,128,4,false")  # the SwiGLU fused chain: one configuration
  extra+=("-DCUSYNC_STOCK_GEMM_CONFIGS=128,256,64,1,coop")  # CUTLASS's stock GEMM reference: one configuration
  extra+=("-DCUSYNC_CONV_CONFIGS=64,64,64,4,1")  # the convolutions: one configuration
  # The attention chain: one configuration per role.
  # The QKV GEMM in 2x1 clusters: CI compiles the cluster path of the one-tile kernel, and the other lists its
  # single-block path.
  extra+=("-DCUSYNC_ATTENTION_PROMPT_QKV_CONFIGS=128,128,64,6,true,1,false,2")
  # The output GEMM as the pingpong kernel: the MLP's lists compile the one-tile and persistent cooperative ones.
  extra+=("-DCUSYNC_ATTENTION_PROMPT_OUTPUT_CONFIGS=128,128,64,6,pingpong,1,true")
  extra+=("-DCUSYNC_ATTENTION_DECODE_QKV_CONFIGS=64,128,128,4,false,1,true")
  # The decode output GEMM as the lean persistent kernel: the QKV list compiles the full one.
  extra+=("-DCUSYNC_ATTENTION_DECODE_OUTPUT_CONFIGS=64,128,128,4,false,1,lean")
fi
"$root/scripts/build.sh" "${extra[@]}"
cd "${CUSYNC_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc)"
