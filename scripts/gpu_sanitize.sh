#!/usr/bin/env bash
# Runs compute-sanitizer over what BUILD_DIR holds of:
#   1. the device runtime's GPU test binary, under memcheck (with leak check), racecheck and synccheck, in small mode
#      (CUSYNC_GPU_TEST_SMALL=1);
#   2. mlp_fused_example's pipeline-per-GEMM chains, under racecheck and synccheck, with a reference computed
#      without cuBLAS (--reference direct) and the cuBLAS baseline left out, so that no cuBLAS kernel runs: racecheck
#      reports thousands of hazards inside cuBLAS's own nvjet kernels and displays only the first 100, and excluding
#      them by name makes it fail (docs/GPU_NOTES.md).
# It fails if any tool reports an error or hazard, except racecheck's known reports for 2x1-cluster chains (below).
#
#   scripts/gpu_sanitize.sh BUILD_DIR [LOG_DIR]
#
# BUILD_DIR holds tests/gpu/cusync_gpu_tests (a build of tests/gpu/standalone or of the whole project),
# examples/mlp/mlp_fused_example, or both; a part whose binary is missing is left out. Logs go to LOG_DIR (default
# BUILD_DIR/sanitize). Exit status: 0 clean, 1 a tool reported something or a run failed, 77 no GPU (nothing
# checked), 2 usage, neither binary, or missing tools.
# Excluded: tests tagged [planted] (they need stages to overlap, and compute-sanitizer serializes kernels) and the
# watchdog binary (it traps on purpose).
#
# The fused chains (CUSYNC_SANITIZE_FUSED, "M:configuration" words; default GPT-3's two pipeline-per-GEMM chains,
# 128x96 | 192 at M = 256 and 64x96 | 192 at M = 128, both in the default CUSYNC_FUSED_CONFIGS) run --check-only
# with --splits none --orders g8 --unit-wait whole, synchronized and stream-ordered; each must be built, and must
# check correct. What a reader should expect from racecheck there: both chains run on 2x1 clusters, and racecheck
# flags every st.shared::cluster that rank 0 makes into its peer's shared memory (the unit hand-off,
# ClusterUnitChannel::send: 8 words per unit, 8 consecutive instructions) as a "Potential invalid __shared__ write
# ... in a block that might have already exited". The peer cannot have exited there: it leaves only after reading
# the stop unit, and it waits on its full barrier for every unit; racecheck does not model mbarriers
# (docs/GPU_NOTES.md, "racecheck and clusters"; 96 such reports at 8 instructions in session 9). Those reports are
# counted and shown apart (how many, at how many instructions) and do not fail the run; any other report does.
set -uo pipefail

build=${1:?usage: gpu_sanitize.sh BUILD_DIR [LOG_DIR]}
logs=${2:-$build/sanitize}
binary=$build/tests/gpu/cusync_gpu_tests
fused=$build/examples/mlp/mlp_fused_example
default_fused_cases="256:fused_128x96x64_s7_coop_c2_n192_gemm2s5 128:fused_64x96x64_s10_ws_c2_n192_gemm2s6"
fused_cases=${CUSYNC_SANITIZE_FUSED:-$default_fused_cases}
per_tool_timeout=${CUSYNC_SANITIZE_TIMEOUT:-150}
[ -x "$binary" ] || binary=
[ -x "$fused" ] || fused=
[ -n "$binary$fused" ] || {
  echo "gpu_sanitize: neither $build/tests/gpu/cusync_gpu_tests nor $build/examples/mlp/mlp_fused_example found" \
    "(build tests/gpu or mlp_fused_example first)" >&2
  exit 2
}
sanitizer=$(command -v compute-sanitizer || true)
[ -n "$sanitizer" ] || [ ! -x /usr/local/cuda/bin/compute-sanitizer ] || sanitizer=/usr/local/cuda/bin/compute-sanitizer
mkdir -p "$logs"

# Without a GPU either binary exits 77 before running anything: report skipped rather than clean. The fused example
# asked for a configuration that no build has exits 1 with a GPU, before any kernel runs.
if [ -n "$binary" ]; then
  probe=$("$binary" --list-test-names-only 2>&1)
  probe_status=$?
  grep -q "SKIPPED" <<<"$probe" || probe_status=0
else
  "$fused" --m 1 --check-only --configs gpu_sanitize_probe --csv /dev/null >/dev/null 2>&1
  probe_status=$?
fi
if [ "$probe_status" -eq 77 ]; then
  echo "gpu_sanitize: SKIPPED (no usable CUDA device)"
  exit 77
