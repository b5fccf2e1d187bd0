// A tile order for L2 reuse: rows of tiles taken in groups, each group column by column.
//
// Why: a row-major order over a wide GEMM keeps one or two rows of tiles in flight across *every* column, so each
// wave of blocks reads the whole weight matrix B (GPT-3's W1 and W2 are 151 MB each, three times the H100's L2)
// while reusing little of it. Taking `groupRows` rows at a time, column by column, makes the blocks in flight share
// a few columns of B and a few rows of A, both of which stay in L2. It also suits a consumer that waits per k-block
// (TileSync): the producer's columns of a row group complete from left to right, the order the consumer reads them.
// CUTLASS's persistent schedulers get the same reuse from their swizzle; cusync hands tiles out through the stage's
// ticket counter, so the order is a table the counter indexes (Stage::setTileOrder).
//
// Serves host and device (includes only tile.h).
#pragma once

#include <cstdint>

#include "cusync/tile.h"

namespace cusync {

// Index of `t` when rows are taken `groupRows` at a time (the last group may be shorter), columns first within a
// group, then the group's rows; z outermost. groupRows >= grid.y is column-major; groupRows == 1 is row-major.
CUSYNC_HOST_DEVICE constexpr std::uint32_t groupedColumnMajorIndex(TileCoord t, GridShape g, std::uint32_t groupRows) {
  const std::uint32_t firstRow = t.y / groupRows * groupRows;
  const std::uint32_t rowsInGroup = g.y - firstRow < groupRows ? g.y - firstRow : groupRows;
  return t.z * g.x * g.y + firstRow * g.x + t.x * rowsInGroup + (t.y - firstRow);
}

// The tile-order concept (tile.h) for a fixed group height.
template <std::uint32_t GroupRows>
struct GroupedColumnMajorOrder {
  static_assert(GroupRows > 0, "a group holds at least one row");
  CUSYNC_HOST_DEVICE static constexpr std::uint32_t index(TileCoord t, GridShape g) {
    return groupedColumnMajorIndex(t, g, GroupRows);
  }
};

}  // namespace cusync
