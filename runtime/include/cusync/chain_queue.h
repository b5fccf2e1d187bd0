// One work queue for a whole chain of stages, drawn from by the blocks of a single persistent launch (the fused
// chain). The queue's layout; serves host and device (includes only tile.h, so host tests check it). The device
// draw is in chain_queue.cuh, the host side in fused_chain.cuh.
//
// The queue hands out tickets from one counter, stage by stage in the chain's (topological) order: every work unit
// of stage 0 in its tile order, then every unit of stage 1, and so on; past the last unit, each persistent block
// draws one stop ticket. Within a stage the units of a tile are its split-K parts, in the stage's PartOrder
// (part_order.h): consecutive (a tile is finished as early as possible: what a producer wants) or k-range by
// k-range (every tile's first k-range before any tile's second: what a consumer whose k-ranges read different
// producer columns wants, so that its first units need only the producer columns that finish first).
//
// Progress (why no block can wait forever, without assuming anything about block dispatch or residency):
//  * A unit of stage s waits only for tiles of stages before s (the host refuses any other chain), and every unit
//    of an earlier stage has a smaller ticket than every unit of s.
//  * A ticket is drawn only by a running block, and a persistent block never gives a drawn unit back. Its load
//    warp issues all loads of one unit before it draws the next ticket, and its math warps finish a unit (MMA,
//    split-K reduction by last arrival, epilogue, post) without waiting for anything drawn later.
//  * So the unfinished unit with the smallest ticket waits only for finished units, and finishes; by induction
//    every unit does. Blocks still to be dispatched hold no ticket, so nobody waits for them.
//  * Clusters (clusterRows = 2): the drawer is a cluster, whose rank-0 block draws each ticket for both blocks. The
//    two blocks wait on each other (the unit hand-off, each other's multicast halves of B), but a cluster's blocks
//    are scheduled together by the hardware, so neither waits for a block that is not running; and both work on
//    the same units in ticket order, so the argument above holds with clusters in place of blocks.
#pragma once

#include <cstdint>

#include "cusync/part_order.h"
#include "cusync/tile.h"

namespace cusync {

inline constexpr int kMaxChainStages = 4;

// What the queue needs of a stage: its grid, its tile order and its parts per tile.
struct ChainStageUnits {
  GridShape grid;
  const std::uint32_t* tileOfOrderIndex = nullptr;  // inverse tile order (linear tile ids); null = row-major
  std::uint32_t blocksPerTile = 1;
};

// A queue entry: the stage, the tile and its part; or the stop ticket of a persistent block.
struct QueuedUnit {
  std::uint32_t stage = 0;
  TileCoord tile;
  std::uint32_t part = 0;
  bool stop = true;
};

// A queue drawn from by clusters of `rows` blocks along M (1: plain blocks): a queue unit is the tiles (x, rows*y' + r),
// r < rows, of one split-K part, one per block of the cluster, so the blocks share each weight (B) tile through TMA
// multicast. The queue then enumerates the stage's cluster grid (y' < ceil(y / rows)); a block of rank r whose row
// is past the grid (an odd last row) computes nothing it stores.
CUSYNC_HOST_DEVICE constexpr GridShape clusterGrid(GridShape tiles, std::uint32_t rows) {
  return GridShape{tiles.x, (tiles.y + rows - 1) / rows, tiles.z};
}

// The tile that block `rank` of a cluster computes for a unit drawn in cluster coordinates.
CUSYNC_HOST_DEVICE constexpr TileCoord blockTileOfClusterUnit(TileCoord clusterTile, std::uint32_t clusterRows,
                                                              std::uint32_t rank) {
  return TileCoord{clusterTile.x, clusterTile.y * clusterRows + rank, clusterTile.z};
}

struct ChainQueueView {
  // Tickets taken, over all launches of the chain. 64 bits: a launch takes ticketsPerLaunch() tickets, so a 32-bit
  // counter would wrap after 2^32 / ticketsPerLaunch() launches (about 7 million for the GPT-3 MLP at M = 1, minutes
  // of serving), and past a wrap that is not a multiple of ticketsPerLaunch() every unit would be misplaced.
  unsigned long long* ticketCounter = nullptr;
  std::uint32_t stageCount = 0;
  std::uint32_t firstTicket[kMaxChainStages + 1] = {};  // ticket index of each stage's first unit; [stageCount]: total
  PartOrder partOrder[kMaxChainStages] = {};
  std::uint32_t persistentBlocks = 0;  // drawers per launch (blocks, or clusters); each draws exactly one stop ticket
  // Blocks per cluster along M (1: no clusters), and per stage the order of its cluster grid's tiles (inverse order,
  // linear ids of clusterGrid(stage grid); null = row-major). Unused when clusterRows == 1 (the stage's own order).
  std::uint32_t clusterRows = 1;
  const std::uint32_t* clusterTileOfOrderIndex[kMaxChainStages] = {};

  CUSYNC_HOST_DEVICE std::uint32_t workUnits() const { return firstTicket[stageCount]; }
  CUSYNC_HOST_DEVICE std::uint32_t ticketsPerLaunch() const { return workUnits() + persistentBlocks; }

  // The unit at queue index `index` (in [0, ticketsPerLaunch())) of a launch.
  CUSYNC_HOST_DEVICE QueuedUnit unitAt(std::uint32_t index, const ChainStageUnits* stages) const {
    QueuedUnit u;
    if (index >= workUnits()) return u;
    std::uint32_t s = 0;
    while (index >= firstTicket[s + 1]) ++s;
    const ChainStageUnits& stage = stages[s];
    const std::uint32_t local = index - firstTicket[s];
    const std::uint32_t tiles = stage.grid.tileCount();
    const UnitSlot slot = unitSlot(local, tiles, stage.blocksPerTile, partOrder[s]);
    const std::uint32_t linear = stage.tileOfOrderIndex ? stage.tileOfOrderIndex[slot.orderIndex] : slot.orderIndex;
    u.stage = s;
    u.tile = tileAtLinear(linear, stage.grid);
    u.part = slot.part;
    u.stop = false;
    return u;
  }
};

}  // namespace cusync