fi
[ -n "$sanitizer" ] || { echo "gpu_sanitize: compute-sanitizer not found on PATH or in /usr/local/cuda/bin" >&2; exit 2; }

failed=0

# sanitize TOOL LOG COMMAND...: runs COMMAND under TOOL into LOG; sets `status`, `seconds`, `summary` and
# `reported`. memcheck and synccheck end with "ERROR SUMMARY: N errors"; racecheck with "RACECHECK SUMMARY: N hazards
# displayed (E errors, W warnings)", N the reports it printed: every one, up to --print-limit (100 by default).
sanitize() {
  local tool=$1 log=$2
  shift 2
  local options=()
  case $tool in
    memcheck) options=(--leak-check full) ;;
    racecheck) options=(--racecheck-report all) ;;
  esac
  local start
  start=$(date +%s)
  timeout "$per_tool_timeout" "$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 1000000 "${options[@]}" \
    "$@" >"$log" 2>&1
  status=$?
  seconds=$(( $(date +%s) - start ))
  summary=$(grep -E "(ERROR|RACECHECK) SUMMARY" "$log" | tail -n 1)
  reported=$(sed -nE 's/.*SUMMARY: ([0-9]+) .*/\1/p' <<<"$summary")
}

# report NAME TOOL LOG VERDICT [NOTE]: one line per run; on a failure, the sanitizer's first reports and the tail.
report() {
  printf 'gpu_sanitize: %-52s %-9s %-28s %4ss  %s\n' "$1" "$2" "$4" "$seconds" "${summary:-}${5:+; $5}"
  if [ "$4" != clean ]; then
    failed=1
    grep -E "=========" "$3" | head -n 40
    tail -n 15 "$3"
  fi
}

if [ -n "$binary" ]; then
  export CUSYNC_GPU_TEST_SMALL=1
  for tool in memcheck racecheck synccheck; do
    log=$logs/$tool.log
    sanitize "$tool" "$log" "$binary" '~[planted]'
    # Any nonzero N fails, warnings included.
    verdict=clean
    if [ "$status" -eq 124 ]; then
      verdict="TIMED OUT after ${per_tool_timeout}s"
    elif [ "$status" -ne 0 ]; then
      verdict="FAILED (exit $status)"
    elif [ -z "$reported" ]; then
      verdict="FAILED (no summary line)"
    elif [ "$reported" -ne 0 ]; then
      verdict="FAILED ($reported reported)"
    fi
    report cusync_gpu_tests "$tool" "$log" "$verdict"
  done
fi

if [ -n "$fused" ]; then
  for case in $fused_cases; do
    m=${case%%:*}
    config=${case#*:}
    for tool in racecheck synccheck; do
      log=$logs/fused_${config}_m${m}_$tool.log
      sanitize "$tool" "$log" "$fused" --m "$m" --check-only --configs "$config" --splits none \
        --orders g8 --unit-wait whole --reference direct --variants Fused,Fused-StreamSync \
        --csv "$logs/fused_${config}_m${m}_$tool.csv"
      # The cluster hand-off's reports (see the header), and the instructions they come from.
      peer_writes=$(grep -c "is located in a block that might have already exited" "$log")
      peer_instructions=$(grep -A1 "Potential invalid __shared__ write" "$log" | grep -oE '\+0x[0-9a-f]+$' | sort -u |
        wc -l)
      note=
      [ "$peer_writes" -eq 0 ] ||
        note="$peer_writes cluster-peer writes at $peer_instructions instructions (known: racecheck and clusters)"
      # The sanitizer exits 99 when it reported anything, so the known reports alone give 99 too.
      verdict=clean
      if [ "$status" -eq 124 ]; then
        verdict="TIMED OUT after ${per_tool_timeout}s"
      elif grep -q "no fused-chain configuration registered/selected" "$log"; then
        verdict="FAILED (not built)"
      elif [ -z "$reported" ]; then
        verdict="FAILED (no summary line)"
      elif [ "$reported" -ne "$peer_writes" ]; then
        verdict="FAILED ($(( reported - peer_writes )) reported)"
      elif ! grep -q "): all correct;" "$log"; then
        verdict="FAILED (a wrong result; exit $status)"
      elif [ "$status" -ne 0 ] && [ "$status" -ne 99 ]; then
        verdict="FAILED (exit $status)"
      elif [ "$status" -eq 99 ] && [ "$peer_writes" -eq 0 ]; then
        verdict="FAILED (exit 99)"
      fi
      report "$config M=$m" "$tool" "$log" "$verdict" "$note"
    done
  done
fi
exit $failed
