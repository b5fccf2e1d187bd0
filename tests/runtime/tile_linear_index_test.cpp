// A tile's row-major linear index and its inverse (tile.h), which every stage's units and orders go through: the
// inverse must name every tile of the grid once, inside the grid, on 2-D grids (its one-division form) and 3-D ones.
#include <cstdint>
#include <set>
#include <tuple>

#include <catch2/catch.hpp>

#include "cusync/tile.h"

using namespace cusync;

TEST_CASE("tileAtLinear inverts linearIndex on 2-D and 3-D grids", "[tile]") {
  for (GridShape g : {GridShape{1, 1, 1}, GridShape{7, 1, 1}, GridShape{1, 9, 1}, GridShape{48, 13, 1},
                      GridShape{5, 3, 4}, GridShape{1, 1, 6}, GridShape{12, 8, 2}}) {
    std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> seen;
    for (std::uint32_t i = 0; i < g.tileCount(); ++i) {
      const TileCoord t = tileAtLinear(i, g);
      INFO("grid " << g.x << "x" << g.y << "x" << g.z << ", index " << i);
      REQUIRE(t.x < g.x);
      REQUIRE(t.y < g.y);
      REQUIRE(t.z < g.z);
      REQUIRE(linearIndex(t, g) == i);
      seen.insert({t.x, t.y, t.z});
    }
    REQUIRE(seen.size() == g.tileCount());
  }
}
