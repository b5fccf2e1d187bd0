// Where element (row, column) of a TileM x TileN fp16 tile lives in shared memory while it is staged between the
// math warps, which write it from their wgmma accumulators, and the epilogue warps, which read it back, apply the
// activation and store it to global memory (cutlass/staged_tile_epilogue.hpp). Host and device code.
//
// The tile is cut into 16-byte chunks, 8 columns of one row. Chunk column b (columns [8b, 8b + 8)) keeps its TileM
// rows together; within each group of 8 rows, row r sits in slot (r XOR b) mod 8. Two access patterns then touch
// 32 different banks per wavefront, the fewest wavefronts their bytes allow:
// - a math warp writes 4 bytes per lane: 8 rows x 8 columns of one chunk column (the wgmma accumulator layout:
//   lane l holds row l / 4, columns 2 (l mod 4) and + 1): 8 consecutive slots, 128 contiguous bytes;
// - an epilogue warp reads 16 bytes per lane: 4 rows x 8 consecutive chunk columns, so each row's 8 lanes (one
//   wavefront) then write 128 contiguous bytes of global memory; the XOR puts a row's 8 chunks in 8 different
//   slots of their groups, so in 8 different 16-byte bank groups.
// tests/runtime/staged_tile_layout_test.cpp checks both and that the map is one-to-one.
#pragma once

#include <cstdint>

#include "cusync/tile.h"  // CUSYNC_HOST_DEVICE

namespace cusync {

struct StagedTileLayout {
  static constexpr std::uint32_t kChunkColumns = 8;  // fp16 columns per 16-byte chunk
  static constexpr std::uint32_t kChunkBytes = 16;

  // The chunk of (row, chunk column) in a tile of `rows` rows (a multiple of 8).
  CUSYNC_HOST_DEVICE static constexpr std::uint32_t chunkIndex(std::uint32_t rows, std::uint32_t row,
                                                               std::uint32_t chunkColumn) {
    return chunkColumn * rows + ((row & ~7u) | ((row ^ chunkColumn) & 7u));
  }
  CUSYNC_HOST_DEVICE static constexpr std::uint32_t byteOffset(std::uint32_t rows, std::uint32_t row,
                                                               std::uint32_t column) {
    return chunkIndex(rows, row, column / kChunkColumns) * kChunkBytes + (column % kChunkColumns) * 2u;
  }
};

}  // namespace cusync
