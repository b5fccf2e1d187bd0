// Host tests of the paired gate/up tile order of GEMM 1 (gate_up_order.h): it is a bijection for every grouping,
// and it produces everything an S tile reads before any gate tile that only later S tiles read.
#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <vector>

#include "gate_up_order.h"
#include "swiglu_geometry.h"

using namespace cusync;
using namespace cusync::examples;

namespace {

constexpr std::uint32_t kIntermediate = 2752;  // F/8 of LLaMA 65B

// Column tiles of GEMM 1 in the order of their ranks.
std::vector<std::uint32_t> columnsInOrder(const std::vector<std::uint32_t>& rank) {
  std::vector<std::uint32_t> columns(rank.size());
  for (std::uint32_t x = 0; x < rank.size(); ++x) columns[rank[x]] = x;
  return columns;
}

}  // namespace

TEST_CASE("paired gate/up order: gate tile x, then the up tiles of the same S columns", "[llama][order]") {
  // 64-wide tiles: F/8 = 43 tiles each side, up tile x + 43 right after gate tile x.
  std::vector<std::uint32_t> expected64;
  for (std::uint32_t x = 0; x < 43; ++x) {
    expected64.push_back(x);
    expected64.push_back(x + 43);
  }
  CHECK(columnsInOrder(pairedGateUpRanks(86, 64, kIntermediate)) == expected64);
  // 128-wide tiles: tile 21 holds gate [2688, 2752) and up [2752, 2816) (S columns 0..63), so it comes first with
  // tile 0; up tile 22 feeds S columns 64..191, before gate tile 1 (S columns 128..255).
  const auto order128 = columnsInOrder(pairedGateUpRanks(43, 128, kIntermediate));
  CHECK(std::vector<std::uint32_t>(order128.begin(), order128.begin() + 6) ==
        std::vector<std::uint32_t>{0, 21, 22, 1, 23, 2});
}

TEST_CASE("paired gate/up order: an S tile's GEMM-1 tiles all come before any gate tile of later S columns",
          "[llama][order]") {
  for (std::uint32_t gemmColumns : {64u, 128u, 256u}) {
    const std::uint32_t columnTiles = (2 * kIntermediate + gemmColumns - 1) / gemmColumns;
    const auto rank = pairedGateUpRanks(columnTiles, gemmColumns, kIntermediate);
    SwiGluGeometry g;
    g.m = 1;
    g.intermediate = kIntermediate;
    g.tileRows = g.producerTileRows = 64;
    g.tileColumns = 64;
    g.producerTileColumns = gemmColumns;
    for (std::uint32_t x = 0; x < g.grid().x; ++x) {
      std::uint32_t ready = 0;  // the position in the order by which S tile x has everything it reads
      g.forEachProducerTile(TileCoord{x, 0, 0}, [&](TileCoord p) { ready = std::max(ready, rank[p.x]); });
      for (std::uint32_t gate = 0; gate * gemmColumns + gemmColumns <= kIntermediate; ++gate) {
        if (gate * gemmColumns < (x + 1) * 64) continue;  // feeds S tile x or an earlier one
        INFO("GEMM-1 tile width " << gemmColumns << ", S tile " << x << ", gate tile " << gate);
        CHECK(ready < rank[gate]);
      }
    }
  }
}

TEST_CASE("paired gate/up order is a bijection for row-major, grouped and column-major rows", "[llama][order]") {
  for (std::uint32_t gemmColumns : {64u, 128u, 256u})
    for (std::uint32_t rows : {1u, 3u, 8u, 32u})
      for (std::uint32_t groupRows : {0u, 1u, 4u, 8u}) {
        const GridShape grid{(2 * kIntermediate + gemmColumns - 1) / gemmColumns, rows, 1};
        const auto index = pairedGateUpOrder(grid, groupRows, pairedGateUpRanks(grid.x, gemmColumns, kIntermediate));
        const std::set<std::uint32_t> distinct(index.begin(), index.end());
        INFO("width " << gemmColumns << ", rows " << rows << ", group " << groupRows);
        CHECK(distinct.size() == grid.tileCount());
        CHECK(*distinct.rbegin() == grid.tileCount() - 1);
      }
}
