// The fused chain's queue (runtime/include/cusync/chain_queue.h) on the host: per launch it hands out every work
// unit of every queued stage exactly once, then one stop ticket per persistent block; stage by stage in chain order
// (the progress argument's precondition); parts in the promised order. And, on the GPT-3 MLP's real geometry, the
// property the fused kernel's progress rests on: every GEMM-1 tile a GEMM-2 unit waits for has a smaller ticket.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "../../examples/mlp/fused_split.h"
#include "cusync/chain_queue.h"
#include "cusync/grouped_order.h"
#include "cusync/producer_tile_range.hpp"

using namespace cusync;

namespace {
ChainQueueView queueOf(const std::vector<ChainStageUnits>& stages, const std::vector<PartOrder>& orders,
                       const std::vector<bool>& queued, std::uint32_t blocks) {
  ChainQueueView q;
  q.stageCount = std::uint32_t(stages.size());
  q.persistentBlocks = blocks;
  std::uint32_t next = 0;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    q.firstTicket[s] = next;
    q.partOrder[s] = orders[s];
    if (queued[s]) next += stages[s].grid.tileCount() * stages[s].blocksPerTile;
  }
  q.firstTicket[stages.size()] = next;
  return q;
}

using UnitKey = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>;
UnitKey key(const QueuedUnit& u) { return {u.stage, u.tile.x, u.tile.y, u.tile.z, u.part}; }

// Inverse grouped column-major order, as Stage::setTileOrder tabulates it.
std::vector<std::uint32_t> groupedTable(GridShape g, std::uint32_t groupRows) {
  std::vector<std::uint32_t> table(g.tileCount());
  for (std::uint32_t linear = 0; linear < g.tileCount(); ++linear)
    table[groupedColumnMajorIndex(tileAtLinear(linear, g), g, groupRows)] = linear;
  return table;
}
}  // namespace

TEST_CASE("a chain launch hands out every unit once, stage by stage, then one stop ticket per block", "[chain]") {
  for (PartOrder secondOrder : {PartOrder::PartsOfATileTogether, PartOrder::KRangesInTurn})
    for (std::uint32_t parts0 : {1u, 3u})
      for (std::uint32_t parts1 : {1u, 4u}) {
        const std::vector<ChainStageUnits> stages{{GridShape{5, 2, 1}, nullptr, parts0},
                                                  {GridShape{7, 2, 1}, nullptr, parts1}};
        const ChainQueueView q = queueOf(stages, {PartOrder::PartsOfATileTogether, secondOrder}, {true, true}, 6);
        REQUIRE(q.ticketsPerLaunch() == 10 * parts0 + 14 * parts1 + 6);
        std::set<UnitKey> seen;
        std::uint32_t lastStage = 0, stops = 0;
        for (std::uint32_t i = 0; i < q.ticketsPerLaunch(); ++i) {
          const QueuedUnit u = q.unitAt(i, stages.data());
          if (u.stop) {
            ++stops;
            continue;
          }
          REQUIRE(stops == 0);  // stop tickets come after every unit
          REQUIRE(u.stage >= lastStage);
          lastStage = u.stage;
          REQUIRE(stages[u.stage].grid.contains(u.tile));
          REQUIRE(u.part < stages[u.stage].blocksPerTile);
          REQUIRE(seen.insert(key(u)).second);
        }
        REQUIRE(stops == 6);
        REQUIRE(seen.size() == 10 * parts0 + 14 * parts1);
      }
}

TEST_CASE("parts of a tile come together or k-range by k-range, as the stage's part order says", "[chain]") {
  const std::vector<ChainStageUnits> stages{{GridShape{4, 3, 1}, nullptr, 3}};
  SECTION("together") {
    const ChainQueueView q = queueOf(stages, {PartOrder::PartsOfATileTogether}, {true}, 1);
    for (std::uint32_t i = 0; i < 12; ++i)
      for (std::uint32_t p = 0; p < 3; ++p) {
        const QueuedUnit u = q.unitAt(3 * i + p, stages.data());
        REQUIRE(u.part == p);
        REQUIRE(linearIndex(u.tile, stages[0].grid) == i);
      }
  }
  SECTION("k-ranges in turn") {
    const ChainQueueView q = queueOf(stages, {PartOrder::KRangesInTurn}, {true}, 1);
    for (std::uint32_t p = 0; p < 3; ++p)
      for (std::uint32_t i = 0; i < 12; ++i) {
        const QueuedUnit u = q.unitAt(12 * p + i, stages.data());
        REQUIRE(u.part == p);
        REQUIRE(linearIndex(u.tile, stages[0].grid) == i);
      }
  }
}

