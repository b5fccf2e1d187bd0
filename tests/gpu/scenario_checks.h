// Catch2 helpers shared by the GPU test files: run a scenario's iterations checking every output element, and
// assert the preconditions an ordering needs. Host code.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include "scenarios.cuh"

namespace cusync::gpu_test {

// NoOrdering is legal only when every block of the stages is resident at once (docs/DESIGN.md, Progress).
inline void requireLegal(StageOrdering ordering, const ScenarioShape& shape, std::uint32_t stages) {
  if (ordering != StageOrdering::NoOrdering) return;
  const std::uint32_t blocks = shape.producerGrid.tileCount() * (stages - 1) + shape.consumerGrid.tileCount();
  INFO("NoOrdering needs all " << blocks << " blocks in one wave; the GPU has " << multiprocessorCount() << " SMs");
  REQUIRE(blocks <= static_cast<std::uint32_t>(multiprocessorCount()));
}

// Runs `iterations` iterations one at a time and checks every output element after each, then that no consumer
// read a wrong element.
template <class Scenario>
void runCheckedIterations(Scenario& scenario, std::uint32_t iterations) {
  Stream stream;
  for (std::uint32_t iteration = 0; iteration < iterations; ++iteration) {
    scenario.pipeline().enqueueIteration(stream);
    stream.synchronize();
    const OutputCheck check = scenario.checkOutputs(iteration);
    INFO("iteration " << iteration << ": " << check.wrongElements << " wrong elements, first: " << check.firstWrong);
    REQUIRE(check.wrongElements == 0);
  }
  INFO(scenario.log().describeFirst());
  REQUIRE(scenario.log().total() == 0);
}

inline void requireOutputsCorrect(const OutputCheck& check, std::uint32_t iteration) {
  INFO("after iteration " << iteration << ": " << check.wrongElements << " wrong elements, first: "
                          << check.firstWrong);
  REQUIRE(check.wrongElements == 0);
}

// The stage's tile counter: tickets drawn over all its launches.
inline std::uint64_t ticketsDrawn(const Stage& stage) {
  unsigned long long tickets = 0;
  CUSYNC_CUDA_CHECK(cudaMemcpy(&tickets, stage.tileCounter(), sizeof tickets, cudaMemcpyDeviceToHost));
  return tickets;
}

// How many tiles of `grid` post to each semaphore of `Policy`, counted from `sem` (not taken from the policy's
// value): what one launch adds to each semaphore.
template <class Policy>
std::vector<std::uint32_t> postsPerLaunch(GridShape grid) {
  std::vector<std::uint32_t> posts(Policy::semaphoreCount(grid), 0);
  for (std::uint32_t tile = 0; tile < grid.tileCount(); ++tile) ++posts[Policy::sem(tileAtLinear(tile, grid), grid)];
  return posts;
}

// Puts a stage in the state `iterations` launches leave it in: `iterations` launches' tickets drawn and, when it
// posts under `Policy`, every semaphore at value * iterations (modulo 2^32, as the semaphores count). Lets a test
// start where counting from zero would take hours, e.g. past 2^32 tickets.
template <class Policy>
void fastForward(Stage& stage, std::uint64_t iterations) {
  const unsigned long long tickets = iterations * stage.ticketsPerLaunch();
  CUSYNC_CUDA_CHECK(cudaMemcpy(stage.view().tileCounter, &tickets, sizeof tickets, cudaMemcpyHostToDevice));
  if constexpr (!std::is_void_v<Policy>) {
    std::vector<std::uint32_t> semaphores = postsPerLaunch<Policy>(stage.grid());
    for (std::uint32_t& s : semaphores) s *= std::uint32_t(iterations);  // wraps as the semaphores do
    CUSYNC_CUDA_CHECK(cudaMemcpy(stage.view().semaphores, semaphores.data(), semaphores.size() * sizeof(std::uint32_t),
                                 cudaMemcpyHostToDevice));
  }
}

// After `iterations` launches every semaphore of a stage posting under `Policy` must hold value * iterations,
// where value = |sem^-1(s)| is recounted here from `sem` (not taken from the policy).
template <class Policy>
void requireSemaphoresCount(const Stage& stage, std::uint32_t iterations) {
  const GridShape grid = stage.grid();
  const std::uint32_t count = Policy::semaphoreCount(grid);
  std::vector<std::uint32_t> seen(count), expected = postsPerLaunch<Policy>(grid);
  CUSYNC_CUDA_CHECK(
      cudaMemcpy(seen.data(), stage.view().semaphores, count * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  for (std::uint32_t& e : expected) e *= iterations;
  for (std::uint32_t tile = 0; tile < grid.tileCount(); ++tile) {
    const TileCoord t = tileAtLinear(tile, grid);
    INFO("stage " << stage.name() << " tile " << tile << ": the policy's value disagrees with its sem");
    REQUIRE(Policy::value(t, grid) * iterations == expected[Policy::sem(t, grid)]);
  }
  for (std::uint32_t s = 0; s < count; ++s) {
    INFO("stage " << stage.name() << " semaphore " << s);
    REQUIRE(seen[s] == expected[s]);
  }
}

}  // namespace cusync::gpu_test
