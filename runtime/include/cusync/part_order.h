// How the split-K parts of a stage's tiles follow each other among its work units (the stage's tickets, or a fused
// chain's queue), and the one mapping from a unit's index to its tile and part that every drawer uses. Host and
// device (includes only tile.h).
//
//  * PartsOfATileTogether: (tile 0, part 0), (tile 0, part 1), ..., (tile 1, part 0), ... A tile is finished as early
//    as possible: what a producer whose consumers wait tile by tile wants.
//  * KRangesInTurn: (tile 0, part 0), (tile 1, part 0), ..., (tile 0, part 1), ... Every tile's first k-range before
//    any tile's second: what a fused consumer whose k-ranges read different producer columns wants, and what a
//    GEMM wants whose operand tiles are shared by many tiles: the units running together read the same k-range of
//    the shared operand, so each k-block of it is fetched from memory about once, as without split-K (with parts
//    together, the tiles sharing a weight column run in different rounds and each fetches it again).
// Which order a stage uses does not touch progress: a part never waits for another part of its tile (split-K by
// last arrival), and its waits on other stages are the same in either order.
#pragma once

#include <cstdint>

#include "cusync/tile.h"

namespace cusync {

enum class PartOrder : std::uint32_t { PartsOfATileTogether, KRangesInTurn };

// A work unit's place: the tile's index in the stage's tile order, and the split-K part.
struct UnitSlot {
  std::uint32_t orderIndex;
  std::uint32_t part;
};

// The unit at `index` in [0, tiles * parts) of a stage of `tiles` tiles split into `parts`. Unsplit stages (the common
// case) skip the divisions, which every thread of a hooked kernel's block otherwise runs before its first load.
CUSYNC_HOST_DEVICE constexpr UnitSlot unitSlot(std::uint32_t index, std::uint32_t tiles, std::uint32_t parts,
                                               PartOrder order) {
  if (parts == 1) return UnitSlot{index, 0u};
  return order == PartOrder::PartsOfATileTogether ? UnitSlot{index / parts, index % parts}
                                                  : UnitSlot{index % tiles, index / tiles};
}

// The unit of block `blockIndex` of a one-unit-per-block launch in clusters of `rows` blocks along M, of a stage of
// `tiles` tiles (a multiple of `rows`) whose first `wholeTiles` (a multiple of `rows`) run unsplit and the others in
// `parts`, and whose tile order lists each cluster's tiles back to back (cluster_tile_order.h). The cluster,
// blockIndex / rows, takes the unit the stage's unit order gives it over cluster tiles (whole ones first, then the
// split ones' parts in `order`); its block of rank r takes row r of that cluster tile and the same part. So the
// blocks of a cluster always run one column and one k-range, which their shared (multicast) weight k-blocks need.
CUSYNC_HOST_DEVICE constexpr UnitSlot clusterUnitSlot(std::uint32_t blockIndex, std::uint32_t rows,
                                                      std::uint32_t tiles, std::uint32_t wholeTiles,
                                                      std::uint32_t parts, PartOrder order) {
  const std::uint32_t cluster = blockIndex / rows, rank = blockIndex % rows;
  const std::uint32_t wholeClusters = wholeTiles / rows, clusterTiles = tiles / rows;
  if (cluster < wholeClusters) return UnitSlot{cluster * rows + rank, 0u};
  const UnitSlot split = unitSlot(cluster - wholeClusters, clusterTiles - wholeClusters, parts, order);
  return UnitSlot{(wholeClusters + split.orderIndex) * rows + rank, split.part};
}

}  // namespace cusync
