// Stage sizes of the GPU tests. "Multi-wave" grids hold more blocks than the GPU runs at once, so consumers start
// while producers still have waves to go (what the wait-kernel and programmatic launch must keep deadlock-free);
// "one-wave" grids fit on the GPU together, the condition under which NoOrdering (avoid wait-kernel) is legal.
// Small mode (CUSYNC_GPU_TEST_SMALL) shrinks everything for compute-sanitizer runs. Host code.
#pragma once

#include "cusync/cusync.cuh"
#include "scenarios.cuh"

namespace cusync::gpu_test {

// Producer `producerGrid`, consumer reads rows of it: consumer x extent is half the producer's.
inline ScenarioShape multiWaveShape() {
  if (smallMode()) return ScenarioShape{GridShape{4, 6}, GridShape{2, 6}, 256, 64, 0, 2000};
  return ScenarioShape{GridShape{12, 256}, GridShape{6, 256}, 1024, 128, 0, 10000};
}

// At most one block per multiprocessor for all stages together (a conservative bound: every SM of a Hopper or
// Ampere GPU holds at least one 128-thread block of these kernels). The largest test, two producers and a
// consumer on the producer grid, needs 90 blocks: it fits an H100 PCIe (114 SMs) and an A100 (108) too.
inline ScenarioShape oneWaveShape() {
  if (smallMode()) return ScenarioShape{GridShape{4, 4}, GridShape{2, 4}, 256, 64, 0, 2000};
  return ScenarioShape{GridShape{6, 5}, GridShape{3, 5}, 1024, 128, 0, 10000};
}

inline ScenarioShape shapeFor(StageOrdering ordering) {
  return ordering == StageOrdering::NoOrdering ? oneWaveShape() : multiWaveShape();
}

// The same sizes with the consumer on the producer's grid (for SameTile dependencies).
inline ScenarioShape withConsumerOnProducerGrid(ScenarioShape shape) {
  shape.consumerGrid = shape.producerGrid;
  return shape;
}

}  // namespace cusync::gpu_test
