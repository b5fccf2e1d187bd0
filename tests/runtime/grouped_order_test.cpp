// The grouped column-major tile order (runtime/include/cusync/grouped_order.h) on the host: it must be a bijection
// onto [0, tileCount) for every grid and group height (Stage::setTileOrder would reject it otherwise, at run time
// on a GPU machine), and it must visit tiles in the order its comment promises.
#include <algorithm>
#include <vector>

#include <catch2/catch.hpp>

#include "cusync/grouped_order.h"

using namespace cusync;

namespace {
std::vector<TileCoord> tilesInOrder(GridShape g, std::uint32_t groupRows) {
  std::vector<TileCoord> byIndex(g.tileCount(), TileCoord{~0u, ~0u, ~0u});
  for (std::uint32_t linear = 0; linear < g.tileCount(); ++linear) {
    const TileCoord t = tileAtLinear(linear, g);
    const std::uint32_t index = groupedColumnMajorIndex(t, g, groupRows);
    REQUIRE(index < g.tileCount());
    REQUIRE(byIndex[index].x == ~0u);  // no index taken twice
    byIndex[index] = t;
  }
  return byIndex;
}
}  // namespace

TEST_CASE("grouped column-major order is a bijection for every grid and group height", "[order]") {
  for (std::uint32_t x : {1u, 2u, 7u, 48u})
    for (std::uint32_t y : {1u, 3u, 8u, 13u, 32u})
      for (std::uint32_t z : {1u, 2u})
        for (std::uint32_t groupRows : {1u, 2u, 4u, 5u, 8u, 64u}) {
          INFO("grid " << x << "x" << y << "x" << z << ", group " << groupRows);
          (void)tilesInOrder(GridShape{x, y, z}, groupRows);
        }
}

TEST_CASE("grouped column-major order: groups of rows, columns first inside a group, the last group shorter",
          "[order]") {
  const GridShape g{3, 5, 1};  // groups of 2 rows: {0,1}, {2,3}, {4}
  const auto order = tilesInOrder(g, 2);
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> expected{
      {0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1},  // rows 0-1, column by column
      {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 2}, {2, 3},  // rows 2-3
      {0, 4}, {1, 4}, {2, 4}};                         // row 4 alone
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("order index " << i);
    CHECK(order[i].x == expected[i].first);
    CHECK(order[i].y == expected[i].second);
  }
}

TEST_CASE("grouped column-major order degenerates to row-major (1 row) and column-major (all rows)", "[order]") {
  const GridShape g{6, 4, 2};
  for (std::uint32_t linear = 0; linear < g.tileCount(); ++linear) {
    const TileCoord t = tileAtLinear(linear, g);
    CHECK(GroupedColumnMajorOrder<1>::index(t, g) == linearIndex(t, g));
    CHECK(GroupedColumnMajorOrder<4>::index(t, g) == t.z * 24 + t.x * 4 + t.y);
    CHECK(GroupedColumnMajorOrder<100>::index(t, g) == t.z * 24 + t.x * 4 + t.y);
  }
}
