// libFuzzer target for the whole spec compiler: arbitrary bytes -> parser -> isl models (symbolic and bound) ->
// bounds check -> dependency facts -> policy candidates, proofs, tile orders, optimizations -> header and summaries.
// Any crash, sanitizer report, hang or escaping exception is a bug: a spec that passes the front end must compile to a
// header (candidates that fail their proofs are dropped, which is a result, not a failure).
#include <cusync/analysis/bounds_check.h>
#include <cusync/analysis/dependency_facts.h>
#include <cusync/analysis/isl_model.h>
#include <cusync/codegen/generation.h>
#include <cusync/codegen/header_emitter.h>
#include <cusync/codegen/summary.h>
#include <cusync/dsl/parser.h>
#include <cusync/dsl/print.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  cusync::dsl::Diagnostics diagnostics;
  auto spec = cusync::dsl::parseSpec(text, "fuzz.dep", diagnostics);
  if (!spec) return 0;
  cusync::analysis::ModelOptions symbolicOptions;
  auto symbolic = cusync::analysis::IslModel::build(*spec, symbolicOptions, diagnostics);
  if (!symbolic) return 0;
  cusync::analysis::checkBounds(*symbolic, diagnostics);
  if (diagnostics.hasErrors()) return 0;
  cusync::analysis::ModelOptions boundOptions = symbolicOptions;
  boundOptions.bindSymbolicParameters = true;
  auto bound = cusync::analysis::IslModel::build(*spec, boundOptions, diagnostics);
  if (!bound) return 0;
  (void)cusync::analysis::computeDependencyFacts(*bound);
  cusync::codegen::OptimizationOptions machine;
  const cusync::codegen::Generation generation =
      cusync::codegen::generate(cusync::codegen::ProofModels{*symbolic, *bound}, machine);
  (void)cusync::codegen::emitHeader(generation, "fuzz.dep");
  (void)cusync::codegen::textSummary(generation);
  (void)cusync::codegen::jsonSummary(generation, std::string());
  return 0;
}
