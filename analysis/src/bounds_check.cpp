#include <cusync/analysis/bounds_check.h>
#include <cusync/dsl/print.h>

#include "expression_lowering.h"
#include "sampling.h"

#include <isl/map.h>

#include <fmt/format.h>

namespace cusync::analysis {
namespace {

// "48 x 8 tiles (x in [0, 48), y in [0, 8))" for the extents at the given parameter values.
std::string describeGrid(const GridModel& grid, const ParameterValues& parameters) {
  std::string sizes;
  std::string ranges;
  for (std::size_t i = 0; i < grid.extents.size(); ++i) {
    isl::pw_aff extent = grid.extents[i];
    std::string value = "?";
    if (auto constant = detail::ExpressionLowering::constantValue(extent)) {
      value = std::to_string(*constant);
    } else if (!parameters.empty()) {
      isl::set at = fixParameters(extent.domain().params(), parameters);
      isl::pw_aff fixed = extent.intersect_params(at);
      if (auto v = detail::toInt64(fixed.max_val())) value = std::to_string(*v);
    }
    sizes += (i ? " x " : "") + value;
    ranges += fmt::format("{}{} in [0, {})", i ? ", " : "", grid.grid.dimensions[i], value);
  }
  return fmt::format("{} tiles ({})", sizes, ranges);
}

}  // namespace

std::vector<BoundsViolation> checkBounds(const IslModel& model, dsl::Diagnostics& diagnostics) {
  std::vector<BoundsViolation> violations;
  for (const auto& dependency : model.dependencies()) {
    for (std::size_t p = 0; p < dependency.producers.size(); ++p) {
      const ProducerModel& producer = dependency.producers[p];
      const GridModel& producerGrid = model.grid(producer.producer.grid);
      for (std::size_t t = 0; t < producer.tileSetRelations.size(); ++t) {
        isl::map outside = isl::manage(isl_map_subtract_range(
            producer.tileSetRelations[t].intersect_params(model.context()).release(), producerGrid.domain.copy()));
        if (outside.is_empty()) continue;

        isl::set pairs = outside.wrap();
        ParameterValues parameters = detail::sampleParameters(pairs.params(), model.symbolicParameters());
        auto point = detail::firstPoint(fixParameters(pairs, parameters));
        if (!point) continue;  // cannot happen for a non-empty set; keep going rather than crash

        BoundsViolation violation;
        violation.dependency = dependency.dependency.name;
        violation.producerGrid = producer.producer.grid;
        violation.producerIndex = p;
        violation.tileSetIndex = t;
        violation.example = model.tilePairOf(*point);
        violation.parameters = parameters;
        const spec::TileSet& tileSet = producer.producer.tiles[t];
        violation.location = tileSet.location.line > 0 ? tileSet.location : dependency.dependency.location;

        auto& d = diagnostics.error(violation.location,
                                    fmt::format("dependency '{}' reads tiles outside producer grid '{}'",
                                                violation.dependency, violation.producerGrid));
        d.notes.push_back(fmt::format("consumer tile {} reads producer tile {}, but {} is {}",
                                      violation.example.consumer.toString(), violation.example.producer.toString(),
                                      violation.producerGrid, describeGrid(producerGrid, parameters)));
        d.notes.push_back(fmt::format("the tiles read: {}", dsl::toString(tileSet)));
        if (!parameters.empty()) {
          d.notes.push_back(fmt::format("with symbolic parameters {}", detail::describeParameters(parameters)));
        }
        violations.push_back(std::move(violation));
      }
    }
  }
  return violations;
}

}  // namespace cusync::analysis
