// Host-side misuse of the runtime is reported as cusync::Error with what is wrong, never ignored: a tile order that
// is not a bijection, a consumer waiting under another policy than its producer posts under, a producer with no
// output policy, a kernel given a view that posts under another policy than the stage's, an empty grid.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "cusync/cusync.cuh"

using namespace cusync;
using Catch::Matchers::Contains;

namespace {

// Two tiles share each index: not injective.
struct HalvingOrder {
  CUSYNC_HOST_DEVICE static std::uint32_t index(TileCoord t, GridShape g) { return linearIndex(t, g) / 2; }
};

// A shift by one: the last tile falls outside [0, tileCount).
struct ShiftedOrder {
  CUSYNC_HOST_DEVICE static std::uint32_t index(TileCoord t, GridShape g) { return linearIndex(t, g) + 1; }
};

}  // namespace

TEST_CASE("setTileOrder rejects an order that maps two tiles to one index, naming the tile", "[host]") {
  Stage stage("halving", GridShape{4, 2});
  REQUIRE_THROWS_AS(stage.setTileOrder<HalvingOrder>(), Error);
  REQUIRE_THROWS_WITH(stage.setTileOrder<HalvingOrder>(),
                      Contains("'halving'") && Contains("not a bijection") && Contains("tile (1,0,0) maps to 0") &&
                          Contains("another tile already has"));
}

TEST_CASE("setTileOrder rejects an order with an index out of range", "[host]") {
  Stage stage("shifted", GridShape{3, 2});
  REQUIRE_THROWS_WITH(stage.setTileOrder<ShiftedOrder>(),
                      Contains("tile (2,1,0) maps to 6") && Contains("out of range"));
}

TEST_CASE("setTileOrder rejects a table of the wrong size", "[host]") {
  Stage stage("sized", GridShape{3, 2});
  REQUIRE_THROWS_WITH(stage.setTileOrder(std::vector<std::uint32_t>{0, 1, 2}), Contains("3 entries for 6 tiles"));
}

TEST_CASE("inputFor rejects a consumer waiting under another policy than the producer posts under", "[host]") {
  Stage producer("producer", GridShape{4, 4}), consumer("consumer", GridShape{4, 4});
  producer.setOutputPolicy<TileSync>();
  REQUIRE_NOTHROW(producer.inputFor<TileSync>(consumer));
  REQUIRE_THROWS_AS(producer.inputFor<RowSync>(consumer), Error);
  REQUIRE_THROWS_WITH(producer.inputFor<RowSync>(consumer),
                      Contains("'consumer' waits on stage 'producer' under policy") && Contains("posts under"));
}

TEST_CASE("inputFor rejects a producer that has no output policy", "[host]") {
  Stage producer("silent", GridShape{2, 2}), consumer("reader", GridShape{2, 2});
  REQUIRE_THROWS_WITH(producer.inputFor<TileSync>(consumer), Contains("no output policy"));
}

TEST_CASE("view<P> rejects a P that is not the stage's output policy, naming both", "[host]") {
  Stage stage("gemm1", GridShape{4, 4});
  stage.setOutputPolicy<RowSync>();
  REQUIRE_NOTHROW(stage.view<RowSync>());
  REQUIRE_THROWS_AS(stage.view<TileSync>(), Error);
  REQUIRE_THROWS_WITH(stage.view<TileSync>(), Contains("'gemm1' posts under cusync::RowSync") &&
                                                  Contains("view posting under cusync::TileSync"));
}

TEST_CASE("view<P> rejects a stage that has no output policy", "[host]") {
  Stage stage("last", GridShape{2, 2});
  REQUIRE_THROWS_WITH(stage.view<TileSync>(), Contains("'last' has no output policy"));
}

TEST_CASE("view<P> of the stage's policy carries the untyped view's state", "[host]") {
  Stage stage("gemm1", GridShape{3, 2});
  stage.setOutputPolicy<TileSync>();
  const TypedStageView<TileSync> typed = stage.view<TileSync>();
  const StageView untyped = stage.view();
  CHECK(typed.grid() == untyped.grid);
  CHECK(typed.untyped.semaphores == untyped.semaphores);
  CHECK(typed.untyped.tileCounter == untyped.tileCounter);
}

TEST_CASE("a stage with an empty grid is rejected", "[host]") {
  REQUIRE_THROWS_WITH(Stage("empty", GridShape{0, 4, 1}), Contains("empty grid"));
}
