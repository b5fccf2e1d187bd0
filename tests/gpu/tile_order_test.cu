// Tile orders: Stage::setTileOrder tabulates a custom (non-row-major) order so that the k-th ticket is the tile of
// order index k; useHardwareOrder hands each block its own blockIdx tile; stages with either stay correct.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "cusync/cusync.cuh"
#include "scenario_checks.h"
#include "scenarios.cuh"
#include "shapes.h"
#include "test_config.h"

using namespace cusync;
using namespace cusync::gpu_test;

namespace {

// Column-major: y fastest, then x, then z. A producer order that finishes whole columns first.
struct ColumnMajorOrder {
  CUSYNC_HOST_DEVICE static std::uint32_t index(TileCoord t, GridShape g) { return (t.z * g.x + t.x) * g.y + t.y; }
};

// The reverse of row-major: the last tile first.
struct ReversedOrder {
  CUSYNC_HOST_DEVICE static std::uint32_t index(TileCoord t, GridShape g) {
    return g.tileCount() - 1 - linearIndex(t, g);
  }
};

// Records, at `slot + linear block index`, the tile and iteration each block of this launch was handed.
__global__ void recordTickets(StageView self, std::uint32_t slot, std::uint32_t* tiles, std::uint32_t* iterations) {
  const TileTicket ticket = blockAcquireTile(self);
  if (threadIdx.x != 0) return;
  const std::uint32_t index = slot + (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  tiles[index] = linearIndex(ticket.tile, self.grid);
  iterations[index] = ticket.iteration;
}

// Launches `stage`'s kernel `launches` times with one block each, so launch k draws ticket k; returns the tiles
// (linear) and iterations handed out, in ticket order.
void drawTicketsOneByOne(const Stage& stage, std::uint32_t launches, std::vector<std::uint32_t>& tiles,
                         std::vector<std::uint32_t>& iterations) {
  DeviceArray<std::uint32_t> tileOf(launches), iterationOf(launches);
  for (std::uint32_t k = 0; k < launches; ++k)
    recordTickets<<<1, 32>>>(stage.view(), k, tileOf.data(), iterationOf.data());
  CUSYNC_CUDA_CHECK(cudaGetLastError());
  CUSYNC_CUDA_CHECK(cudaDeviceSynchronize());
  tiles = tileOf.toHost();
  iterations = iterationOf.toHost();
}

}  // namespace

TEST_CASE("setTileOrder: the k-th ticket of a stage is the tile of order index k, launch after launch",
          "[order]") {
  const GridShape grid{5, 3, 2};
  Stage stage("column_major", grid);
  stage.setTileOrder<ColumnMajorOrder>();
  const std::uint32_t tiles = grid.tileCount();
  std::vector<std::uint32_t> tileOf, iterationOf;
  drawTicketsOneByOne(stage, 2 * tiles + 1, tileOf, iterationOf);
  for (std::uint32_t ticket = 0; ticket < 2 * tiles + 1; ++ticket) {
    INFO("ticket " << ticket);
    REQUIRE(ColumnMajorOrder::index(tileAtLinear(tileOf[ticket], grid), grid) == ticket % tiles);
    REQUIRE(iterationOf[ticket] == ticket / tiles);
  }
  // The tabulated order really is not row-major: ticket 1 is tile (0, 1, 0), row-major index 5.
  REQUIRE(tileOf[1] == linearIndex(TileCoord{0, 1, 0}, grid));
}

TEST_CASE("without setTileOrder, tickets follow row-major order", "[order]") {
  const GridShape grid{4, 3, 1};
  Stage stage("row_major", grid);
  std::vector<std::uint32_t> tileOf, iterationOf;
  drawTicketsOneByOne(stage, grid.tileCount(), tileOf, iterationOf);
  for (std::uint32_t ticket = 0; ticket < grid.tileCount(); ++ticket) REQUIRE(tileOf[ticket] == ticket);
}

TEST_CASE("useHardwareOrder: each block computes its own blockIdx tile and tickets still count iterations",
          "[order]") {
  const GridShape grid{5, 3, 2};
  Stage stage("hardware", grid);
  stage.setTileOrder<ReversedOrder>();  // must be ignored in hardware order
  stage.useHardwareOrder(true);
  const std::uint32_t tiles = grid.tileCount();
  DeviceArray<std::uint32_t> tileOf(2 * tiles), iterationOf(2 * tiles);
  for (std::uint32_t launch = 0; launch < 2; ++launch)
    recordTickets<<<launchGrid(grid), 32>>>(stage.view(), launch * tiles, tileOf.data(), iterationOf.data());
  CUSYNC_CUDA_CHECK(cudaGetLastError());
  CUSYNC_CUDA_CHECK(cudaDeviceSynchronize());
  const auto tileHost = tileOf.toHost(), iterationHost = iterationOf.toHost();
  for (std::uint32_t slot = 0; slot < 2 * tiles; ++slot) {
    INFO("launch " << slot / tiles << ", block " << slot % tiles);
    REQUIRE(tileHost[slot] == slot % tiles);
    REQUIRE(iterationHost[slot] == slot / tiles);
  }
}

TEST_CASE("a RowSync pair with a column-major producer order and a reversed consumer order stays correct",
          "[order]") {
  const StageOrdering ordering = GENERATE(StageOrdering::WaitKernel, StageOrdering::ProgrammaticLaunch);
  const std::uint32_t seed = testSeed();
  INFO("ordering " << orderingName(ordering) << ", seed " << seed);
  PairScenario<RowPolicy, WholeRow> pair(multiWaveShape(), ordering, seed);
  pair.producer().setTileOrder<ColumnMajorOrder>();
  pair.consumer().setTileOrder<ReversedOrder>();
  runCheckedIterations(pair, scaled(6u, 2u));
}

TEST_CASE("a chain whose stages all use hardware order stays correct", "[order]") {
  const StageOrdering ordering = GENERATE(StageOrdering::WaitKernel, StageOrdering::ProgrammaticLaunch);
  const std::uint32_t seed = testSeed();
  INFO("ordering " << orderingName(ordering) << ", seed " << seed);
  ChainScenario chain(multiWaveShape(), ordering, seed);
  for (Stage* stage : {&chain.a(), &chain.b(), &chain.c()}) stage->useHardwareOrder(true);
  runCheckedIterations(chain, scaled(6u, 2u));
}
