#!/usr/bin/env bash
# fuzz/run_fuzzer.sh, briefly, for both targets: each must still build (its source list names every source of the
# libraries it fuzzes; a file added to them and not to the list fails the link, as it did unnoticed until session 31)
# and run a fixed sequence of random specs (seed 1, RUNS inputs, default 2000, for the parser and a twentieth of them
# for the compiler, so CI sees the same inputs every time) with no crash, sanitizer report, hang or escaping
# exception; and an unknown target is refused. Builds into a temporary directory, which it removes; exits 77
# (skipped) without clang or a libFuzzer runtime.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-2000}
# A target it does not have is a usage error (exit 2) that names the targets, before anything is built.
usage=$(bash "$root/fuzz/run_fuzzer.sh" lexer 2>&1); rc=$?
if [ $rc -ne 2 ] || [[ "$usage" != *"parser or compiler, not 'lexer'"* ]]; then
  echo "FAIL: run_fuzzer.sh lexer exited $rc: $usage"; exit 1
fi
cxx=$(command -v clang++-19 || command -v clang++ || true)
[ -n "$cxx" ] || { echo "skipped: no clang++"; exit 77; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# libFuzzer ships with clang's compiler-rt, which some clang packages leave out.
echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' >"$work/probe.cpp"
if ! "$cxx" -fsanitize=fuzzer "$work/probe.cpp" -o "$work/probe" >/dev/null 2>&1; then
  echo "skipped: $cxx has no libFuzzer runtime"; exit 77
fi
for target in parser compiler; do
  log="$work/$target.log"
  target_runs=$([ "$target" = compiler ] && echo $(( runs / 20 )) || echo "$runs")
  CUSYNC_FUZZ_DIR="$work/fuzz" CXX_FUZZ="$cxx" bash "$root/fuzz/run_fuzzer.sh" "$target" 600 -seed=1 \
    -runs="$target_runs" >"$log" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL: run_fuzzer.sh $target exited $rc"; grep -E "error|undefined reference|ERROR|SUMMARY" "$log" | head -20
    exit 1
  fi
  done_line=$(grep -E "^Done [0-9]+ runs" "$log") || { echo "FAIL: $target: no run count"; tail -20 "$log"; exit 1; }
  if [ -n "$(ls -A "$work/fuzz/$target/crashes")" ]; then
    echo "FAIL: $target: artifacts $(ls "$work/fuzz/$target/crashes")"; exit 1
  fi
  echo "$target fuzzer: $done_line"
done
