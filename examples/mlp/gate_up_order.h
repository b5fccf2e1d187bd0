// A tile order for GEMM 1 of the LLaMA MLP that pairs gate and up tiles (--gate-up-order paired).
//
// GEMM 1 writes [gate | up]; SwiGLU tile x of S needs the gate columns of x and the up columns F further right. In
// column order (row-major, or grouped: column by column inside a group of rows) the up half comes only after the
// whole gate half, so when GEMM 1 spans several waves no S tile is complete before the second half of a row group
// runs. Paired, the column tiles run in the order of the first S column they feed: gate tile 0, the up tile(s) of
// the same S columns, gate tile 1, ... so S tiles, and the GEMM-2 k-blocks that wait for them, complete from the
// left while GEMM 1 still runs. Any bijection is a valid order for a producer (it waits for nothing). Host header
// (no CUDA): Stage::setTileOrder takes the result.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "cusync/grouped_order.h"
#include "cusync/tile.h"

namespace cusync::examples {

// rank[x] = position of GEMM-1 column tile x in the paired order, for `columnTiles` tiles `tileColumns` wide over
// [gate | up] (2 * intermediate columns). A tile's key is the first S column it feeds: through its gate columns
// [x*w, min((x+1)*w, F)) and through its up columns (minus F); ties keep column order.
inline std::vector<std::uint32_t> pairedGateUpRanks(std::uint32_t columnTiles, std::uint32_t tileColumns,
                                                    std::uint32_t intermediate) {
  std::vector<std::uint32_t> key(columnTiles);
  for (std::uint32_t x = 0; x < columnTiles; ++x) {
    const std::uint32_t first = x * tileColumns, end = first + tileColumns;
    key[x] = first < intermediate ? first : first - intermediate;              // gate part, else up part
    if (first < intermediate && end > intermediate) key[x] = 0;                // holds the first up columns
  }
  std::vector<std::uint32_t> byKey(columnTiles);
  std::iota(byKey.begin(), byKey.end(), 0u);
  std::stable_sort(byKey.begin(), byKey.end(), [&](std::uint32_t a, std::uint32_t b) { return key[a] < key[b]; });
  std::vector<std::uint32_t> rank(columnTiles);
  for (std::uint32_t position = 0; position < columnTiles; ++position) rank[byKey[position]] = position;
  return rank;
}

// The grouped column-major order of grouped_order.h (`groupRows` rows at a time: 1 = row-major, 0 = all rows) over
// the paired column ranks: order index of every tile of `grid`, by linear tile.
inline std::vector<std::uint32_t> pairedGateUpOrder(GridShape grid, std::uint32_t groupRows,
                                                    const std::vector<std::uint32_t>& rank) {
  std::vector<std::uint32_t> index(grid.tileCount());
  for (std::uint32_t linear = 0; linear < grid.tileCount(); ++linear) {
    TileCoord t = tileAtLinear(linear, grid);
    t.x = rank[t.x];
    index[linear] = groupedColumnMajorIndex(t, grid, groupRows == 0 ? grid.y : groupRows);
  }
  return index;
}

}  // namespace cusync::examples
