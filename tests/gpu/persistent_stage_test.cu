// Persistent stages (StageView::persistentBlocks): a fixed grid whose blocks take tiles from the stage's counter
// until the launch has none left, or with static units a fixed sequence each, after one ticket per launch. Each
// persistent block drawing tickets draws one stop ticket per launch; if those were not counted, a launch would take
// tiles of the next one. Checked over many back-to-back launches: every tile is produced exactly once per launch,
// with that launch's iteration, and a consumer waiting under TileSync (a persistent one too, behind the wait-kernel
// on another stream) reads exactly the values of its iteration.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "cusync/cusync.cuh"
#include "device_memory.h"
#include "test_config.h"
#include "tile_values.h"

using namespace cusync;
using namespace cusync::gpu_test;

namespace {

constexpr std::uint32_t kElementsPerTile = 256;

// Takes the block's next work unit (thread 0 draws, the block shares it): a ticket per unit, or with static units
// (StageView::staticUnits) the block's next one of b, b + blocks, ..., in the iteration of the block's one ticket,
// as the persistent GEMMs' producer warp does (persistent_unit_handoff.hpp).
struct BlockUnits {
  std::uint32_t position = 0, iteration = 0;
  __device__ explicit BlockUnits(const StageView& stage) {
    if (stage.takesStaticUnits() && threadIdx.x == 0) iteration = stage.acquireIteration();
  }
  __device__ WorkUnit next(const StageView& stage) {
    __shared__ WorkUnit unit;
    __syncthreads();  // everyone has read the previous unit
    if (threadIdx.x == 0)
      unit = stage.takesStaticUnits() ? stage.staticUnit(blockIdx.x, position++, iteration)
                                      : stage.acquireWorkUnit(TileCoord{}, 0);
    __syncthreads();
    return unit;
  }
};

// A persistent producer: tile after tile, writes the tile's values for its iteration, counts the tile, posts it.
__global__ void producePersistently(StageView self, std::uint32_t* output, std::uint32_t* timesProduced,
                                    std::uint32_t salt) {
  triggerDependentLaunch();
  BlockUnits units(self);
  for (WorkUnit unit = units.next(self); unit.hasWork(); unit = units.next(self)) {
    const std::uint32_t tile = linearIndex(unit.ticket.tile, self.grid);
    for (std::uint32_t e = threadIdx.x; e < kElementsPerTile; e += blockDim.x)
      output[std::size_t(tile) * kElementsPerTile + e] = producedValue(salt, unit.ticket.iteration, tile, e);
    if (threadIdx.x == 0) atomicAdd(timesProduced + tile, 1u);
    blockPost<TileSync>(self, unit.ticket.tile);
  }
}

// A persistent consumer of the same grid: tile t waits for producer tile t, checks it, counts mismatches.
__global__ void consumePersistently(StageView self, InputView<TileSync> input, const std::uint32_t* produced,
                                    std::uint32_t* timesConsumed, unsigned int* mismatches, std::uint32_t salt) {
  BlockUnits units(self);
  for (WorkUnit unit = units.next(self); unit.hasWork(); unit = units.next(self)) {
    const TileTicket ticket = unit.ticket;
    blockWait(input, ticket.tile, ticket, self);
    const std::uint32_t tile = linearIndex(ticket.tile, self.grid);
    for (std::uint32_t e = threadIdx.x; e < kElementsPerTile; e += blockDim.x)
      if (produced[std::size_t(tile) * kElementsPerTile + e] != producedValue(salt, ticket.iteration, tile, e))
        atomicAdd(mismatches, 1u);
    if (threadIdx.x == 0) atomicAdd(timesConsumed + tile, 1u);
  }
}

int multiprocessors() {
  int count = 0;
  CUSYNC_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, 0));
  return count;
}

}  // namespace

TEST_CASE("persistent stages: each launch computes every tile once, consumers read their own iteration",
          "[persistent]") {
  const GridShape grid{13, 11, 1};  // 143 tiles: more than the persistent blocks, not a multiple of them
  const std::uint32_t blocks = GENERATE(1u, 7u, 64u, 200u);  // 200 > tiles: some blocks get nothing at all
  const bool waitKernel = GENERATE(false, true);
  const bool staticUnits = GENERATE(false, true);
  INFO("persistent blocks " << blocks << (waitKernel ? ", wait-kernel on two streams" : ", one stream")
                            << (staticUnits ? ", static units" : ", a ticket per unit"));
  REQUIRE(blocks <= std::uint32_t(multiprocessors()) * 8u);  // all resident with 256 threads and no shared memory
  Stage producer("producer", grid), consumer("consumer", grid);
  producer.setPersistentBlocks(blocks);
  consumer.setPersistentBlocks(blocks);
  producer.useStaticUnits(staticUnits);
  consumer.useStaticUnits(staticUnits);
  producer.setOutputPolicy<TileSync>();
  DeviceArray<std::uint32_t> data(grid.tileCount() * kElementsPerTile), produced(grid.tileCount()),
      consumed(grid.tileCount());
  DeviceArray<unsigned int> mismatches(1);
  Stream main, side;
  Event fork, join;
  const std::uint32_t salt = testSeed();
  const std::uint32_t launches = scaled(300u, 20u);
  const auto input = producer.inputFor<TileSync>(consumer);
  for (std::uint32_t i = 0; i < launches; ++i) {
    producePersistently<<<blocks, 256, 0, main>>>(producer.view(), data.data(), produced.data(), salt);
    if (waitKernel) {
      CUSYNC_CUDA_CHECK(cudaEventRecord(fork, main));
      CUSYNC_CUDA_CHECK(cudaStreamWaitEvent(side, fork));
      launchWaitKernel(producer, consumer, side);
      consumePersistently<<<blocks, 256, 0, side>>>(consumer.view(), input, data.data(), consumed.data(),
                                                   mismatches.data(), salt);
      CUSYNC_CUDA_CHECK(cudaEventRecord(join, side));
      CUSYNC_CUDA_CHECK(cudaStreamWaitEvent(main, join));
    } else {
      consumePersistently<<<blocks, 256, 0, main>>>(consumer.view(), input, data.data(), consumed.data(),
                                                   mismatches.data(), salt);
    }
    CUSYNC_CUDA_CHECK(cudaGetLastError());
  }
  main.synchronize();
  CHECK(mismatches.toHost()[0] == 0u);
  const auto producedCounts = produced.toHost(), consumedCounts = consumed.toHost();
  for (std::uint32_t t = 0; t < grid.tileCount(); ++t) {
    INFO("tile " << t);
    REQUIRE(producedCounts[t] == launches);
    REQUIRE(consumedCounts[t] == launches);
  }
}

TEST_CASE("persistent stages: the tile counter advances by work units plus one stop ticket per block", "[persistent]") {
  const GridShape grid{5, 4, 1};
  Stage stage("stage", grid);
  stage.setBlocksPerTile(3);
  stage.setPersistentBlocks(16);
  CHECK(stage.workUnitsPerLaunch() == 60u);
  CHECK(stage.blocksPerLaunch() == 16u);
  CHECK(stage.ticketsPerLaunch() == 76u);
  stage.setPersistentBlocks(100);  // more blocks than units: every unit has a block, the rest stop at once
  CHECK(stage.blocksPerLaunch() == 100u);
  CHECK(stage.ticketsPerLaunch() == 160u);
  stage.useStaticUnits(true);  // one ticket per block; a consumer's wait-kernel waits for all of them
  CHECK(stage.ticketsPerLaunch() == 100u);
  CHECK(stage.ticketsOnceEveryUnitIsTaken() == 100u);
}
