// Which tiles of the QKV GEMM's output hold a head's Q, K or V: what an attention block waits for before it reads
// them. QKV is [tokens, 3 * heads * 128]: part p (0: Q, 1: K, 2: V) of head h in columns
// [(p * heads + h) * 128, + 128). With the spec's head-wide tiles (128 columns) that is column tile p * heads + h;
// with narrower tiles (attention_prompt.dep's QkvTileN = 96) it is every tile the 128 columns overlap, two of them,
// and a tile may hold the end of one head and the start of the next. Host and device header (the CPU test
// qkv_head_tiles_test.cpp checks the cover for every head of both models).
#pragma once

#include <cstdint>

#include "cusync/tile.h"

namespace cusync::examples::attention {

struct QkvHeadTiles {
  static constexpr std::uint32_t kHeadDim = 128;
  std::uint32_t heads = 0;        // per GPU: 12 (GPT-3) or 8 (LLaMA)
  std::uint32_t tileRows = 0;     // rows of a QKV GEMM tile
  std::uint32_t tileColumns = 0;  // columns of a QKV GEMM tile: 128 (a head) or narrower

  CUSYNC_HOST_DEVICE std::uint32_t firstColumn(std::uint32_t part, std::uint32_t head) const {
    return (part * heads + head) * kHeadDim / tileColumns;
  }
  CUSYNC_HOST_DEVICE std::uint32_t lastColumn(std::uint32_t part, std::uint32_t head) const {
    return ((part * heads + head) * kHeadDim + kHeadDim - 1) / tileColumns;
  }
  // The row tile that holds token row `tokenRow`.
  CUSYNC_HOST_DEVICE std::uint32_t row(std::uint32_t tokenRow) const { return tokenRow / tileRows; }

  // Calls f(TileCoord) for each tile holding part `part` of head `head` in token row `tokenRow`'s row tile.
  template <class F>
  CUSYNC_HOST_DEVICE void forEach(std::uint32_t part, std::uint32_t head, std::uint32_t tokenRow, F&& f) const {
    const std::uint32_t last = lastColumn(part, head);
    for (std::uint32_t column = firstColumn(part, head); column <= last; ++column)
      f(TileCoord{column, row(tokenRow), 0});
  }
};

}  // namespace cusync::examples::attention
