// The MLP examples' grouped tile orders (--orders: row, col, gN) over a grid of clusters, for a GEMM launched in
// clusters of several tile rows (GemmKernelEntry::clusterRows). --orders counts rows in tiles, so a group of N tile
// rows is N / clusterRows cluster rows, at least one: row stays row-major over clusters, col one group of all rows.
// Host and device code; needs nothing but the runtime's grouped order.
#pragma once

#include <cstdint>

#include "cusync/grouped_order.h"

namespace cusync::examples {

// The order index of `cluster` in the grid `clusters` for `groupRows` tile rows per group (0: all rows).
CUSYNC_HOST_DEVICE constexpr std::uint32_t clusterGroupedOrderIndex(TileCoord cluster, GridShape clusters,
                                                                    std::uint32_t groupRows,
                                                                    std::uint32_t clusterRows) {
  const std::uint32_t halved = groupRows / clusterRows;
  const std::uint32_t rows = groupRows == 0 ? clusters.y : (halved > 0 ? halved : 1u);
  return groupedColumnMajorIndex(cluster, clusters, rows);
}

}  // namespace cusync::examples