TEST_CASE("a stage listed but not queued contributes no units (a stream-ordered launch of one GEMM)", "[chain]") {
  const std::vector<ChainStageUnits> stages{{GridShape{3, 1, 1}, nullptr, 2}, {GridShape{5, 1, 1}, nullptr, 1}};
  const ChainQueueView onlySecond = queueOf(stages, {PartOrder::PartsOfATileTogether, PartOrder::KRangesInTurn},
                                            {false, true}, 2);
  REQUIRE(onlySecond.workUnits() == 5);
  for (std::uint32_t i = 0; i < 5; ++i) REQUIRE(onlySecond.unitAt(i, stages.data()).stage == 1);
  REQUIRE(onlySecond.unitAt(5, stages.data()).stop);
}

// GPT-3 MLP slice on 64x128x128 tiles: GEMM 1 [M, 6144] over K = 12288, GEMM 2 [M, 12288] over K = 6144, with the
// split-K candidates the fused example tries, row-major and grouped (g8) tile orders. A GEMM-2 unit of k-range
// [k0, k1) waits for the GEMM-1 tiles covering columns [k0, k1) of its rows (the same producerTilesCovering the
// kernel's wait uses); each of them, all parts of it, must have been queued before the unit.
TEST_CASE("on the MLP's geometry, every GEMM-1 tile a GEMM-2 unit waits for is queued before it", "[chain][mlp]") {
  const std::uint32_t tileM = 64, tileN = 128, tileK = 128, hidden = 12288, intermediate = 6144, slots = 132;
  for (std::uint32_t m : {1u, 200u, 1024u})
    for (std::uint32_t groupRows : {1u, 8u}) {
      const GridShape g1{intermediate / tileN, (m + tileM - 1) / tileM, 1}, g2{hidden / tileN, g1.y, 1};
      const auto table1 = groupedTable(g1, groupRows), table2 = groupedTable(g2, groupRows);
      for (const auto& split : cusync::examples::fusedSplitCandidates(g1.tileCount(), hidden / tileK, g2.tileCount(),
                                                                      intermediate / tileK, slots)) {
        const std::vector<ChainStageUnits> stages{{g1, table1.data(), split.firstParts},
                                                  {g2, table2.data(), split.secondParts}};
        const ChainQueueView q = queueOf(stages, {PartOrder::PartsOfATileTogether, PartOrder::KRangesInTurn},
                                         {true, true}, slots);
        std::map<std::uint32_t, std::uint32_t> lastTicketOfTile;  // GEMM-1 tile -> ticket of its last part
        const std::uint32_t kBlocks2 = intermediate / tileK;
        for (std::uint32_t i = 0; i < q.workUnits(); ++i) {
          const QueuedUnit u = q.unitAt(i, stages.data());
          if (u.stage == 0) {
            lastTicketOfTile[linearIndex(u.tile, g1)] = i;
            continue;
          }
          const std::uint32_t kBegin = u.part * kBlocks2 / split.secondParts;
          const std::uint32_t kEnd = (u.part + 1) * kBlocks2 / split.secondParts;
          const ProducerTileRange r = producerTilesCovering(u.tile.y * tileM, (u.tile.y + 1) * tileM, kBegin * tileK,
                                                            kEnd * tileK, tileM, tileN, g1);
          REQUIRE(!r.empty());
          for (std::uint32_t y = r.yBegin; y < r.yEnd; ++y)
            for (std::uint32_t x = r.xBegin; x < r.xEnd; ++x) {
              const auto it = lastTicketOfTile.find(linearIndex(TileCoord{x, y, 0}, g1));
              REQUIRE(it != lastTicketOfTile.end());
              REQUIRE(it->second < i);
            }
        }
      }
    }
}

TEST_CASE("fused split-K candidates: no split first, parts within the k-blocks, enough units where allowed",
          "[chain][split]") {
  const auto splits = cusync::examples::fusedSplitCandidates(48, 96, 96, 48, 132);
  REQUIRE(splits.front() == cusync::examples::FusedSplit{1, 1});
  for (const auto& s : splits) {
    REQUIRE(s.firstParts >= 1);
    REQUIRE(s.firstParts <= 96 / 4);
    REQUIRE(s.secondParts <= 48 / 4);
  }
  // One wave: 48 tiles need 3 parts (144 units >= 132), 96 tiles need 2.
  REQUIRE(std::find(splits.begin(), splits.end(), cusync::examples::FusedSplit{3, 2}) != splits.end());
  // Capped by the k-blocks: 8 k-blocks allow at most 2 parts of 4.
  REQUIRE(cusync::examples::partsForWaves(1, 8, 132, 4) == 2);
  // Enough tiles: no split.
  REQUIRE(cusync::examples::partsForWaves(1536, 96, 132, 4) == 1);
}

