// A stage's work units (StageView::unitAt, hardwareUnit): with split-K of the last wave only (wholeTiles), every
// tile is handed out once per part of its own, the whole ones first and unsplit, the others in the stage's part
// order; the tile order applies to tickets, not to hardware order. The map is host-device, so this runs on the host
// (compiled by nvcc, no GPU needed).
#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "cusync/stage_view.cuh"

using namespace cusync;

namespace {

StageView stageOf(GridShape grid, std::uint32_t parts, std::uint32_t wholeTiles, PartOrder order,
                  const std::uint32_t* tileOfOrderIndex) {
  StageView v;
  v.grid = grid;
  v.blocksPerTile = parts;
  v.wholeTiles = wholeTiles;
  v.partOrder = order;
  v.tileOfOrderIndex = tileOfOrderIndex;
  return v;
}

}  // namespace

TEST_CASE("whole tiles come first, unsplit; the rest once per part, in the part order", "[stage-units]") {
  const GridShape grid{6, 2, 1};  // 12 tiles
  // A tile order that is not row-major: order index i is linear tile (i * 5) % 12.
  std::vector<std::uint32_t> order(12);
  for (std::uint32_t i = 0; i < 12; ++i) order[i] = (i * 5) % 12;
  for (PartOrder partOrder : {PartOrder::PartsOfATileTogether, PartOrder::KRangesInTurn})
    for (std::uint32_t wholeTiles : {0u, 9u}) {
      const StageView v = stageOf(grid, 3, wholeTiles, partOrder, order.data());
      REQUIRE(v.workUnits() == wholeTiles + (12 - wholeTiles) * 3);
      std::map<std::uint32_t, std::vector<std::uint32_t>> partsSeen;  // linear tile -> parts handed out
      for (std::uint32_t i = 0; i < v.workUnits(); ++i) {
        const WorkUnit u = v.unitAt(i, 7);
        REQUIRE(u.ticket.iteration == 7);
        const std::uint32_t linear = linearIndex(u.ticket.tile, grid);
        if (i < wholeTiles) {
          REQUIRE(linear == order[i]);  // the first tiles of the stage's order, whole
          REQUIRE(u.parts == 1);
          REQUIRE(u.part == 0);
        } else {
          REQUIRE(u.parts == 3);
        }
        partsSeen[linear].push_back(u.part);
      }
      REQUIRE(partsSeen.size() == 12);
      for (std::uint32_t orderIndex = 0; orderIndex < 12; ++orderIndex) {
        std::vector<std::uint32_t> parts = partsSeen[order[orderIndex]];
        std::sort(parts.begin(), parts.end());
        if (orderIndex < wholeTiles) REQUIRE(parts == std::vector<std::uint32_t>{0});
        else REQUIRE(parts == std::vector<std::uint32_t>{0, 1, 2});
      }
      // k-ranges in turn: right after the whole tiles, every split tile's first part.
      if (partOrder == PartOrder::KRangesInTurn)
        for (std::uint32_t i = wholeTiles; i < 12; ++i) REQUIRE(v.unitAt(i, 0).part == 0);
    }
}

TEST_CASE("hardware order names units by block index over row-major tiles, whole tiles included",
          "[stage-units]") {
  const GridShape grid{4, 1, 1};
  std::vector<std::uint32_t> reversed{3, 2, 1, 0};
  const StageView v = stageOf(grid, 2, 2, PartOrder::PartsOfATileTogether, reversed.data());
  REQUIRE(v.workUnits() == 2 + 2 * 2);
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> expected{{0, 0}, {1, 0}, {2, 0}, {2, 1}, {3, 0}, {3, 1}};
  for (std::uint32_t block = 0; block < v.workUnits(); ++block) {
    const WorkUnit u = v.hardwareUnit(block);
    REQUIRE(linearIndex(u.ticket.tile, grid) == expected[block].first);  // row-major, not the reversed order
    REQUIRE(u.part == expected[block].second);
    REQUIRE(u.parts == (block < 2 ? 1u : 2u));
  }
}

