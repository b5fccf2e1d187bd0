// Where the LLaMA MLP's SwiGLU stage tiles lie and which GEMM-1 tiles each reads, given GEMM 1's tile shape at run
// time. Shared by the stage kernel (what it waits for, swiglu_stage.cuh) and the host (the policy checks,
// llama_policy_check.h), so both see one dependency. Host and device header.
#pragma once

#include <cstdint>

#include "cusync/tile.h"

namespace cusync::examples {

// Elements [first, end) along one dimension of a matrix.
struct IndexRange {
  std::uint32_t first, end;
};

// The tiles of width `tileSize` that elements [first, end) (non-empty) lie in.
CUSYNC_HOST_DEVICE constexpr IndexRange tilesCovering(IndexRange elements, std::uint32_t tileSize) {
  return IndexRange{elements.first / tileSize, (elements.end - 1) / tileSize + 1};
}

struct SwiGluGeometry {
  std::uint32_t m = 0;             // rows of S
  std::uint32_t intermediate = 0;  // columns of S (F/8); GEMM 1 has twice as many
  std::uint32_t tileRows = 0, tileColumns = 0;                  // S's tile
  std::uint32_t producerTileRows = 0, producerTileColumns = 0;  // GEMM 1's tile

  CUSYNC_HOST_DEVICE constexpr GridShape grid() const {
    return GridShape{(intermediate + tileColumns - 1) / tileColumns, (m + tileRows - 1) / tileRows, 1};
  }
  CUSYNC_HOST_DEVICE constexpr IndexRange rows(TileCoord tile) const {
    const std::uint32_t first = tile.y * tileRows;
    return IndexRange{first, first + tileRows < m ? first + tileRows : m};
  }
  CUSYNC_HOST_DEVICE constexpr IndexRange columns(TileCoord tile) const {
    const std::uint32_t first = tile.x * tileColumns;
    return IndexRange{first, first + tileColumns < intermediate ? first + tileColumns : intermediate};
  }

  // Calls visit(TileCoord) for every GEMM-1 tile that S tile `tile` reads: those overlapping its rows and its gate
  // columns, then those overlapping its rows and its up columns (F columns further right). A GEMM-1 tile holding
  // both the last gate and the first up columns may be visited twice; waiting twice for a tile is harmless.
  template <class Visit>
  CUSYNC_HOST_DEVICE void forEachProducerTile(TileCoord tile, Visit&& visit) const {
    const IndexRange producerRows = tilesCovering(rows(tile), producerTileRows);
    const IndexRange gate = columns(tile);
    for (int half = 0; half < 2; ++half) {  // gate, then up
      const std::uint32_t offset = half == 0 ? 0u : intermediate;
      const IndexRange producerColumns =
          tilesCovering(IndexRange{gate.first + offset, gate.end + offset}, producerTileColumns);
      for (std::uint32_t y = producerRows.first; y < producerRows.end; ++y)
        for (std::uint32_t x = producerColumns.first; x < producerColumns.end; ++x) visit(TileCoord{x, y, 0});
    }
  }
};

}  // namespace cusync::examples
