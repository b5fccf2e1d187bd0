#!/usr/bin/env bash
# Runs the device runtime's GPU test binary under compute-sanitizer's memcheck (with leak check), racecheck and
# synccheck, in small mode (CUSYNC_GPU_TEST_SMALL=1), and fails if any tool reports an error or hazard.
#
#   scripts/gpu_sanitize.sh BUILD_DIR [LOG_DIR]
#
# BUILD_DIR holds tests/gpu/cusync_gpu_tests (a build of tests/gpu/standalone or of the whole project). Logs go to
# LOG_DIR (default BUILD_DIR/sanitize). Exit status: 0 clean, 1 a tool reported something or the run failed,
# 77 no GPU (nothing checked), 2 usage or missing tools.
# Excluded: tests tagged [planted] (they need stages to overlap, and compute-sanitizer serializes kernels) and the
# watchdog binary (it traps on purpose).
set -uo pipefail

build=${1:?usage: gpu_sanitize.sh BUILD_DIR [LOG_DIR]}
logs=${2:-$build/sanitize}
binary=$build/tests/gpu/cusync_gpu_tests
per_tool_timeout=${CUSYNC_SANITIZE_TIMEOUT:-150}
[ -x "$binary" ] || { echo "gpu_sanitize: $binary not found (build tests/gpu first)" >&2; exit 2; }
sanitizer=$(command -v compute-sanitizer || true)
[ -n "$sanitizer" ] || [ ! -x /usr/local/cuda/bin/compute-sanitizer ] || sanitizer=/usr/local/cuda/bin/compute-sanitizer
mkdir -p "$logs"

# Without a GPU the binary exits 77 before running anything: report skipped rather than clean.
probe=$("$binary" --list-test-names-only 2>&1)
if [ $? -eq 77 ] && grep -q "SKIPPED" <<<"$probe"; then
  echo "gpu_sanitize: SKIPPED (no usable CUDA device)"
  exit 77
fi
[ -n "$sanitizer" ] || { echo "gpu_sanitize: compute-sanitizer not found on PATH or in /usr/local/cuda/bin" >&2; exit 2; }

export CUSYNC_GPU_TEST_SMALL=1
failed=0
for tool in memcheck racecheck synccheck; do
  case $tool in
    memcheck) options=(--leak-check full) ;;
    racecheck) options=(--racecheck-report all) ;;
    *) options=() ;;
  esac
  log=$logs/$tool.log
  start=$(date +%s)
  timeout "$per_tool_timeout" "$sanitizer" --tool "$tool" --error-exitcode 99 "${options[@]}" \
    "$binary" '~[planted]' >"$log" 2>&1
  status=$?
  seconds=$(( $(date +%s) - start ))
  # memcheck and synccheck end with "ERROR SUMMARY: N errors"; racecheck with "RACECHECK SUMMARY: N hazards
  # displayed (E errors, W warnings)". Any nonzero N fails, warnings included.
  summary=$(grep -E "(ERROR|RACECHECK) SUMMARY" "$log" | tail -n 1)
  reported=$(sed -nE 's/.*SUMMARY: ([0-9]+) .*/\1/p' <<<"$summary")
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
  printf 'gpu_sanitize: %-9s %-28s %4ss  %s\n' "$tool" "$verdict" "$seconds" "${summary:-}"
  if [ "$verdict" != clean ]; then
    failed=1
    grep -E "=========" "$log" | head -n 40
    tail -n 15 "$log"
  fi
done
exit $failed
