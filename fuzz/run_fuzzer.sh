#!/usr/bin/env bash
# Builds one of the spec compiler's libFuzzer targets with clang + libFuzzer + AddressSanitizer/UBSan and runs it.
#   fuzz/run_fuzzer.sh [parser|compiler] [SECONDS] [LIBFUZZER OPTIONS...]   (default: parser, 300 s)
# parser: bytes -> parser -> isl model -> bounds check (fast: thousands of inputs a second). compiler: on through the
# bound model, dependency facts, policy candidates and their proofs, tile orders and the header (tens a second).
# The corpus starts from the bundled specs and lives in build-fuzz/<target>/corpus (not committed); crashes are
# written to build-fuzz/<target>/crashes/. Prints libFuzzer's final statistics (executions, coverage) at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${1:-parser}
seconds=${2:-300}
shift $(( $# < 2 ? $# : 2 ))  # the rest go to libFuzzer (e.g. -seed=1 -runs=N for a repeatable run)
case "$target" in
  parser | compiler) ;;
  *) echo "run_fuzzer.sh: target is parser or compiler, not '$target'" >&2; exit 2 ;;
esac
out=${CUSYNC_FUZZ_DIR:-$root/build-fuzz}/$target
cxx=${CXX_FUZZ:-$(command -v clang++-19 || command -v clang++)}
mkdir -p "$out/corpus" "$out/crashes"

# Every source of the dsl and analysis libraries (dsl/CMakeLists.txt, analysis/CMakeLists.txt), and for the compiler
# the codegen library's: a file added there and not here fails the link (ctest frontend.fuzzers_smoke says so in CI).
sources=(dsl/src/cpp_names.cpp dsl/src/diagnostic.cpp dsl/src/lexer.cpp dsl/src/parser.cpp dsl/src/print.cpp
         analysis/src/expression_lowering.cpp analysis/src/isl_model.cpp analysis/src/parameter_products.cpp
         analysis/src/sampling.cpp analysis/src/stage_graph.cpp analysis/src/bounds_check.cpp
         analysis/src/dependency_facts.cpp fuzz/${target}_fuzzer.cpp)
includes=(-Idsl/include -Idsl/src -Ianalysis/include -Ianalysis/src)
if [ "$target" = compiler ]; then
  # Expanded in the repository, not in the caller's directory (ctest runs this from the build tree).
  mapfile -t codegen_sources < <(cd "$root" && printf '%s\n' codegen/src/*.cpp)
  sources+=("${codegen_sources[@]}")
  includes+=(-Icodegen/include -Icodegen/src)
fi
binary="$out/${target}_fuzzer"
if [ ! -x "$binary" ] || [ -n "$(cd "$root" && find "${sources[@]}" -newer "$binary" 2>/dev/null)" ]; then
  echo "fuzz: building $target with $cxx"
  (cd "$root" && "$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
     "${includes[@]}" "${sources[@]}" $(pkg-config --cflags --libs isl) -lfmt -o "$binary")
fi
cp -n "$root"/examples/*/*.dep "$out/corpus/" 2>/dev/null || true
# A hang is a unit past the timeout. The compiler's front end enumerates up to 2 million tile pairs for its --check
# statistics (dependency_facts.h: about 5 s in a release build), which takes over a minute under the sanitizers
# (session 31: a spec with 1454-column grids, 73 s): 180 s for it, 10 s for the parser.
"$binary" "$out/corpus" -dict="$root/fuzz/parser.dict" -max_total_time="$seconds" \
  -timeout="$([ "$target" = compiler ] && echo 180 || echo 10)" -rss_limit_mb=4096 -max_len=4096 \
  -artifact_prefix="$out/crashes/" -print_final_stats=1 "$@"