TEST_CASE("without whole tiles the map is the plain split: P parts of every tile", "[stage-units]") {
  const StageView v = stageOf(GridShape{3, 1, 1}, 2, 0, PartOrder::PartsOfATileTogether, nullptr);
  REQUIRE(v.workUnits() == 6);
  for (std::uint32_t i = 0; i < 6; ++i) {
    const WorkUnit u = v.unitAt(i, 0);
    REQUIRE(u.ticket.tile.x == i / 2);
    REQUIRE(u.part == i % 2);
    REQUIRE(u.parts == 2);
  }
}

TEST_CASE("stream-K: a drawn chunk is cut into fragments of the region's tiles, in the stage's tile order",
          "[stage-units][stream-k]") {
  // 14 tiles, the first 4 of the order whole; the other 10 tiles of 6 k-blocks cut into 4 chunks of 15 k-blocks,
  // in one group or in two (5 tiles and 2 chunks each).
  const std::uint32_t groups = GENERATE(1u, 2u);
  INFO(groups << " groups");
  const GridShape grid{7, 2, 1};
  std::vector<std::uint32_t> order(14);
  for (std::uint32_t i = 0; i < 14; ++i) order[i] = (i * 3) % 14;  // order index i -> linear tile (3i mod 14)
  StageView v = stageOf(grid, 1, 4, PartOrder::PartsOfATileTogether, order.data());
  v.streamKChunks = 4;
  v.streamKBlocks = 6;
  v.streamKGroups = groups;
  v.streamKSlots = StreamKRegion{10, 4, 6, groups}.maxPartsOfATile();
  REQUIRE(v.workUnits() == 4 + 4);  // a ticket per whole tile, one per chunk
  REQUIRE(v.partialSlotsPerTile(1) == v.streamKSlots);
  std::map<std::uint32_t, std::vector<int>> kBlocksOfTile;  // linear tile -> times each k-block is reduced
  std::map<std::uint32_t, std::vector<std::uint32_t>> partsOfTile;
  for (std::uint32_t chunk = 0; chunk < 4; ++chunk) {
    const WorkUnit drawn{TileTicket{TileCoord{}, 9u}, 0u, 1u, KBlockRange{0, 0}, chunk};
    REQUIRE(drawn.isStreamK());
    int kBlocksOfChunk = 0;
    for (WorkUnit u = v.nextStreamKFragment(drawn); u.hasWork(); u = v.nextStreamKFragment(u)) {
      REQUIRE(u.ticket.iteration == 9u);
      REQUIRE(u.streamKChunk == chunk);
      const std::uint32_t linear = linearIndex(u.ticket.tile, grid);
      const auto orderIndex = std::uint32_t(std::find(order.begin(), order.end(), linear) - order.begin());
      REQUIRE(orderIndex >= 4);  // never a whole tile
      REQUIRE(u.kBlocks(6).begin == u.kRange.begin);  // its own range, not a balanced part's
      auto& covered = kBlocksOfTile.try_emplace(linear, 6, 0).first->second;
      for (int k = u.kRange.begin; k < u.kRange.begin + u.kRange.count; ++k) ++covered[k];
      partsOfTile[linear].push_back(u.part);
      REQUIRE(u.part < u.parts);
      REQUIRE(u.parts <= v.streamKSlots);
      kBlocksOfChunk += u.kRange.count;
    }
    REQUIRE(kBlocksOfChunk == 15);
  }
  REQUIRE(kBlocksOfTile.size() == 10);
  for (const auto& [linear, covered] : kBlocksOfTile)
    for (int times : covered) REQUIRE(times == 1);
  // Tiles cut by a chunk boundary have two parts, 0 then 1: two of them either way (15 k-blocks = 2.5 tiles; one
  // group: region tiles 2 and 7; two: each group's third tile, region tiles 4 and 5).
  std::uint32_t cut = 0;
  for (const auto& [linear, parts] : partsOfTile) {
    if (parts.size() == 2) ++cut;
    for (std::uint32_t p = 0; p < parts.size(); ++p) REQUIRE(parts[p] == p);
  }
  REQUIRE(cut == 2);
}

