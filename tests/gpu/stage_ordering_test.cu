// Producer/consumer pairs, a three-stage chain and a two-producer consumer under every stage ordering, with random
// per-tile delays, checked element by element; 10,000 back-to-back iterations without reset; CUDA graph capture
// and replay.
#include <algorithm>
#include <cstdint>

#include <catch2/catch.hpp>

#include "cusync/cusync.cuh"
#include "scenario_checks.h"
#include "scenarios.cuh"
#include "shapes.h"
#include "test_config.h"

using namespace cusync;
using namespace cusync::gpu_test;

namespace {

StageOrdering anyOrdering() {
  return GENERATE(StageOrdering::StreamOrder, StageOrdering::WaitKernel, StageOrdering::ProgrammaticLaunch,
                  StageOrdering::NoOrdering);
}

std::uint32_t checkedIterations() { return scaled(8u, 3u); }

}  // namespace

TEST_CASE("TileSync pair: every consumer element equals its producer tile's, under each stage ordering",
          "[pairs]") {
  const StageOrdering ordering = anyOrdering();
  const std::uint32_t seed = testSeed();
  INFO("ordering " << orderingName(ordering) << ", seed " << seed);
  const ScenarioShape shape = withConsumerOnProducerGrid(shapeFor(ordering));
  requireLegal(ordering, shape, 2);
  PairScenario<TilePolicy, SameTile> pair(shape, ordering, seed);
  runCheckedIterations(pair, checkedIterations());
}

TEST_CASE("RowSync pair: every consumer element equals the sum over its producer row, under each stage ordering",
          "[pairs]") {
  const StageOrdering ordering = anyOrdering();
  const std::uint32_t seed = testSeed();
  INFO("ordering " << orderingName(ordering) << ", seed " << seed);
  const ScenarioShape shape = shapeFor(ordering);
  requireLegal(ordering, shape, 2);
  PairScenario<RowPolicy, WholeRow> pair(shape, ordering, seed);
  runCheckedIterations(pair, checkedIterations());
}

TEST_CASE("three-stage chain (TileSync then RowSync): both later stages read only finished tiles, under each "
          "stage ordering",
          "[chain]") {
  const StageOrdering ordering = anyOrdering();
  const std::uint32_t seed = testSeed();
  INFO("ordering " << orderingName(ordering) << ", seed " << seed);
  const ScenarioShape shape = shapeFor(ordering);
  requireLegal(ordering, shape, 3);
  ChainScenario chain(shape, ordering, seed);
  runCheckedIterations(chain, checkedIterations());
}

TEST_CASE("a consumer of two producers waits on both, under each stage ordering (two wait-kernels per launch)",
          "[chain]") {
  const StageOrdering ordering = anyOrdering();
  const std::uint32_t seed = testSeed();
  INFO("ordering " << orderingName(ordering) << ", seed " << seed);
  const ScenarioShape shape = withConsumerOnProducerGrid(shapeFor(ordering));
  requireLegal(ordering, shape, 3);
  TwoProducerScenario sum(shape, ordering, seed);
  runCheckedIterations(sum, checkedIterations());
}

TEST_CASE("10,000 back-to-back iterations need no reset: tickets and semaphores count iterations", "[iterations]") {
  const StageOrdering ordering = GENERATE(StageOrdering::WaitKernel, StageOrdering::ProgrammaticLaunch);
  const std::uint32_t seed = testSeed();
  const std::uint32_t iterations = scaled(10000u, 20u);
  INFO("ordering " << orderingName(ordering) << ", seed " << seed << ", " << iterations << " iterations");
  ScenarioShape shape = oneWaveShape();
  shape.maxDelayNanoseconds = scaled(3000u, 500u);  // keeps 10,000 iterations at a few seconds
  ChainScenario chain(shape, ordering, seed);
  Stream stream;
  for (std::uint32_t iteration = 0; iteration < iterations; ++iteration) chain.pipeline().enqueueIteration(stream);
  stream.synchronize();
  {
    INFO(chain.log().describeFirst());
    REQUIRE(chain.log().total() == 0);
  }
  requireOutputsCorrect(chain.checkOutputs(iterations - 1), iterations - 1);
  for (const Stage* stage : {&chain.a(), &chain.b(), &chain.c()}) {
    INFO("stage " << stage->name());
    REQUIRE(ticketsDrawn(*stage) == iterations * stage->grid().tileCount());
  }
  requireSemaphoresCount<TilePolicy>(chain.a(), iterations);
  requireSemaphoresCount<RowPolicy>(chain.b(), iterations);
}