TEST_CASE("fused splits by name: none or AxB with parts 1-999, the label's own spelling", "[fused][split]") {
  using cusync::examples::FusedSplit;
  using cusync::examples::parseFusedSplit;
  REQUIRE(parseFusedSplit("none") == FusedSplit{});
  REQUIRE(parseFusedSplit("5x3") == FusedSplit{5, 3});
  REQUIRE(parseFusedSplit("999x1") == FusedSplit{999, 1});
  REQUIRE(("_sk" + std::string("12x8")) == parseFusedSplit("12x8")->label());  // round trip through the suffix
  for (const char* bad : {"", "x", "2x", "x3", "0x3", "3x0", "1000x1", "2x3x4", "2X3", "-1x2", "2x 3", "1x1x"})
    REQUIRE_FALSE(parseFusedSplit(bad).has_value());
}

TEST_CASE("fused split-K candidates: GEMM 1 also split so that its units end in a nearly full wave",
          "[chain][split]") {
  using cusync::examples::FusedSplit;
  using cusync::examples::partsFillingWaves;
  // GPT-3 at M = 1 (48 tiles of 96 k-blocks, 132 slots): 5 parts make 240 units, 91% of two waves; 11 make
  // exactly four.
  REQUIRE(partsFillingWaves(48, 96, 132, 2) == 5);
  REQUIRE(partsFillingWaves(48, 96, 132, 4) == 11);
  // Two parts would fill one wave to 73% only: none.
  REQUIRE(partsFillingWaves(48, 96, 132, 1) == 0);
  // LLaMA at M = 1 (43 tiles): 3 parts, 129 of 132.
  REQUIRE(partsFillingWaves(43, 64, 132, 1) == 3);
  // Capped by the k-blocks (at least 4 per part): 8 k-blocks allow 2 parts, 2 tiles of 2 parts fill no wave.
  REQUIRE(partsFillingWaves(2, 8, 132, 1) == 0);
  // More tiles than the waves hold: none.
  REQUIRE(partsFillingWaves(300, 96, 132, 2) == 0);
  // Both GEMMs ending in nearly full waves: LLaMA at M = 1 (43 and 64 tiles): 3 x 2 parts, 129 and 128 units.
  const auto llama = cusync::examples::fusedSplitCandidates(43, 64, 64, 22, 132);
  REQUIRE(std::find(llama.begin(), llama.end(), FusedSplit{3, 2}) != llama.end());
  const auto splits = cusync::examples::fusedSplitCandidates(48, 96, 96, 48, 132);
  REQUIRE(std::find(splits.begin(), splits.end(), FusedSplit{5, 3}) != splits.end());
  REQUIRE(std::find(splits.begin(), splits.end(), FusedSplit{6, 3}) != splits.end());
  for (std::size_t i = 0; i < splits.size(); ++i)
    for (std::size_t j = i + 1; j < splits.size(); ++j) REQUIRE(!(splits[i] == splits[j]));
}

TEST_CASE("2x1 clusters: a queue unit gives the cluster's two blocks vertically adjacent tiles of one part, and the "
          "launch covers every tile part once",
          "[chain][cluster]") {
  for (std::uint32_t rows : {1u, 2u, 3u, 5u})  // odd: rank 1's tile of the last cluster row lies past the grid
    for (std::uint32_t parts : {1u, 3u}) {
      const GridShape tiles{4, rows, 1};
      const GridShape clusters = clusterGrid(tiles, 2);
      REQUIRE(clusters.y == (rows + 1) / 2);
      const std::vector<std::uint32_t> order = groupedTable(clusters, 2);
      const std::vector<ChainStageUnits> stages{{clusters, order.data(), parts}};
      const ChainQueueView q = queueOf(stages, {PartOrder::KRangesInTurn}, {true}, 3);
      REQUIRE(q.workUnits() == clusters.tileCount() * parts);
      std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, int> computed;  // (x, y, part) -> count
      std::uint32_t pastGrid = 0;
      for (std::uint32_t i = 0; i < q.workUnits(); ++i) {
        const QueuedUnit u = q.unitAt(i, stages.data());
        REQUIRE_FALSE(u.stop);
        const TileCoord t0 = blockTileOfClusterUnit(u.tile, 2, 0), t1 = blockTileOfClusterUnit(u.tile, 2, 1);
        REQUIRE(t0.x == t1.x);
        REQUIRE(t1.y == t0.y + 1);
        REQUIRE(tiles.contains(t0));  // rank 0's tile always exists
        for (const TileCoord& t : {t0, t1}) {
          if (!tiles.contains(t)) {
            ++pastGrid;
            continue;
          }
          ++computed[{t.x, t.y, u.part}];
        }
      }
      REQUIRE(computed.size() == tiles.tileCount() * parts);
      for (const auto& [unit, count] : computed) REQUIRE(count == 1);
      REQUIRE(pastGrid == (rows % 2 == 1 ? tiles.x * parts : 0u));
    }
}
