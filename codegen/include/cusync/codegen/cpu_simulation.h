// A brute-force CPU simulation of synchronized stages, to cross-check the prover.
//
// Model (docs/DESIGN.md, Progress): stages are launched in dependency order and the GPU dispatches their blocks
// in launch order (what the wait-kernel guarantees); within a stage, blocks take tiles in the stage's tile order.
// A persistent stage (SimulatedStage::persistentBlocks) launches that many blocks, each holding its slot while it
// computes unit after unit: the next tile of the stage's order when it asks (a ticket per unit), or with static
// units (StageView::staticUnits) the tiles at order indices b, b + blocks, ... for block b.
// A GPU of `slots` block slots holds the dispatched, unfinished blocks. A resident block whose every wait is
// satisfied (for each producer tile p it reads: semaphore sem(p) has reached value(p)) may finish; which one
// finishes next is chosen by a seeded random generator, so different seeds explore different interleavings.
// Finishing posts +1 to sem(tile) of every policy the tile's stage produces for, and frees the slot.
// Checked:
//   - every order is a bijection onto [0, tiles) and every sem(p) is in [0, semaphoreCount),
//   - safety: when a block passes its waits, every producer tile it reads has finished (posted),
//   - progress: the simulation never reaches a state where no resident block can finish a tile while tiles remain.
// Host-only header.
#pragma once

#include <cusync/analysis/isl_model.h>
#include <cusync/codegen/index_expression.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace cusync::codegen {

using SimulatedTile = std::array<std::int64_t, 3>;  // x, y, z (0 beyond the grid's rank)

struct SimulatedStage {
  std::string grid;
  SimulatedTile extents{1, 1, 1};
  std::function<std::int64_t(const SimulatedTile&)> order;  // the tile order's index
  std::int64_t persistentBlocks = 0;  // 0: one block per tile
  bool staticUnits = false;           // persistent blocks: a fixed sequence each instead of a ticket per unit
  // Persistent blocks: units a block holds drawn beyond the one it works on (the persistent GEMMs' scheduler warp
  // draws the next ticket while the current unit still loads, persistent_unit_handoff.hpp). A unit drawn ahead is
  // one no other block can take.
  std::int64_t unitsDrawnAhead = 0;
};

// One (dependency, producer) edge with its policy.
struct SimulatedPolicy {
  std::string name;  // for messages
  std::string producerGrid;
  std::string consumerGrid;
  std::int64_t semaphoreCount = 0;
  std::function<std::int64_t(const SimulatedTile&)> sem;
  std::function<std::int64_t(const SimulatedTile&)> value;
  std::map<SimulatedTile, std::vector<SimulatedTile>> reads;  // consumer tile -> producer tiles it reads
};

struct SimulationSetup {
  std::vector<SimulatedStage> stages;  // in launch order: every producer before its consumers
  std::vector<SimulatedPolicy> policies;
  std::int64_t slots = 132;
  std::uint64_t seed = 1;
};

struct SimulationResult {
  bool ok = false;
  std::string failure;  // empty if ok
  std::int64_t finishedTiles = 0;
};

SimulationResult simulate(const SimulationSetup& setup);

// ---- Building setups from a model ---------------------------------------------------------------------------

// The stages of a bounds-checked model with concrete (bound) parameters, in a launch order that puts producers
// first, each with the given order (row-major if `orders` has no entry for the grid).
std::vector<SimulatedStage> simulatedStages(const analysis::IslModel& concrete,
                                            const std::map<std::string, IndexExpression>& orders);

// What each consumer tile of the dependency reads from its `producerIndex`-th producer, enumerated with isl.
std::map<SimulatedTile, std::vector<SimulatedTile>> simulatedReads(const analysis::IslModel& concrete,
                                                                  const std::string& dependency,
                                                                  std::size_t producerIndex);

// A policy given by index expressions (sem, value, semaphoreCount), evaluated on the concrete grid extents.
SimulatedPolicy simulatedPolicy(const analysis::IslModel& concrete, const std::string& name,
                                const std::string& dependency, std::size_t producerIndex,
                                const IndexExpression& semaphore, const IndexExpression& value,
                                const IndexExpression& semaphoreCount);

// The concrete extents of a grid (1 beyond its rank).
SimulatedTile concreteExtents(const analysis::IslModel& concrete, const std::string& grid);

}  // namespace cusync::codegen
