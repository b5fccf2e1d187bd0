// The W and T optimizations of the paper (section IV-C), decided per consumer stage.
//
// A GPU holds `slots = SMs * occupancy` blocks at once (occupancy: the smallest of the stages involved).
//   W, avoid the wait-kernel: the wait-kernel exists so that no consumer block occupies a slot a not-yet-started
//     producer block needs. If the consumer and every stage it transitively waits on fit into the slots together,
//     every block is resident at once and progress needs no dispatch order:  sum of tiles <= slots.
//     (Transitively, because a producer that itself waits is only guaranteed progress if its own producers run.)
//   T, avoid the custom tile order: the paper's condition that all tiles of producer and consumer execute within
//     two waves, so the hardware's dispatch already overlaps the producer's last wave with the consumer's first:
//     tiles of the consumer and its direct producers <= 2 * slots. A performance decision only (so direct
//     producers suffice); W is a correctness condition.
// The header gets both as constexpr functions of the GridShapes (the batch size is known only at run time) and as
// constants at the spec's parameter values. Host-only header.
#pragma once

#include <cusync/analysis/isl_model.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cusync::codegen {

struct OptimizationOptions {
  std::int64_t smCount = 132;  // H100 SXM
  std::int64_t defaultOccupancy = 1;
  std::map<std::string, std::int64_t> occupancy;  // per grid, overrides defaultOccupancy
};

struct StageOptimization {
  std::string dependency;
  std::string consumerGrid;
  std::vector<std::string> grids;               // consumer first, then every stage it transitively waits on (W)
  std::vector<std::string> directGrids;         // consumer first, then the stages it waits on directly (T)
  std::map<std::string, std::int64_t> tileCounts;  // at the given parameter values
  std::int64_t occupancy = 1;
  std::int64_t slots = 0;
  std::int64_t totalTiles = 0;                  // over `grids`
  std::int64_t directTiles = 0;                 // over `directGrids`
  bool avoidWaitKernel = false;   // W at the given parameter values
  bool avoidCustomOrder = false;  // T at the given parameter values
  // With symbolic parameters: the parameter values for which W / T hold, as isl sets (empty if not computable).
  std::string waitKernelAvoidableFor;
  std::string customOrderAvoidableFor;
};

// `concrete`: the model with symbolic parameters bound; `symbolic`: the model with them free (for the ranges).
std::vector<StageOptimization> analyzeOptimizations(const analysis::IslModel& symbolic,
                                                    const analysis::IslModel& concrete,
                                                    const OptimizationOptions& options);

}  // namespace cusync::codegen
