#!/usr/bin/env bash
# What the device scripts (device_fused.sh, device_torch_op.sh, device_mlp.sh, device_conv.sh, device_attention.sh)
# share: sourced, not run. They build on the lent GPU machine, which has neither isl nor Clang nor a package
# registry, so the configure step is always the same: no spec compiler, no rewriter, no Catch2 tests, CUTLASS from
# the carried .cutlass/include and cusyncgen's headers from the carried build-gen/ (made on the CPU machine:
# scripts/device_fused.sh's header).
#
#   source "$(dirname "$0")/device_configure.sh"
#   device_configure "$build" [more cmake arguments...]   # cmake's output and status are the caller's
#   device_gpu_line                                        # name, driver, clocks of the GPU, one CSV line
#
# Every tile-configuration list set in the environment is passed on, so each script takes the same variables:
# CUSYNC_GEMM_CONFIGS (examples/gemm's hooked GEMMs), CUSYNC_FUSED_CONFIGS and CUSYNC_SWIGLU_FUSED_CONFIGS (the fused
# chains), CUSYNC_STOCK_GEMM_CONFIGS (CUTLASS's stock GEMMs), CUSYNC_CONV_CONFIGS (examples/conv2d),
# CUSYNC_ATTENTION_{PROMPT,DECODE}_{QKV,OUTPUT}_CONFIGS and CUSYNC_ATTENTION_DECODE_GEMV_CONFIGS (examples/attention).
# Unset: the CMakeLists' default, never an earlier call's value from the CMake cache (-U): the device keeps build
# directories between calls while it is warm, and session 21's call 6, meant to run the default decode lists, ran
# call 3's one-configuration lists that way (docs/BENCHMARKS.md, issue 14, session 22).

device_configure_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

device_configure() {
  local build=$1
  shift
  local lists=() name
  for name in CUSYNC_GEMM_CONFIGS CUSYNC_FUSED_CONFIGS CUSYNC_SWIGLU_FUSED_CONFIGS CUSYNC_STOCK_GEMM_CONFIGS \
      CUSYNC_CONV_CONFIGS \
      CUSYNC_ATTENTION_PROMPT_QKV_CONFIGS CUSYNC_ATTENTION_PROMPT_OUTPUT_CONFIGS \
      CUSYNC_ATTENTION_DECODE_QKV_CONFIGS CUSYNC_ATTENTION_DECODE_OUTPUT_CONFIGS \
      CUSYNC_ATTENTION_DECODE_GEMV_CONFIGS; do
    if [ -n "${!name:-}" ]; then lists+=("-D$name=${!name}"); else lists+=("-U$name"); fi
  done
  cmake -S "$device_configure_root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUSYNC_BUILD_COMPILER=OFF \
    -DCUSYNC_BUILD_TESTS=OFF -DCUSYNC_BUILD_REWRITER=OFF \
    -DCUSYNC_CUTLASS_INCLUDE_DIR="$device_configure_root/.cutlass/include" \
    -DCUSYNC_PREGENERATED_DIR="$device_configure_root/build-gen" ${lists[@]+"${lists[@]}"} "$@"
}

device_gpu_line() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
}
