// libFuzzer target for the .dep front end: arbitrary bytes -> parser -> (if it parses) isl model and bounds check,
// plus rendering of every diagnostic. Any crash, sanitizer report, hang or exception escaping is a bug: bad input
// must only ever produce diagnostics.
#include <cusync/analysis/bounds_check.h>
#include <cusync/analysis/isl_model.h>
#include <cusync/dsl/parser.h>
#include <cusync/dsl/print.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  cusync::dsl::Diagnostics diagnostics;
  cusync::dsl::SourceTexts sources;
  sources.add("fuzz.dep", std::string(text));
  auto spec = cusync::dsl::parseSpec(text, "fuzz.dep", diagnostics);
  if (spec) {
    for (const auto& grid : spec->grids) {
      for (const auto& extent : grid.extents) (void)cusync::dsl::toString(extent);
    }
    for (const auto& dependency : spec->dependencies) {
      (void)cusync::dsl::toString(dependency.consumerTile);
      for (const auto& producer : dependency.producers) {
        for (const auto& tiles : producer.tiles) (void)cusync::dsl::toString(tiles);
      }
    }
    auto model = cusync::analysis::IslModel::build(*spec, {}, diagnostics);
    if (model) cusync::analysis::checkBounds(*model, diagnostics);
  }
  (void)cusync::dsl::render(diagnostics, sources);
  return 0;
}
