// The hooked GEMMs (sm_90 and sm_80) wait, before each A k-tile, for the producer tiles returned by producerTilesCovering.
// Too few tiles is a race (the consumer reads unposted data), too many is a needless wait or, past the producer
// grid, a wait for a tile that never exists (a hang). Checked against a brute-force overlap of every producer
// tile with the block, over tile shapes that do and do not divide each other and over ragged edges.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>

#include "cusync/producer_tile_range.hpp"

using cusync::GridShape;
using cusync::producerTilesCovering;

namespace {

// Whether producer tile (x, y) of a rows x columns output, tiled tileRows x tileColumns, shares an element with
// the block [r0, r1) x [c0, c1).
bool overlaps(std::uint32_t x, std::uint32_t y, std::uint32_t tileRows, std::uint32_t tileColumns,
              std::uint32_t rows, std::uint32_t columns, std::uint32_t r0, std::uint32_t r1, std::uint32_t c0,
              std::uint32_t c1) {
  const std::uint32_t tr0 = y * tileRows, tr1 = std::min(rows, tr0 + tileRows);
  const std::uint32_t tc0 = x * tileColumns, tc1 = std::min(columns, tc0 + tileColumns);
  return std::max(tr0, r0) < std::min(tr1, r1) && std::max(tc0, c0) < std::min(tc1, c1);
}

}  // namespace

TEST_CASE("producerTilesCovering is exactly the set of producer tiles a block of A overlaps") {
  const std::uint32_t tileShapes[] = {16, 32, 64, 128};
  const std::uint32_t rowCounts[] = {1, 37, 128, 200};
  const std::uint32_t columnCounts[] = {64, 192, 256};
  for (std::uint32_t tileRows : tileShapes)
    for (std::uint32_t tileColumns : tileShapes)
      for (std::uint32_t rows : rowCounts)
        for (std::uint32_t columns : columnCounts) {
          const GridShape grid{(columns + tileColumns - 1) / tileColumns, (rows + tileRows - 1) / tileRows, 1};
          // Consumer blocks: every (row tile, k-tile) of consumer tile shapes 32/64/128 x 32/64, clipped to M as
          // the kernel clips them (rowEnd <= M); k-tiles may run past N only for the partial (first) k-tile.
          for (std::uint32_t blockRows : {32u, 64u, 128u})
            for (std::uint32_t blockColumns : {32u, 64u})
              for (std::uint32_t r0 = 0; r0 < rows; r0 += blockRows)
                for (std::uint32_t c0 = 0; c0 < columns; c0 += blockColumns) {
                  const std::uint32_t r1 = std::min(rows, r0 + blockRows), c1 = std::min(columns, c0 + blockColumns);
                  const auto range = producerTilesCovering(r0, r1, c0, c1, tileRows, tileColumns, grid);
                  for (std::uint32_t y = 0; y < grid.y; ++y)
                    for (std::uint32_t x = 0; x < grid.x; ++x) {
                      const bool inRange = x >= range.xBegin && x < range.xEnd && y >= range.yBegin && y < range.yEnd;
                      const bool expected = overlaps(x, y, tileRows, tileColumns, rows, columns, r0, r1, c0, c1);
                      if (inRange != expected) {
                        INFO("producer tile " << tileRows << "x" << tileColumns << " of " << rows << "x" << columns
                                              << ", block rows [" << r0 << "," << r1 << ") columns [" << c0 << ","
                                              << c1 << "), tile (" << x << "," << y << ")");
                        REQUIRE(inRange == expected);
                      }
                    }
                  REQUIRE(range.xEnd <= grid.x);
                  REQUIRE(range.yEnd <= grid.y);
                }
        }
}

TEST_CASE("producerTilesCovering clips to the producer grid and is empty for empty blocks") {
  const GridShape grid{4, 2, 1};  // a 256-column, 200-row output in 64 x 128 tiles
  // Columns past the producer's N (a consumer k-tile of a K that is not a multiple of its tile): clipped.
  auto range = producerTilesCovering(0, 128, 192, 320, 128, 64, grid);
  REQUIRE(range.xBegin == 3);
  REQUIRE(range.xEnd == 4);
  // Rows past M: clipped to the grid.
  range = producerTilesCovering(128, 400, 0, 64, 128, 64, grid);
  REQUIRE(range.yBegin == 1);
  REQUIRE(range.yEnd == 2);
  REQUIRE(producerTilesCovering(5, 5, 0, 64, 128, 64, grid).empty());
  REQUIRE(producerTilesCovering(0, 64, 7, 7, 128, 64, grid).empty());
  REQUIRE(producerTilesCovering(0, 64, 0, 64, 0, 64, grid).empty());  // no producer shape: nothing to wait for
}

// The hooked GEMMs skip the wait at the k-blocks before kBlocksWithinPostedColumns when a warp-wide look found
// the unit's producer columns [xBegin, known) posted. Skipping a k-block that reads an unposted column is a race;
// the bound must also not stop short, or the load thread checks k-blocks it need not. Exact for every k-range of a
// unit (split-K parts included), every known prefix, tile widths that do and do not divide the k-block, and a last
// partial k-block past the producer's N.
TEST_CASE("kBlocksWithinPostedColumns ends exactly at the first k-block reading a column not known posted") {
  const std::uint32_t tileShapes[] = {32, 64, 96, 128, 176};
  const std::uint32_t columnCounts[] = {64, 192, 2752, 6144};
  const std::uint32_t kBlockShapes[] = {32, 64, 128};
  for (std::uint32_t tileColumns : tileShapes)
    for (std::uint32_t columns : columnCounts)
      for (std::uint32_t kBlock : kBlockShapes) {
        const GridShape grid{(columns + tileColumns - 1) / tileColumns, 4, 1};
        const int kBlocks = int((columns + kBlock - 1) / kBlock);
        for (int kBegin : {0, kBlocks / 3, kBlocks - 1})
          for (int kEnd : {kBegin + 1, (kBegin + kBlocks) / 2 + 1, kBlocks}) {
            if (kEnd <= kBegin || kEnd > kBlocks) continue;
            const auto unit = producerTilesCovering(128, 256, std::uint32_t(kBegin) * kBlock,
                                                    std::uint32_t(kEnd) * kBlock, 128, tileColumns, grid);
            for (std::uint32_t known = 0; known <= grid.x + 1; ++known) {
              const int end = cusync::kBlocksWithinPostedColumns(known, unit, tileColumns, kBlock, kBegin, kEnd);
              INFO("tile " << tileColumns << " columns " << columns << " k-block " << kBlock << " k [" << kBegin
                           << ", " << kEnd << ") known " << known << " -> " << end);
              REQUIRE(end >= kBegin);
              REQUIRE(end <= kEnd);
              for (int k = kBegin; k < kEnd; ++k) {
                const auto reads = producerTilesCovering(128, 256, std::uint32_t(k) * kBlock,
                                                         std::uint32_t(k + 1) * kBlock, 128, tileColumns, grid);
                const bool allKnown = known >= unit.xEnd || reads.xEnd <= known;
                CHECK((k < end) == allKnown);
              }
            }
          }
      }
}
