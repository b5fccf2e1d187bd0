// The tile order of a stage run in 2x1 clusters (cluster_tile_order.h): consecutive order indices, which the
// hardware puts in one cluster, are the two row tiles of one column; every tile has exactly one index; a grid whose
// rows the cluster does not divide is refused.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cusync/cluster_tile_order.h"
#include "cusync/part_order.h"

namespace {
// The attention chain's QKV grid at GPT-3's 512 tokens: 36 column tiles (Q, K, V of 12 heads) by 4 row tiles.
constexpr cusync::GridShape kQkvGrid{36, 4, 1};

std::uint32_t rowMajor(cusync::TileCoord c, cusync::GridShape g) { return cusync::linearIndex(c, g); }
// Columns first: a cluster order that differs from row-major, as the generated grouped orders do.
std::uint32_t columnMajor(cusync::TileCoord c, cusync::GridShape g) { return c.x * g.y + c.y; }

// The tile of each order index (the table the device reads).
std::vector<cusync::TileCoord> tilesInOrder(const std::vector<std::uint32_t>& indexOfTile, cusync::GridShape grid) {
  std::vector<cusync::TileCoord> tiles(indexOfTile.size(), cusync::TileCoord{~0u, ~0u, ~0u});
  for (std::uint32_t linear = 0; linear < indexOfTile.size(); ++linear) {
    REQUIRE(indexOfTile[linear] < indexOfTile.size());
    tiles[indexOfTile[linear]] = cusync::tileAtLinear(linear, grid);
  }
  return tiles;
}
}  // namespace

TEST_CASE("a cluster's two blocks get the two row tiles of one column", "[cluster]") {
  for (auto order : {&rowMajor, &columnMajor}) {
    const std::vector<std::uint32_t> indexOfTile = cusync::clusterTileOrder(kQkvGrid, 2, order);
    std::vector<std::uint32_t> sorted = indexOfTile;
    std::sort(sorted.begin(), sorted.end());
    for (std::uint32_t i = 0; i < sorted.size(); ++i) REQUIRE(sorted[i] == i);  // a bijection onto [0, tiles)
    const std::vector<cusync::TileCoord> tiles = tilesInOrder(indexOfTile, kQkvGrid);
    for (std::uint32_t block = 0; block < tiles.size(); block += 2) {
      CHECK(tiles[block].x == tiles[block + 1].x);
      CHECK(tiles[block].y % 2 == 0);
      CHECK(tiles[block + 1].y == tiles[block].y + 1);
    }
  }
}

TEST_CASE("the clusters follow the cluster grid's order", "[cluster]") {
  const std::vector<cusync::TileCoord> tiles =
      tilesInOrder(cusync::clusterTileOrder(kQkvGrid, 2, &columnMajor), kQkvGrid);
  // Column-major over the 36 x 2 cluster grid: clusters (0, 0) and (0, 1), then column 1.
  CHECK((tiles[0].x == 0 && tiles[0].y == 0));
  CHECK((tiles[2].x == 0 && tiles[2].y == 2));
  CHECK((tiles[4].x == 1 && tiles[4].y == 0));
}

TEST_CASE("clusters that do not divide the rows are refused", "[cluster]") {
  CHECK_THROWS_WITH(cusync::clusterTileOrder(cusync::GridShape{36, 3, 1}, 2, &rowMajor),
                    Catch::Contains("3 row tiles cannot run in clusters of 2"));
  CHECK_THROWS(cusync::clusterTileOrder(kQkvGrid, 0, &rowMajor));
}

TEST_CASE("split-K in clusters: both blocks of a cluster take the same part of their two tiles", "[cluster]") {
  // GPT-3's QKV GEMM at 1024 tokens: 288 tiles, the last wave's 24 (12 clusters) split in 5 parts.
  constexpr std::uint32_t tiles = 288, whole = 264, parts = 5;
  const std::uint32_t blocks = whole + (tiles - whole) * parts;
  for (auto order : {cusync::PartOrder::PartsOfATileTogether, cusync::PartOrder::KRangesInTurn}) {
    std::vector<std::uint32_t> seen(std::size_t(tiles) * parts, 0);
    for (std::uint32_t block = 0; block < blocks; block += 2) {
      const cusync::UnitSlot first = cusync::clusterUnitSlot(block, 2, tiles, whole, parts, order);
      const cusync::UnitSlot second = cusync::clusterUnitSlot(block + 1, 2, tiles, whole, parts, order);
      REQUIRE(first.orderIndex % 2 == 0);
      CHECK(second.orderIndex == first.orderIndex + 1);  // the cluster's other row: the paired order's next tile
      CHECK(second.part == first.part);
      if (first.orderIndex < whole) CHECK(first.part == 0);
      ++seen[std::size_t(first.orderIndex) * parts + first.part];
      ++seen[std::size_t(second.orderIndex) * parts + second.part];
    }
    // Every whole tile once as part 0, every split tile once per part.
    for (std::uint32_t t = 0; t < tiles; ++t)
      for (std::uint32_t p = 0; p < parts; ++p)
        CHECK(seen[std::size_t(t) * parts + p] == (t < whole && p > 0 ? 0u : 1u));
  }
}
