// The staged tile's shared-memory layout (staged_tile_layout.h): one-to-one, and bank-conflict-free for the math
// warps' accumulator writes and the epilogue warps' chunk reads, for the tile shapes the fused chain runs.
#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <vector>

#include "cusync/staged_tile_layout.h"

namespace {

using cusync::StagedTileLayout;

constexpr std::uint32_t kBanks = 32;

// Wavefronts a shared-memory request needs: per 4-byte bank, the distinct 4-byte words it is asked for (a word
// asked by several lanes is one broadcast); the request takes as many wavefronts as the busiest bank.
std::uint32_t wavefronts(const std::vector<std::uint32_t>& byteAddresses, std::uint32_t bytesPerLane) {
  std::vector<std::set<std::uint32_t>> words(kBanks);
  for (std::uint32_t address : byteAddresses)
    for (std::uint32_t b = 0; b < bytesPerLane; b += 4) words[((address + b) / 4) % kBanks].insert((address + b) / 4);
  std::size_t busiest = 0;
  for (const auto& w : words) busiest = std::max(busiest, w.size());
  return std::uint32_t(busiest);
}

struct TileShape {
  std::uint32_t rows, columns;
};
const TileShape kShapes[] = {{64, 96}, {64, 128}, {128, 96}, {128, 176}, {128, 192}, {128, 256}, {256, 176}, {256, 192}};

}  // namespace

TEST_CASE("the staged tile layout gives every element of the tile its own two bytes inside the tile's bytes") {
  for (const TileShape shape : kShapes) {
    std::vector<bool> used(shape.rows * shape.columns, false);
    for (std::uint32_t row = 0; row < shape.rows; ++row)
      for (std::uint32_t column = 0; column < shape.columns; ++column) {
        const std::uint32_t offset = StagedTileLayout::byteOffset(shape.rows, row, column);
        REQUIRE(offset % 2 == 0);
        REQUIRE(offset / 2 < used.size());
        REQUIRE_FALSE(used[offset / 2]);
        used[offset / 2] = true;
      }
  }
}

TEST_CASE("a math warp's accumulator write to the staged tile takes one wavefront") {
  // wgmma's accumulator layout: lane l holds row 8 k + l / 4 (k the row group) and columns 8 g + 2 (l % 4), + 1.
  for (const TileShape shape : kShapes)
    for (std::uint32_t rowGroup = 0; rowGroup < shape.rows / 8; ++rowGroup)
      for (std::uint32_t chunkColumn = 0; chunkColumn < shape.columns / 8; ++chunkColumn) {
        std::vector<std::uint32_t> addresses;
        for (std::uint32_t lane = 0; lane < 32; ++lane)
          addresses.push_back(
              StagedTileLayout::byteOffset(shape.rows, 8 * rowGroup + lane / 4, 8 * chunkColumn + 2 * (lane % 4)));
        INFO("tile " << shape.rows << "x" << shape.columns << ", rows " << 8 * rowGroup << ", chunk column "
                     << chunkColumn);
        REQUIRE(wavefronts(addresses, 4) == 1);
      }
}

TEST_CASE("an epilogue warp's read of 4 rows x 8 chunks takes four wavefronts, a row's chunks one") {
  for (const TileShape shape : kShapes)
    for (std::uint32_t firstRow = 0; firstRow < shape.rows; firstRow += 4)
      for (std::uint32_t firstChunk = 0; firstChunk + 8 <= shape.columns / 8; ++firstChunk) {
        std::vector<std::uint32_t> warp;
        for (std::uint32_t lane = 0; lane < 32; ++lane) {
          const std::uint32_t row = firstRow + lane / 8, chunkColumn = firstChunk + lane % 8;
          warp.push_back(StagedTileLayout::chunkIndex(shape.rows, row, chunkColumn) * StagedTileLayout::kChunkBytes);
        }
        INFO("tile " << shape.rows << "x" << shape.columns << ", rows from " << firstRow << ", chunks from "
                     << firstChunk);
        // A 16-byte-per-lane request is served a quarter warp (one row here) at a time.
        for (std::uint32_t quarter = 0; quarter < 4; ++quarter) {
          const std::vector<std::uint32_t> row(warp.begin() + 8 * quarter, warp.begin() + 8 * quarter + 8);
          REQUIRE(wavefronts(row, 16) == 1);
        }
      }
}