TEST_CASE("past 2^32 tickets every stage keeps placing its units (64-bit tile counters)", "[iterations]") {
  // A 32-bit tile counter wraps after 2^32 / ticketsPerLaunch launches (about a million for a 4096-tile stage);
  // unless ticketsPerLaunch divides 2^32, the launch that straddles the wrap misplaces its units. Fast-forwarded to
  // just below the wrap of the stage with the fewest tickets per launch, the chain runs across it.
  const StageOrdering ordering = GENERATE(StageOrdering::WaitKernel, StageOrdering::ProgrammaticLaunch);
  const std::uint32_t seed = testSeed();
  INFO("ordering " << orderingName(ordering) << ", seed " << seed);
  ChainScenario chain(oneWaveShape(), ordering, seed);
  const std::uint32_t fewest = std::min({chain.a().ticketsPerLaunch(), chain.b().ticketsPerLaunch(),
                                         chain.c().ticketsPerLaunch()});
  const std::uint64_t start = (std::uint64_t(1) << 32) / fewest - 1;
  fastForward<TilePolicy>(chain.a(), start);
  fastForward<RowPolicy>(chain.b(), start);
  fastForward<void>(chain.c(), start);
  const std::uint32_t iterations = 4;
  Stream stream;
  for (std::uint32_t i = 0; i < iterations; ++i) chain.pipeline().enqueueIteration(stream);
  stream.synchronize();
  {
    INFO(chain.log().describeFirst());
    REQUIRE(chain.log().total() == 0);
  }
  const std::uint32_t last = std::uint32_t(start + iterations - 1);
  requireOutputsCorrect(chain.checkOutputs(last), last);
  for (const Stage* stage : {&chain.a(), &chain.b(), &chain.c()}) {
    INFO("stage " << stage->name());
    REQUIRE(ticketsDrawn(*stage) == (start + iterations) * stage->ticketsPerLaunch());
  }
  // The test crossed the wrap: the stage with the fewest tickets per launch started below 2^32 and ended above.
  REQUIRE(start * fewest < (std::uint64_t(1) << 32));
  REQUIRE((start + iterations) * fewest > (std::uint64_t(1) << 32));
}

TEST_CASE("a captured CUDA graph replays correctly many times, continuing the iteration count", "[graph]") {
  const StageOrdering ordering = anyOrdering();
  const std::uint32_t seed = testSeed();
  INFO("ordering " << orderingName(ordering) << ", seed " << seed);
  const ScenarioShape shape = shapeFor(ordering);
  requireLegal(ordering, shape, 3);
  ChainScenario chain(shape, ordering, seed);
  Stream stream;

  std::uint32_t iterations = 2;  // eager launches first: replays must continue from them
  for (std::uint32_t i = 0; i < iterations; ++i) chain.pipeline().enqueueIteration(stream);
  stream.synchronize();  // no eager work pending on the side streams when they join the capture
  const CapturedGraph single(stream, [&](cudaStream_t s) { chain.pipeline().enqueueIteration(s); });
  const CapturedGraph triple(stream, [&](cudaStream_t s) {
    for (int i = 0; i < 3; ++i) chain.pipeline().enqueueIteration(s);
  });

  const std::uint32_t replays = scaled(200u, 4u);
  for (std::uint32_t replay = 0; replay < replays; ++replay) {
    single.launch(stream);
    ++iterations;
    if (replay % 50 == 49) {
      stream.synchronize();
      requireOutputsCorrect(chain.checkOutputs(iterations - 1), iterations - 1);
    }
  }
  for (std::uint32_t replay = 0; replay < replays / 4; ++replay) {
    triple.launch(stream);
    iterations += 3;
  }
  stream.synchronize();
  requireOutputsCorrect(chain.checkOutputs(iterations - 1), iterations - 1);
  INFO(chain.log().describeFirst());
  REQUIRE(chain.log().total() == 0);
  REQUIRE(ticketsDrawn(chain.c()) == iterations * chain.c().grid().tileCount());
}

TEST_CASE("a graph of a two-producer consumer replays correctly (one wait-kernel per producer)", "[graph]") {
  const StageOrdering ordering = GENERATE(StageOrdering::WaitKernel, StageOrdering::ProgrammaticLaunch);
  const std::uint32_t seed = testSeed();
  INFO("ordering " << orderingName(ordering) << ", seed " << seed);
  TwoProducerScenario sum(withConsumerOnProducerGrid(multiWaveShape()), ordering, seed);
  Stream stream;
  const CapturedGraph single(stream, [&](cudaStream_t s) { sum.pipeline().enqueueIteration(s); });
  const std::uint32_t replays = scaled(100u, 3u);
  for (std::uint32_t replay = 0; replay < replays; ++replay) single.launch(stream);
  stream.synchronize();
  requireOutputsCorrect(sum.checkOutputs(replays - 1), replays - 1);
  INFO(sum.log().describeFirst());
  REQUIRE(sum.log().total() == 0);
}
