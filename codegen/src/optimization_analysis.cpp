#include <cusync/codegen/optimization_analysis.h>
#include <cusync/codegen/parameter_condition.h>

#include <isl/aff.h>
#include <isl/set.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

namespace cusync::codegen {
namespace {

// The grids a consumer waits on directly or through a chain, in the order of the spec's grid declarations.
std::vector<std::string> transitiveProducers(const spec::Spec& spec, const std::string& consumer) {
  std::set<std::string> found;
  std::function<void(const std::string&)> visit = [&](const std::string& grid) {
    for (const spec::Dependency& dependency : spec.dependencies) {
      if (dependency.consumerGrid != grid) continue;
      for (const spec::ProducerTiles& producer : dependency.producers)
        if (found.insert(producer.grid).second) visit(producer.grid);
    }
  };
  visit(consumer);
  std::vector<std::string> ordered;
  for (const spec::Grid& grid : spec.grids)
    if (found.count(grid.name) && grid.name != consumer) ordered.push_back(grid.name);
  return ordered;
}

// The parameter values (a parameter set) for which the grids' tiles together are at most `limit`, or nullopt
// if the tile count is not affine in the symbolic parameters.
std::optional<std::string> holdsFor(const analysis::IslModel& model, const std::vector<std::string>& grids,
                                    std::int64_t limit) {
  if (model.symbolicParameters().empty()) return std::nullopt;
  try {
    std::optional<isl::pw_aff> total;
    for (const std::string& name : grids) {
      const analysis::GridModel& grid = model.grid(name);
      isl::pw_aff tiles = grid.extents.front();
      for (std::size_t i = 1; i < grid.extents.size(); ++i) {
        if (!isl_pw_aff_is_cst(tiles.get()) && !isl_pw_aff_is_cst(grid.extents[i].get())) return std::nullopt;
        tiles = tiles.mul(grid.extents[i]);
      }
      total = total ? total->add(tiles) : tiles;
    }
    isl::pw_aff bound = isl::manage(isl_pw_aff_add_constant_val(total->sub(*total).release(),
                                                               isl_val_int_from_si(model.ctx().get(), limit)));
    isl::set holds = total->le_set(bound).params().intersect_params(model.context());
    return parameterCondition(holds);
  } catch (const isl::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::vector<StageOptimization> analyzeOptimizations(const analysis::IslModel& symbolic,
                                                    const analysis::IslModel& concrete,
                                                    const OptimizationOptions& options) {
  std::vector<StageOptimization> stages;
  const spec::Spec& spec = concrete.spec();
  for (const spec::Dependency& dependency : spec.dependencies) {
    StageOptimization stage;
    stage.dependency = dependency.name;
    stage.consumerGrid = dependency.consumerGrid;
    stage.grids.push_back(dependency.consumerGrid);
    stage.directGrids.push_back(dependency.consumerGrid);
    for (const spec::Grid& grid : spec.grids)
      for (const spec::ProducerTiles& producer : dependency.producers)
        if (producer.grid == grid.name && grid.name != dependency.consumerGrid &&
            std::find(stage.directGrids.begin(), stage.directGrids.end(), grid.name) == stage.directGrids.end())
          stage.directGrids.push_back(grid.name);
    for (const std::string& producer : transitiveProducers(spec, dependency.consumerGrid))
      stage.grids.push_back(producer);
    stage.occupancy = -1;
    for (const std::string& grid : stage.grids) {
      auto it = options.occupancy.find(grid);
      std::int64_t occupancy = it == options.occupancy.end() ? options.defaultOccupancy : it->second;
      stage.occupancy = stage.occupancy < 0 ? occupancy : std::min(stage.occupancy, occupancy);
      std::int64_t tiles = 1;
      for (const auto& extent : concrete.grid(grid).extentValues) tiles *= extent.value_or(1);
      stage.tileCounts[grid] = tiles;
      stage.totalTiles += tiles;
      if (std::find(stage.directGrids.begin(), stage.directGrids.end(), grid) != stage.directGrids.end())
        stage.directTiles += tiles;
    }
    stage.slots = options.smCount * stage.occupancy;
    stage.avoidWaitKernel = stage.totalTiles <= stage.slots;
    stage.avoidCustomOrder = stage.directTiles <= 2 * stage.slots;
    stage.waitKernelAvoidableFor = holdsFor(symbolic, stage.grids, stage.slots).value_or("");
    stage.customOrderAvoidableFor = holdsFor(symbolic, stage.directGrids, 2 * stage.slots).value_or("");
    stages.push_back(std::move(stage));
  }
  return stages;
}

}  // namespace cusync::codegen
