// The GPU tests' pipelines are the runtime's chain executor (cusync/chain_executor.cuh): stages in dependency order,
// each with the launch of its kernel, enqueued one iteration at a time under one of the stage orderings. The tests'
// side streams are non-blocking (the executor's default). Host code.
#pragma once

#include "cusync/chain_executor.cuh"
#include "cusync/cusync.cuh"

namespace cusync::gpu_test {

inline const char* orderingName(StageOrdering ordering) { return stageOrderingName(ordering); }

using Pipeline = ChainExecutor;

}  // namespace cusync::gpu_test
