// Which producer tiles a block of the consumer's A operand overlaps: the rectangle of producer tiles covering rows
// [rowBegin, rowEnd) and columns [columnBegin, columnEnd) of A (= the producer's output D). Used by the hooked
// GEMMs' waits (sm_90 and sm_80). Host and device (the host side is unit-tested against a brute-force overlap in
// tests/runtime); free of CUTLASS and of CUDA runtime headers.
#pragma once

#include <cstdint>

#include "cusync/tile.h"

namespace cusync {

// Producer tiles x in [xBegin, xEnd), y in [yBegin, yEnd); empty when the block is empty.
struct ProducerTileRange {
  std::uint32_t xBegin = 0, xEnd = 0, yBegin = 0, yEnd = 0;
  CUSYNC_HOST_DEVICE constexpr bool empty() const { return xBegin >= xEnd || yBegin >= yEnd; }
};

// Producer tiles are tileRows x tileColumns; those beyond the producer grid (rows or columns past the producer's
// M or N) are clipped, since they do not exist. Columns past the producer's N occur when the consumer's K is not a
// multiple of its k-block (LLaMA: K = 2752 with 128-wide k-blocks): the last k-block reads zero-filled columns.
CUSYNC_HOST_DEVICE constexpr ProducerTileRange producerTilesCovering(std::uint32_t rowBegin, std::uint32_t rowEnd,
                                                                     std::uint32_t columnBegin,
                                                                     std::uint32_t columnEnd,
                                                                     std::uint32_t tileRows,
                                                                     std::uint32_t tileColumns,
                                                                     GridShape producerGrid) {
  if (rowEnd <= rowBegin || columnEnd <= columnBegin || tileRows == 0 || tileColumns == 0) return {};
  ProducerTileRange range;
  range.yBegin = rowBegin / tileRows;
  range.yEnd = (rowEnd - 1) / tileRows + 1;
  range.xBegin = columnBegin / tileColumns;
  range.xEnd = (columnEnd - 1) / tileColumns + 1;
  if (range.yEnd > producerGrid.y) range.yEnd = producerGrid.y;
  if (range.xEnd > producerGrid.x) range.xEnd = producerGrid.x;
  return range;
}

// The end of the k-blocks, from kBegin on, whose producer tiles all lie in columns below knownPostedColumnsEnd, for a
// consumer unit reading A's k-blocks [kBegin, kEnd) of kBlockColumns columns each, whose producer tiles are `unit`
// (producerTilesCovering of the whole k-range) and tileColumns wide. Columns [unit.xBegin, knownPostedColumnsEnd) are
// known posted in every row of the unit: a k-block before the returned end needs no wait. All of them when every
// column is known (the last, partial k-block included); none when no column is. Why a bound and not a range per
// k-block: the range's divisions, between each stage's acquire and its copies, slowed the two-launch pingpong GEMM
// by a third (tile_sync_mainloop.hpp).
CUSYNC_HOST_DEVICE constexpr int kBlocksWithinPostedColumns(std::uint32_t knownPostedColumnsEnd, ProducerTileRange unit,
                                                            std::uint32_t tileColumns, std::uint32_t kBlockColumns,
                                                            int kBegin, int kEnd) {
  if (knownPostedColumnsEnd >= unit.xEnd) return kEnd;
  if (knownPostedColumnsEnd <= unit.xBegin || kBlockColumns == 0) return kBegin;
  const int end = int(knownPostedColumnsEnd * tileColumns / kBlockColumns);
  return end < kBegin ? kBegin : (end > kEnd ? kEnd : end);
}

}  // namespace cusync
