// The tile order of a stage whose one-tile-per-block kernel runs in clusters of `rows` blocks along M (the hooked
// GEMMs' 2x1 clusters, hooked_gemm.cuh): the hardware groups consecutive blocks into a cluster, and a cluster's
// blocks share each weight (B) k-block by multicast, so they must compute the tiles (x, rows*y' + r), r < rows, of
// one column. The order therefore lists each cluster's tiles back to back; which cluster comes when is an order of
// the cluster grid (`clusterOrderIndex`: a bijection of clusterGrid(grid, rows) onto its tile count). Host code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cusync/chain_queue.h"
#include "cusync/error.h"
#include "cusync/tile.h"

namespace cusync {

// The order index of every tile (by linear tile id), as Stage::setTileOrder takes it. Throws when `rows` does not
// divide the grid's rows: a cluster's last block would have no tile, and the stage's counter would count it. Whether
// `clusterOrderIndex` is a bijection is Stage::setTileOrder's check (it rejects any repeated or out-of-range index).
template <class ClusterOrderIndex>
std::vector<std::uint32_t> clusterTileOrder(GridShape grid, std::uint32_t rows, ClusterOrderIndex clusterOrderIndex) {
  if (rows == 0 || grid.y % rows != 0)
    throw Error("cusync: " + std::to_string(grid.y) + " row tiles cannot run in clusters of " + std::to_string(rows) +
                " rows");
  const GridShape clusters = clusterGrid(grid, rows);
  std::vector<std::uint32_t> orderIndexOfLinearTile(grid.tileCount());
  for (std::uint32_t linear = 0; linear < grid.tileCount(); ++linear) {
    const TileCoord tile = tileAtLinear(linear, grid);
    const TileCoord cluster{tile.x, tile.y / rows, tile.z};
    orderIndexOfLinearTile[linear] = clusterOrderIndex(cluster, clusters) * rows + tile.y % rows;
  }
  return orderIndexOfLinearTile;
}

}  // namespace cusync
