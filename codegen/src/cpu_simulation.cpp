#include <cusync/codegen/cpu_simulation.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <sstream>

namespace cusync::codegen {
namespace {

std::string tileText(const std::string& grid, const SimulatedTile& tile) {
  return grid + "[" + std::to_string(tile[0]) + ", " + std::to_string(tile[1]) + ", " + std::to_string(tile[2]) + "]";
}

std::vector<SimulatedTile> tilesOf(const SimulatedStage& stage) {
  std::vector<SimulatedTile> tiles;
  for (std::int64_t z = 0; z < stage.extents[2]; ++z)
    for (std::int64_t y = 0; y < stage.extents[1]; ++y)
      for (std::int64_t x = 0; x < stage.extents[0]; ++x) tiles.push_back({x, y, z});
  return tiles;
}

// One semaphore a block waits on: policy, semaphore, target value.
struct Requirement {
  std::size_t policy;
  std::int64_t semaphore;
  std::int64_t value;
  SimulatedTile producerTile;  // one tile behind it, for messages
  friend bool operator<(const Requirement& a, const Requirement& b) {
    return std::tie(a.policy, a.semaphore, a.value) < std::tie(b.policy, b.semaphore, b.value);
  }
};

struct Block {
  std::size_t stage;
  SimulatedTile tile;
  std::vector<Requirement> requirements;  // distinct semaphores it waits on
  std::int64_t persistentIndex = -1;      // a persistent stage's block index (-1: one block per tile)
};

// What the dispatcher starts: a tile of a stage of one block per tile, or a persistent block.
struct Dispatched {
  std::size_t stage;
  SimulatedTile tile;            // one block per tile
  std::int64_t persistentIndex;  // persistent stages (-1 otherwise)
};

}  // namespace

SimulationResult simulate(const SimulationSetup& setup) {
  SimulationResult result;
  auto fail = [&](std::string message) {
    result.ok = false;
    result.failure = std::move(message);
    return result;
  };

  // Static checks: orders are bijections, semaphores are in range.
  std::deque<Dispatched> dispatch;  // in launch order, then tile (or persistent block) order
  std::vector<std::vector<SimulatedTile>> ordered(setup.stages.size());  // each stage's tiles in its order
  std::vector<std::size_t> nextTicket(setup.stages.size(), 0);            // persistent stages drawing tickets
  std::map<std::string, std::size_t> stageOf;
  for (std::size_t s = 0; s < setup.stages.size(); ++s) {
    const SimulatedStage& stage = setup.stages[s];
    stageOf[stage.grid] = s;
    std::vector<SimulatedTile> tiles = tilesOf(stage);
    std::vector<std::pair<std::int64_t, SimulatedTile>> byIndex;
    std::set<std::int64_t> seen;
    for (const SimulatedTile& tile : tiles) {
      std::int64_t index = stage.order(tile);
      if (index < 0 || index >= static_cast<std::int64_t>(tiles.size()))
        return fail("order of " + stage.grid + " maps " + tileText(stage.grid, tile) + " to " +
                    std::to_string(index) + ", outside [0, " + std::to_string(tiles.size()) + ")");
      if (!seen.insert(index).second)
        return fail("order of " + stage.grid + " gives index " + std::to_string(index) + " to two tiles, one is " +
                    tileText(stage.grid, tile));
      byIndex.emplace_back(index, tile);
    }
    std::sort(byIndex.begin(), byIndex.end());
    for (const auto& [index, tile] : byIndex) ordered[s].push_back(tile);
    if (stage.persistentBlocks < 0) return fail(stage.grid + ": a negative number of persistent blocks");
    if (stage.persistentBlocks == 0)
      for (const SimulatedTile& tile : ordered[s]) dispatch.push_back({s, tile, -1});
    else
      for (std::int64_t b = 0; b < stage.persistentBlocks; ++b) dispatch.push_back({s, SimulatedTile{}, b});
  }
  std::vector<std::vector<std::int64_t>> counters(setup.policies.size());
  for (std::size_t p = 0; p < setup.policies.size(); ++p) {
    const SimulatedPolicy& policy = setup.policies[p];
    if (!stageOf.count(policy.producerGrid) || !stageOf.count(policy.consumerGrid))
      return fail(policy.name + ": unknown stage");
    if (stageOf[policy.producerGrid] >= stageOf[policy.consumerGrid])
      return fail(policy.name + ": the producer is not launched before its consumer");
    for (const SimulatedTile& tile : tilesOf(setup.stages[stageOf[policy.producerGrid]])) {
      std::int64_t s = policy.sem(tile);
      if (s < 0 || s >= policy.semaphoreCount)
        return fail(policy.name + ": sem(" + tileText(policy.producerGrid, tile) + ") = " + std::to_string(s) +
                    " is outside [0, " + std::to_string(policy.semaphoreCount) + ")");
    }
    counters[p].assign(static_cast<std::size_t>(policy.semaphoreCount), 0);
  }

  std::vector<std::set<SimulatedTile>> finished(setup.stages.size());
  auto admit = [&](std::size_t stage, const SimulatedTile& tile) {
    Block block{stage, tile, {}};
    std::set<Requirement> distinct;
    for (std::size_t p = 0; p < setup.policies.size(); ++p) {
      const SimulatedPolicy& policy = setup.policies[p];
      if (policy.consumerGrid != setup.stages[stage].grid) continue;
      auto reads = policy.reads.find(tile);
      if (reads == policy.reads.end()) continue;
      for (const SimulatedTile& producer : reads->second)
        distinct.insert({p, policy.sem(producer), policy.value(producer), producer});
    }
    block.requirements.assign(distinct.begin(), distinct.end());
    return block;
  };
  auto satisfied = [&](const Block& block) {
    return std::all_of(block.requirements.begin(), block.requirements.end(), [&](const Requirement& r) {
      return counters[r.policy][static_cast<std::size_t>(r.semaphore)] >= r.value;
    });
  };

  // Per persistent block (stage, block index): its units drawn (a ticket each, or its static sequence) and not yet
  // started, in order, and how far into its static sequence it has drawn.
  struct PersistentBlockUnits {
    std::deque<std::size_t> drawn;
    std::int64_t staticPosition = 0;
  };
  std::map<std::pair<std::size_t, std::int64_t>, PersistentBlockUnits> persistentUnits;
  // Persistent block `persistentIndex` of `stage` takes its next unit: it keeps 1 + unitsDrawnAhead units drawn (the
  // stage's next tiles by ticket, or its next static ones), enters `resident` with the first, or stops if it has
  // none.
  auto takeNextUnit = [&](std::size_t stage, std::int64_t persistentIndex, std::vector<Block>& resident) {
    const SimulatedStage& setupStage = setup.stages[stage];
    const std::vector<SimulatedTile>& tiles = ordered[stage];
    PersistentBlockUnits& units = persistentUnits[{stage, persistentIndex}];
    std::deque<std::size_t>& drawn = units.drawn;
    while (static_cast<std::int64_t>(drawn.size()) < 1 + std::max<std::int64_t>(setupStage.unitsDrawnAhead, 0)) {
      const std::size_t index =
          setupStage.staticUnits
              ? static_cast<std::size_t>(persistentIndex + units.staticPosition++ * setupStage.persistentBlocks)
              : nextTicket[stage]++;
      if (index >= tiles.size()) break;
      drawn.push_back(index);
    }
    if (drawn.empty()) return;
    Block block = admit(stage, tiles[drawn.front()]);
    drawn.pop_front();
    block.persistentIndex = persistentIndex;
    resident.push_back(std::move(block));
  };

  std::mt19937_64 random(setup.seed);
  std::vector<Block> resident;
  std::int64_t total = 0;
  for (const std::vector<SimulatedTile>& tiles : ordered) total += static_cast<std::int64_t>(tiles.size());
  while (result.finishedTiles < total) {
    while (static_cast<std::int64_t>(resident.size()) < setup.slots && !dispatch.empty()) {
      const Dispatched next = dispatch.front();
      dispatch.pop_front();
      if (next.persistentIndex < 0)
        resident.push_back(admit(next.stage, next.tile));
      else
        takeNextUnit(next.stage, next.persistentIndex, resident);
    }
    if (resident.empty())
      return fail("every block has stopped after " + std::to_string(result.finishedTiles) + " of " +
                  std::to_string(total) + " tiles");
    // Safety: every resident block whose waits are satisfied could pass them now, so everything it reads must
    // have been posted already. Checking all of them (not only the one that runs next) makes the check
    // independent of the interleaving the random choice explores.
    std::vector<std::size_t> runnable;
    for (std::size_t i = 0; i < resident.size(); ++i) {
      if (!satisfied(resident[i])) continue;
      const std::string& grid = setup.stages[resident[i].stage].grid;
      for (const SimulatedPolicy& policy : setup.policies) {
        if (policy.consumerGrid != grid) continue;
        auto reads = policy.reads.find(resident[i].tile);
        if (reads == policy.reads.end()) continue;
        for (const SimulatedTile& producer : reads->second)
          if (!finished[stageOf[policy.producerGrid]].count(producer))
            return fail(policy.name + ": " + tileText(grid, resident[i].tile) + " passes its wait before " +
                        tileText(policy.producerGrid, producer) + " posted (after " +
                        std::to_string(result.finishedTiles) + " tiles)");
      }
      runnable.push_back(i);
    }
    if (runnable.empty()) {
      const Block& stuck = resident.front();
      std::ostringstream message;
      message << "deadlock after " << result.finishedTiles << " of " << total << " tiles: "
              << tileText(setup.stages[stuck.stage].grid, stuck.tile) << " waits";
      for (const Requirement& r : stuck.requirements)
        if (counters[r.policy][static_cast<std::size_t>(r.semaphore)] < r.value)
          message << " on " << setup.policies[r.policy].name << " semaphore " << r.semaphore << " (of "
                  << tileText(setup.policies[r.policy].producerGrid, r.producerTile) << ") at "
                  << counters[r.policy][static_cast<std::size_t>(r.semaphore)] << ", expecting " << r.value;
      return fail(message.str());
    }
    std::size_t pick = runnable[std::uniform_int_distribution<std::size_t>(0, runnable.size() - 1)(random)];
    Block block = resident[pick];
    resident.erase(resident.begin() + static_cast<std::ptrdiff_t>(pick));
    const std::string& grid = setup.stages[block.stage].grid;
    for (std::size_t p = 0; p < setup.policies.size(); ++p)
      if (setup.policies[p].producerGrid == grid)
        ++counters[p][static_cast<std::size_t>(setup.policies[p].sem(block.tile))];
    finished[block.stage].insert(block.tile);
    ++result.finishedTiles;
    // A persistent block keeps its slot for its next unit, if it has one.
    if (block.persistentIndex >= 0) takeNextUnit(block.stage, block.persistentIndex, resident);
  }
  result.ok = true;
  return result;
}

SimulatedTile concreteExtents(const analysis::IslModel& concrete, const std::string& grid) {
  SimulatedTile extents{1, 1, 1};
  const analysis::GridModel& model = concrete.grid(grid);
  for (std::size_t d = 0; d < model.extentValues.size() && d < 3; ++d) extents[d] = model.extentValues[d].value_or(1);
  return extents;
}

std::vector<SimulatedStage> simulatedStages(const analysis::IslModel& concrete,
                                            const std::map<std::string, IndexExpression>& orders) {
  const spec::Spec& spec = concrete.spec();
  // Launch order: repeatedly launch a grid whose producers are all launched (declaration order breaks ties).
  std::vector<std::string> launched;
  std::set<std::string> done;
  while (launched.size() < spec.grids.size()) {
    bool progressed = false;
    for (const spec::Grid& grid : spec.grids) {
      if (done.count(grid.name)) continue;
      bool ready = true;
      for (const spec::Dependency& dependency : spec.dependencies)
        if (dependency.consumerGrid == grid.name)
          for (const spec::ProducerTiles& producer : dependency.producers)
            if (producer.grid != grid.name && !done.count(producer.grid)) ready = false;
      if (!ready) continue;
      launched.push_back(grid.name);
      done.insert(grid.name);
      progressed = true;
    }
    if (!progressed) break;  // a cycle: the simulation reports the misordered policy
  }
  for (const spec::Grid& grid : spec.grids)
    if (!done.count(grid.name)) launched.push_back(grid.name);

  std::vector<SimulatedStage> stages;
  for (const std::string& grid : launched) {
    SimulatedStage stage;
    stage.grid = grid;
    stage.extents = concreteExtents(concrete, grid);
    auto it = orders.find(grid);
    IndexExpression index = it != orders.end()
                                ? it->second
                                : coordinate(0) + extent(0) * (coordinate(1) + extent(1) * coordinate(2));
    SimulatedTile extents = stage.extents;
    stage.order = [index, extents](const SimulatedTile& tile) { return evaluate(index, tile.data(), extents.data()); };
    stages.push_back(std::move(stage));
  }
  return stages;
}

std::map<SimulatedTile, std::vector<SimulatedTile>> simulatedReads(const analysis::IslModel& concrete,
                                                                  const std::string& dependency,
                                                                  std::size_t producerIndex) {
  const analysis::ProducerModel& producer = concrete.dependency(dependency).producers[producerIndex];
  isl::map relation = producer.relation.intersect_range(concrete.grid(producer.producer.grid).domain);
  std::map<SimulatedTile, std::vector<SimulatedTile>> reads;
  auto toTile = [](const analysis::ConcreteTile& tile) {
    SimulatedTile result{0, 0, 0};
    for (std::size_t d = 0; d < tile.coordinates.size() && d < 3; ++d) result[d] = tile.coordinates[d];
    return result;
  };
  for (const analysis::TilePair& pair : analysis::tilePairsOf(concrete, relation))
    reads[toTile(pair.consumer)].push_back(toTile(pair.producer));
  return reads;
}

SimulatedPolicy simulatedPolicy(const analysis::IslModel& concrete, const std::string& name,
                                const std::string& dependency, std::size_t producerIndex,
                                const IndexExpression& semaphore, const IndexExpression& value,
                                const IndexExpression& semaphoreCount) {
  const analysis::DependencyModel& model = concrete.dependency(dependency);
  SimulatedPolicy policy;
  policy.name = name;
  policy.producerGrid = model.producers[producerIndex].producer.grid;
  policy.consumerGrid = model.dependency.consumerGrid;
  SimulatedTile extents = concreteExtents(concrete, policy.producerGrid);
  SimulatedTile origin{0, 0, 0};
  policy.semaphoreCount = evaluate(semaphoreCount, origin.data(), extents.data());
  policy.sem = [semaphore, extents](const SimulatedTile& t) { return evaluate(semaphore, t.data(), extents.data()); };
  policy.value = [value, extents](const SimulatedTile& t) { return evaluate(value, t.data(), extents.data()); };
  policy.reads = simulatedReads(concrete, dependency, producerIndex);
  return policy;
}

}  // namespace cusync::codegen
