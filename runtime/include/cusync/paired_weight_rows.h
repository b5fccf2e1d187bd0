// Where a paired SwiGLU tile's weight rows lie in W. A skinny GEMM-1 tile of kTileN rows computes kTileN / 2 outputs:
// its rows [0, kTileN / 2) are their gate rows, [kTileN / 2, kTileN) their up rows. W stores gate and up rows paired
// in groups: `groupRows` gate rows, then the up rows of the same outputs, then the next group. The examples pair per
// tile (groupRows = kTileN / 2: a tile's rows are contiguous); the PyTorch op's layout pairs 64 rows for its 128-column
// fused tiles (python/csrc/cusync_mlp.h), which its one-token GEMV then reads in place. Host + device.
#pragma once

#include <cstdint>

#include "cusync/tile.h"

namespace cusync {

// The W row of row `row` of tile `tile`, for tiles of 2 * half rows over W paired in groups of `groupRows` gate rows
// (a multiple of `half`, so that no tile straddles two groups). The rows of one half are contiguous in W.
CUSYNC_HOST_DEVICE constexpr std::uint32_t pairedWeightRow(std::uint32_t tile, std::uint32_t row, std::uint32_t half,
                                                          std::uint32_t groupRows) {
  const std::uint32_t firstOutput = tile * half;
  const std::uint32_t group = firstOutput / groupRows, offset = firstOutput % groupRows;
  const bool up = row >= half;
  return 2 * groupRows * group + (up ? groupRows : 0u) + offset + (up ? row - half : row);
}

}  // namespace cusync
