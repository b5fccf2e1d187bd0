// The MLP examples' tile orders over a grid of 2x1 clusters (cluster_group_order.h): --orders counts rows in
// tiles, so a group of N tile rows is N / 2 cluster rows (at least one), row keeps clusters row-major and col puts
// every cluster row in one group.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <cstdint>

#include "cluster_group_order.h"

namespace {
using cusync::GridShape;
using cusync::TileCoord;
using cusync::examples::clusterGroupedOrderIndex;

// GPT-3's GEMM 2 at M = 1024 on 128x128 tiles in 2x1 clusters: 96 column tiles by 4 cluster rows (8 tile rows).
constexpr GridShape kClusters{96, 4, 1};
}  // namespace

TEST_CASE("g8 over 2x1 clusters takes four cluster rows column by column", "[tile_orders]") {
  // Down the first column's four clusters, then the next column.
  for (std::uint32_t y = 0; y < 4; ++y) CHECK(clusterGroupedOrderIndex(TileCoord{0, y, 0}, kClusters, 8, 2) == y);
  CHECK(clusterGroupedOrderIndex(TileCoord{1, 0, 0}, kClusters, 8, 2) == 4);
  CHECK(clusterGroupedOrderIndex(TileCoord{95, 3, 0}, kClusters, 8, 2) == 96 * 4 - 1);
}

TEST_CASE("g4 over 2x1 clusters groups two cluster rows", "[tile_orders]") {
  CHECK(clusterGroupedOrderIndex(TileCoord{0, 1, 0}, kClusters, 4, 2) == 1);
  CHECK(clusterGroupedOrderIndex(TileCoord{1, 0, 0}, kClusters, 4, 2) == 2);
  // The second group (cluster rows 2-3) starts after the first group's 96 x 2 clusters.
  CHECK(clusterGroupedOrderIndex(TileCoord{0, 2, 0}, kClusters, 4, 2) == 96 * 2);
}

TEST_CASE("row keeps clusters row-major and col makes one group of every cluster row", "[tile_orders]") {
  // row (1 tile row) cannot be halved below one cluster row: row-major over clusters.
  CHECK(clusterGroupedOrderIndex(TileCoord{5, 0, 0}, kClusters, 1, 2) == 5);
  CHECK(clusterGroupedOrderIndex(TileCoord{0, 1, 0}, kClusters, 1, 2) == 96);
  // col: column-major over all cluster rows.
  CHECK(clusterGroupedOrderIndex(TileCoord{0, 3, 0}, kClusters, 0, 2) == 3);
  CHECK(clusterGroupedOrderIndex(TileCoord{1, 0, 0}, kClusters, 0, 2) == 4);
}
