#include "check_summary.h"

#include <cusync/dsl/print.h>

#include <fmt/format.h>

namespace cusync::cusyncgen {
namespace {

constexpr const char* kExtentNames[] = {"x", "y", "z"};

std::string extentValue(const analysis::GridModel& grid, std::size_t i) {
  return grid.extentValues[i] ? std::to_string(*grid.extentValues[i]) : "?";
}

std::string symbolicValues(const analysis::IslModel& bound, const analysis::IslModel& symbolic) {
  std::string out;
  for (const auto& name : symbolic.symbolicParameters()) {
    // The symbolic model's values: they include products of symbolic parameters (B*S), which it adds.
    out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", name, symbolic.parameterValues().at(name));
  }
  return out;
}

std::string parametersSection(const CheckedSpec& checked) {
  std::string out = "parameters:\n";
  if (checked.spec.parameters.empty()) out += "  (none)\n";
  for (const auto& p : checked.spec.parameters) {
    std::int64_t value = checked.boundModel.parameterValues().at(p.name);
    std::string note;
    if (value != p.defaultValue) note = fmt::format(" (set by -D; default {})", p.defaultValue);
    if (p.symbolic) {
      std::string constraints;
      for (const auto& c : p.constraints) constraints += (constraints.empty() ? "" : ", ") + dsl::toString(c);
      note += fmt::format(" symbolic{}{}", constraints.empty() ? "" : ": ", constraints);
    }
    out += fmt::format("  {} = {}{}\n", p.name, value, note);
  }
  return out;
}

std::string gridsSection(const CheckedSpec& checked) {
  std::string out = "grids:\n";
  for (const auto& grid : checked.boundModel.grids()) {
    std::string dims, extents;
    std::int64_t tiles = 1;
    for (std::size_t i = 0; i < grid.grid.dimensions.size(); ++i) {
      dims += (i ? ", " : "") + grid.grid.dimensions[i];
      std::string written = dsl::toString(grid.grid.extents[i]);
      std::string value = extentValue(grid, i);
      extents += fmt::format("{}{}.{} = {}{}", i ? ", " : "", grid.grid.name, kExtentNames[i], written,
                             written == value ? "" : " = " + value);
      tiles *= grid.extentValues[i].value_or(0);
    }
    out += fmt::format("  {}({}): {}; {} tiles\n", grid.grid.name, dims, extents, tiles);
  }
  return out;
}

std::string rangedSection(const analysis::ProducerFacts& producer, const analysis::GridModel& grid) {
  std::string out;
  for (const auto& tileSet : producer.tileSets) {
    for (const auto& r : tileSet.ranged) {
      std::string moves;
      for (auto d : r.producerDimensions) {
        moves += fmt::format("{}{}", moves.empty() ? "" : ", ", grid.grid.dimensions[d]);
      }
      // Bounds that move with the consumer tile (a halo, a k-range) have no one value to show.
      std::string bounds = r.lower && r.upper ? fmt::format(" = [{}, {})", *r.lower, *r.upper)
                                              : std::string(" (bounds depend on the consumer tile)");
      out += fmt::format("      ranged: {} over {}{}{}\n", r.dimension, dsl::toString(r.range), bounds,
                         moves.empty() ? " (varies no producer coordinate)"
                                        : fmt::format(", varies producer coordinate {}", moves));
    }
  }
  if (out.empty()) out = "      ranged: none\n";
  return out;
}

}  // namespace

std::string describeTilesPerConsumer(const analysis::ProducerFacts& producer, const analysis::GridModel& grid) {
  if (!producer.uniform()) {
    return fmt::format("{} to {} tiles (depends on the consumer tile)", producer.minTilesPerConsumer,
                       producer.maxTilesPerConsumer);
  }
  std::int64_t count = producer.maxTilesPerConsumer;
  std::vector<std::size_t> varying;
  for (std::size_t d = 0; d < producer.maxTilesAlong.size(); ++d) {
    if (producer.maxTilesAlong[d] > 1) varying.push_back(d);
  }
  std::string along;
  for (std::size_t d = 0; d < producer.maxTilesAlong.size(); ++d) {
    along += fmt::format("{}{}: {}", along.empty() ? "" : ", ", grid.grid.dimensions[d], producer.maxTilesAlong[d]);
  }
  if (varying.empty()) return fmt::format("{} tile{} (along {})", count, count == 1 ? "" : "s", along);
  if (varying.size() == 1) {
    std::size_t d = varying[0];
    bool whole = grid.extentValues[d] && producer.minTilesAlong[d] == *grid.extentValues[d] &&
                 producer.maxTilesAlong[d] == count;
    if (whole) {
      static constexpr const char* kWhole[] = {"row", "column", "slice"};
      return fmt::format("1 {} of {}.{} = {} tiles (along {})", kWhole[d], grid.grid.name, kExtentNames[d], count,
                         along);
    }
  }
  return fmt::format("{} tiles (along {})", count, along);
}

std::string checkSummary(const CheckedSpec& checked) {
  const auto& spec = checked.spec;
  std::string out = fmt::format("spec {} ({})\n", spec.name, checked.specPath);
  std::string symbolic = symbolicValues(checked.boundModel, checked.symbolicModel);
  out += parametersSection(checked);
  out += gridsSection(checked);
  if (!symbolic.empty()) out += fmt::format("  (extents and counts at {})\n", symbolic);

  out += "dependencies:\n";
  for (const auto& facts : checked.facts) {
    const auto& dependency = checked.symbolicModel.dependency(facts.dependency);
    out += fmt::format("  {}: consumer {} {} ({} tiles)\n", facts.dependency, facts.consumerGrid,
                       dsl::toString(dependency.dependency.consumerTile), facts.consumerTiles);
    for (std::size_t p = 0; p < facts.producers.size(); ++p) {
      const auto& producer = facts.producers[p];
      const auto& grid = checked.boundModel.grid(producer.grid);
      std::string tiles;
      for (const auto& t : dependency.dependency.producers[p].tiles) {
        tiles += (tiles.empty() ? "" : ", ") + dsl::toString(t);
      }
      out += fmt::format("    producer {}: {}\n", producer.grid, tiles);
      if (!producer.counted) {
        out += fmt::format("      per consumer tile: {}; formula {} (from the spec, not checked)\n",
                           producer.notCountedReason, producer.tilesPerConsumerFormula);
        out += rangedSection(producer, grid);
        continue;
      }
      out += fmt::format("      per consumer tile: {}{}\n", describeTilesPerConsumer(producer, grid),
                         producer.tilesPerConsumerFormula.empty()
                             ? ""
                             : fmt::format("; formula {}", producer.tilesPerConsumerFormula));
      out += rangedSection(producer, grid);
    }
  }

  std::string scope = "for the given parameter values";
  if (!checked.symbolicModel.symbolicParameters().empty()) {
    std::string names;
    for (const auto& n : checked.symbolicModel.symbolicParameters()) names += (names.empty() ? "" : ", ") + n;
    scope = fmt::format("for every value of {} the constraints allow", names);
  }
  out += fmt::format("bounds: every producer tile read lies inside its grid, {}\n", scope);
  out += "verdict: ok\n";
  return out;
}

}  // namespace cusync::cusyncgen
