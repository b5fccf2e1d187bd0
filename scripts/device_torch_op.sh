#!/usr/bin/env bash
# On the lent GPU machine (through the device tool, from the repo root, carrying .cutlass/ and build-gen/; build-gen
# holds cusyncgen's headers made here, since the GPU machine has no isl; configuring the examples needs all three:
# `for s in gpt3_mlp gpt3_mlp_fused llama_mlp; do build/tools/cusyncgen examples/mlp/$s.dep -o build-gen; done`):
# the PyTorch op end to end, without network.
#   build  libcusync_mlp.so with CMake (-DCUSYNC_BUILD_PYTHON_EXTENSION=ON, all cores), then the package from it:
#          `pip install --no-build-isolation --target` (no download), else `setup.py build` (setuptools only),
#          else the source tree (PYTHONPATH=python + CUSYNC_MLP_LIBRARY); which one worked goes to status.txt
#   test   pytest python/tests against that package (GPU tests included)
#   bench  python/bench_mlp_op.py: the op beside torch eager and torch.compile, CUDA graphs, checked
# STEPS="build test bench" (default all three; the build directory build-torch-op/ persists between calls on a warm
# machine, so the steps may run in separate calls of at most 10 minutes each). Outputs under $OUT (7 files):
# device.txt, build.log, pytest.log, pytest.xml, bench_ACT.log, mlp_op_bench_ACT.csv (ACT in BENCH_ACTIVATIONS,
# default "gelu swiglu"), status.txt. The last lines printed are the test summary and the benchmark tables.
#   CUSYNC_FUSED_CONFIGS   kernel configurations to build (default: examples/gemm's, which include those the shipped
#                          tuning table names; fewer build faster, and the op then uses the nearest entry it has)
#   CUSYNC_SWIGLU_FUSED_CONFIGS  the same for the SwiGLU chain (default: examples/gemm's; the op uses only the
#                          128-column ones, which read its paired weight layout)
#   BENCH_M                M values for the benchmark (default 1,8,64,128,256,512,1024,2048,4096)
#   BENCH_WARMUP_MS        sustained warm-up per timed graph (default 500, as the examples' standings)
#   BENCH_ARGS             more arguments for bench_mlp_op.py (e.g. --autotune-m 1,1024)
set -uo pipefail
out=${OUT:-/tmp/cusync-out}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/device_configure.sh"
# Absolute: pip builds the package from another directory, where a relative CUSYNC_BUILD_DIR names nothing.
build=$(realpath -m "${CUSYNC_BUILD_DIR:-$root/build-torch-op}")
package=$build/package  # the installed package (pip --target or setup.py build)
steps=${STEPS:-build test bench}
status=$out/status.txt
: >"$status"
rc=0
note() { echo "$*" | tee -a "$status"; }

device_gpu_line >"$out/device.txt" 2>&1
python3 -c "import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)" \
  | sed 's/^/python, torch, torch CUDA: /' >>"$out/device.txt" 2>&1
cat "$out/device.txt"

if [[ " $steps " == *" build "* ]]; then
  start=$(date +%s)
  {
    device_configure "$build" -DCUSYNC_BUILD_PYTHON_EXTENSION=ON &&
      cmake --build "$build" --target cusync_mlp -j "$(nproc)"
  } >"$out/build.log" 2>&1
  build_rc=$?
  grep -E "error|C7510|warning" "$out/build.log" | head -20
  note "library build: rc $build_rc in $(( $(date +%s) - start )) s"
  [ $build_rc -eq 0 ] || { tail -30 "$out/build.log"; exit 1; }
  # The package, installed the way a user would, reusing the library just built (no second compilation).
  rm -rf "$package"
  export CUSYNC_MLP_PREBUILT_LIBRARY="$build/python/libcusync_mlp.so"
  if python3 -m pip install --no-build-isolation --no-deps --no-index --target "$package" "$root/python" \
      >>"$out/build.log" 2>&1; then
    note "package: pip install --no-build-isolation --target: ok"
  elif (cd "$root/python" && python3 setup.py build --build-lib "$package") >>"$out/build.log" 2>&1; then
    note "package: pip install failed (build.log); setup.py build: ok"
  else
    rm -rf "$package"
    note "package: pip install and setup.py build failed (build.log); tests use the source tree"
  fi
  unset CUSYNC_MLP_PREBUILT_LIBRARY
  rm -rf "$root/python/build" "$root/python/"*.egg-info
fi

# The package when it was installed, else the source tree with the library beside it.
if [ -f "$package/cusync/libcusync_mlp.so" ]; then
  export PYTHONPATH="$package"
  unset CUSYNC_MLP_LIBRARY
else
  export PYTHONPATH="$root/python"
  export CUSYNC_MLP_LIBRARY="$build/python/libcusync_mlp.so"
fi
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
note "cusync imported from: $(python3 -c 'import cusync, os; print(os.path.dirname(cusync.__file__))' 2>&1)"

if [[ " $steps " == *" test "* ]]; then
  if python3 -c "import pytest" 2>/dev/null; then
    # -p no:cacheprovider: nothing written into the tree; the op tests run from the repository's test files.
    timeout "${TEST_TIMEOUT_S:-480}" python3 -m pytest -v -rs -p no:cacheprovider "$root/python/tests" \
      --junitxml="$out/pytest.xml" >"$out/pytest.log" 2>&1
    test_rc=$?
    note "pytest: rc $test_rc ($(tail -1 "$out/pytest.log"))"
    [ $test_rc -eq 0 ] || rc=1
    # A GPU machine on which the op's tests skipped themselves (no torch GPU, not sm_90) has tested nothing.
    if ! grep -qE "test_mlp_op.py::.* (PASSED|FAILED|ERROR)" "$out/pytest.log"; then
      note "pytest: the op's GPU tests did not run (skipped; reasons in pytest.log)"
      rc=1
    fi
  else
    note "pytest: not installed on this machine; tests NOT run"
    rc=1
  fi
fi

if [[ " $steps " == *" bench "* ]]; then
  for activation in ${BENCH_ACTIVATIONS:-gelu swiglu}; do
    # -P: the script's own folder (python/, the source tree without the library) must not shadow PYTHONPATH.
    timeout "${BENCH_TIMEOUT_S:-270}" python3 -P "$root/python/bench_mlp_op.py" --activation "$activation" \
      --m "${BENCH_M:-1,8,64,128,256,512,1024,2048,4096}" --csv "$out/mlp_op_bench_$activation.csv" \
      --warmup-ms "${BENCH_WARMUP_MS:-500}" ${BENCH_ARGS:-} \
      >"$out/bench_$activation.log" 2>&1
    bench_rc=$?
    note "benchmark $activation: rc $bench_rc (1: a variant failed its check; 124: timeout)"
    [ $bench_rc -eq 0 ] || rc=1
  done
fi

echo
[ -f "$out/pytest.log" ] && grep -E "FAILED|ERROR" "$out/pytest.log" | head -20
cat "$status"
for log in "$out"/bench_*.log; do [ -f "$log" ] && { echo "== $(basename "$log")"; sed -n '/^microseconds per call/,$p' "$log"; }; done
exit $rc