TEST_CASE("static units: block b takes launch indices b, b + blocks, ...; each unit once, then a unit without work",
          "[stage-units]") {
  const GridShape grid{6, 2, 1};  // 12 tiles
  std::vector<std::uint32_t> order(12);
  for (std::uint32_t i = 0; i < 12; ++i) order[i] = (i * 5) % 12;
  for (std::uint32_t blocks : {1u, 5u, 7u, 40u})
    for (std::uint32_t wholeTiles : {0u, 9u}) {
      StageView v = stageOf(grid, 3, wholeTiles, PartOrder::KRangesInTurn, order.data());
      v.persistentBlocks = blocks;
      v.staticUnits = true;
      REQUIRE(v.takesStaticUnits());
      // One ticket per block and launch: the launch's iteration and the consumers' wait-kernel count.
      REQUIRE(v.ticketsPerLaunch() == blocks);
      REQUIRE(v.ticketsOnceEveryUnitIsTaken() == blocks);
      std::vector<int> taken(v.workUnits(), 0);
      for (std::uint32_t b = 0; b < blocks; ++b) {
        std::uint32_t position = 0;
        while (true) {
          const WorkUnit u = v.staticUnit(b, position, 3);
          REQUIRE(u.ticket.iteration == 3);
          if (!u.hasWork()) break;
          const std::uint32_t index = b + position * blocks;
          REQUIRE(index < v.workUnits());
          const WorkUnit expected = v.unitAt(index, 3);  // the unit a ticket of that index names
          REQUIRE(u.ticket.tile == expected.ticket.tile);
          REQUIRE(u.part == expected.part);
          REQUIRE(u.parts == expected.parts);
          // Without stream-K chunks, the lean persistent GEMM's own computation names the same unit.
          const WorkUnit lean = v.staticTileUnit(b, position, 3);
          REQUIRE(lean.hasWork());
          REQUIRE(lean.ticket.tile == u.ticket.tile);
          REQUIRE(lean.ticket.iteration == 3);
          REQUIRE(lean.part == u.part);
          REQUIRE(lean.parts == u.parts);
          ++taken[index];
          ++position;
        }
        // The block's sequence ends where its next index passes the launch's units.
        REQUIRE(b + position * blocks >= v.workUnits());
        REQUIRE_FALSE(v.staticTileUnit(b, position, 3).hasWork());
      }
      REQUIRE(std::all_of(taken.begin(), taken.end(), [](int n) { return n == 1; }));
      // Without persistent blocks the flag does nothing: tickets are the units' own.
      v.persistentBlocks = 0;
      REQUIRE_FALSE(v.takesStaticUnits());
      REQUIRE(v.ticketsPerLaunch() == v.workUnits());
      REQUIRE(v.ticketsOnceEveryUnitIsTaken() == v.workUnits());
    }
}

TEST_CASE("static units of a stream-K stage: the whole tiles, then the chunks, as tickets would name them",
          "[stage-units]") {
  StageView v;
  v.grid = GridShape{5, 3, 1};  // 15 tiles
  v.wholeTiles = 8;
  v.streamKChunks = 4;
  v.streamKBlocks = 10;
  v.persistentBlocks = 4;
  v.staticUnits = true;
  REQUIRE(v.workUnits() == 12);
  for (std::uint32_t b = 0; b < 4; ++b)
    for (std::uint32_t position = 0; position < 3; ++position) {
      const WorkUnit u = v.staticUnit(b, position, 0);
      const std::uint32_t index = b + position * 4;
      REQUIRE(u.hasWork());
      if (index < 8) {
        REQUIRE_FALSE(u.isStreamK());
        REQUIRE(linearIndex(u.ticket.tile, v.grid) == index);
      } else {
        REQUIRE(u.isStreamK());
        REQUIRE(u.streamKChunk == index - 8);
      }
    }
  REQUIRE_FALSE(v.staticUnit(0, 3, 0).hasWork());
}
