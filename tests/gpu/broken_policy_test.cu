// The element check has teeth: planted synchronization bugs — a consumer that does not wait, a policy whose value
// is too low — make consumers read unfinished tiles, and the tests see it. Producer tiles are delayed so that
// unfinished tiles exist while consumers read. (A value too high deadlocks; watchdog_test.cu shows the watchdog
// trapping on it.) These tests need stages to overlap, so compute-sanitizer runs, which serialize kernels, exclude
// their tag [planted].
#include <cstdint>

#include <catch2/catch.hpp>

#include "broken_policies.h"
#include "cusync/cusync.cuh"
#include "scenario_checks.h"
#include "scenarios.cuh"
#include "shapes.h"
#include "test_config.h"

using namespace cusync;
using namespace cusync::gpu_test;

namespace {

// One-wave grids whose producer tiles all take 20 to 60 us: consumers that overlap with them and do not wait
// for the right count read tiles before they are written.
ScenarioShape slowProducerShape() {
  ScenarioShape shape = oneWaveShape();
  shape.minDelayNanoseconds = 20000;
  shape.maxDelayNanoseconds = 60000;
  return shape;
}

// Runs up to `attempts` iterations and returns how many wrong elements consumers read (device count) plus how
// many wrong output elements the host found, stopping at the first iteration with any.
template <class Scenario>
std::size_t wrongElementsWithin(Scenario& scenario, std::uint32_t attempts) {
  Stream stream;
  for (std::uint32_t iteration = 0; iteration < attempts; ++iteration) {
    scenario.pipeline().enqueueIteration(stream);
    stream.synchronize();
    const std::size_t wrong = scenario.log().total() + scenario.checkOutputs(iteration).wrongElements;
    if (wrong > 0) return wrong;
  }
  return 0;
}

}  // namespace

TEST_CASE("a consumer that skips its wait reads unfinished producer tiles, and the element check reports them",
          "[planted]") {
  // Both overlapping orderings: programmatic launch (consumer blocks start once producer blocks are resident) and
  // no ordering on two streams.
  const StageOrdering ordering = GENERATE(StageOrdering::ProgrammaticLaunch, StageOrdering::NoOrdering);
  const std::uint32_t seed = testSeed();
  INFO("ordering " << orderingName(ordering) << ", seed " << seed);
  const ScenarioShape shape = withConsumerOnProducerGrid(slowProducerShape());
  requireLegal(StageOrdering::NoOrdering, shape, 2);

  PairScenario<TilePolicy, SameTile> withWait(shape, ordering, seed, /*consumerWaits=*/true);
  REQUIRE(wrongElementsWithin(withWait, 5) == 0);

  PairScenario<TilePolicy, SameTile> withoutWait(shape, ordering, seed, /*consumerWaits=*/false);
  REQUIRE(wrongElementsWithin(withoutWait, 10) > 0);
}

TEST_CASE("a RowSync policy whose value is one too low lets consumers read unfinished tiles, and the element "
          "check reports them",
          "[planted]") {
  const StageOrdering ordering = GENERATE(StageOrdering::ProgrammaticLaunch, StageOrdering::WaitKernel);
  const std::uint32_t seed = testSeed();
  INFO("ordering " << orderingName(ordering) << ", seed " << seed);
  const ScenarioShape shape = slowProducerShape();

  PairScenario<RowPolicy, WholeRow> correct(shape, ordering, seed);
  REQUIRE(wrongElementsWithin(correct, 5) == 0);

  PairScenario<ValueTooLow<RowPolicy>, WholeRow> tooLow(shape, ordering, seed);
  REQUIRE(wrongElementsWithin(tooLow, 10) > 0);
}
