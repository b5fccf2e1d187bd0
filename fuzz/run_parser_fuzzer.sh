#!/usr/bin/env bash
# Builds the .dep front-end fuzzer with clang + libFuzzer + AddressSanitizer/UBSan and runs it.
#   fuzz/run_parser_fuzzer.sh [SECONDS]   (default 300)
# The corpus starts from the bundled specs and lives in build-fuzz/corpus (not committed); crashes are written to
# build-fuzz/crashes/. Prints libFuzzer's final statistics (executions, coverage) at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-300}
out=${CUSYNC_FUZZ_DIR:-$root/build-fuzz}
cxx=${CXX_FUZZ:-$(command -v clang++-19 || command -v clang++)}
mkdir -p "$out/corpus" "$out/crashes"

# Every source of the dsl and analysis libraries (dsl/CMakeLists.txt, analysis/CMakeLists.txt): a file added there
# and not here fails the link (ctest fuzz.parser_fuzzer_smoke says so in CI).
sources=(dsl/src/cpp_names.cpp dsl/src/diagnostic.cpp dsl/src/lexer.cpp dsl/src/parser.cpp dsl/src/print.cpp
         analysis/src/expression_lowering.cpp analysis/src/isl_model.cpp analysis/src/parameter_products.cpp
         analysis/src/sampling.cpp analysis/src/stage_graph.cpp analysis/src/bounds_check.cpp
         analysis/src/dependency_facts.cpp fuzz/parser_fuzzer.cpp)
if [ ! -x "$out/parser_fuzzer" ] || [ -n "$(find "${sources[@]/#/$root/}" -newer "$out/parser_fuzzer" 2>/dev/null)" ]; then
  echo "fuzz: building with $cxx"
  (cd "$root" && "$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
     -Idsl/include -Idsl/src -Ianalysis/include -Ianalysis/src "${sources[@]}" \
     $(pkg-config --cflags --libs isl) -lfmt -o "$out/parser_fuzzer")
fi
cp -n "$root"/examples/*/*.dep "$out/corpus/" 2>/dev/null || true
"$out/parser_fuzzer" "$out/corpus" -dict="$root/fuzz/parser.dict" -max_total_time="$seconds" -timeout=10 \
  -rss_limit_mb=2048 -max_len=4096 -artifact_prefix="$out/crashes/" -print_final_stats=1
