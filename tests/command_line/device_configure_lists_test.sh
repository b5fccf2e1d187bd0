#!/usr/bin/env bash
# scripts/device_configure.sh passes each configuration list set in the environment to CMake (-D) and drops every
# unset one from the CMake cache (-U), so that a build directory the device kept from an earlier call cannot carry
# that call's lists into this one (session 21's call 6 ran call 3's lists that way). cmake is replaced by a function
# that prints its arguments: what is checked is what device_configure asks of CMake.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/scripts/device_configure.sh"
cmake() { printf '%s\n' "$@"; }
unset CUSYNC_GEMM_CONFIGS CUSYNC_FUSED_CONFIGS CUSYNC_SWIGLU_FUSED_CONFIGS CUSYNC_STOCK_GEMM_CONFIGS \
  CUSYNC_CONV_CONFIGS CUSYNC_ATTENTION_PROMPT_QKV_CONFIGS CUSYNC_ATTENTION_PROMPT_OUTPUT_CONFIGS \
  CUSYNC_ATTENTION_DECODE_QKV_CONFIGS CUSYNC_ATTENTION_DECODE_OUTPUT_CONFIGS CUSYNC_ATTENTION_DECODE_GEMV_CONFIGS
export CUSYNC_ATTENTION_DECODE_GEMV_CONFIGS="4,false,128"
arguments=$(device_configure /nonexistent-build -DEXTRA=1)
fail() { echo "FAIL: $*"; echo "$arguments"; exit 1; }
grep -qx -- "-DCUSYNC_ATTENTION_DECODE_GEMV_CONFIGS=4,false,128" <<<"$arguments" || fail "the set list is not passed"
grep -qx -- "-UCUSYNC_ATTENTION_DECODE_GEMV_CONFIGS" <<<"$arguments" && fail "the set list is also dropped"
for name in CUSYNC_GEMM_CONFIGS CUSYNC_CONV_CONFIGS CUSYNC_ATTENTION_DECODE_QKV_CONFIGS CUSYNC_FUSED_CONFIGS; do
  grep -qx -- "-U$name" <<<"$arguments" || fail "unset $name is not dropped from the cache"
  grep -q -- "^-D$name=" <<<"$arguments" && fail "unset $name is passed a value"
done
[ "$(tail -1 <<<"$arguments")" = "-DEXTRA=1" ] || fail "the caller's arguments do not come last"
echo "device_configure: set lists passed, unset lists dropped from the cache"
