// Stream-K work units: a stage's last tiles (its "region") cut into `chunks` units of equal k-block counts, where a
// unit may end inside one tile and go on into the next. Host and device; no CUDA needed.
//
// Why: split-K of the last partial wave (StageView::wholeTiles) balances the wave only by cutting its few tiles
// into many parts, and the last arrival of each then adds many partials: GPT-3's QKV GEMM at 512 tokens runs 132
// whole tiles and 12 in 11 parts, whose last arrivals read 10 partials of 64 KB each. Stream-K (Osama et al.,
// PPoPP'23) gives every block the same share of the region's k-blocks instead, so a tile is cut where the shares'
// boundaries fall: into two parts when a share is at least a tile, three when it is at least half of one. The
// parts are reduced exactly as split-K parts are (split_k_reduction.hpp: the last arrival adds the others, no part
// waits for another), so stream-K adds no hazard to progress.
//
// Numbering: the region's k-blocks run tile by tile, g in [0, tiles * kBlocks). Chunk c covers
// [chunkBegin(c), chunkBegin(c + 1)), chunkBegin(c) = floor(c * total / chunks). A fragment is a chunk's piece of
// one tile; the parts of a tile are the chunks that touch it, numbered from 0 in chunk order.
#pragma once

#include <cstdint>

#include "cusync/split_k_range.h"
#include "cusync/tile.h"  // CUSYNC_HOST_DEVICE

namespace cusync {

// One chunk's piece of one tile: the tile (as its index in the region), its part number and the tile's part count
// (for the split-K arrival), and the k-blocks of the tile the piece reduces.
struct StreamKFragment {
  std::uint32_t regionTile;
  std::uint32_t part;
  std::uint32_t parts;
  KBlockRange kBlocks;
};

struct StreamKRegion {
  std::uint32_t tiles = 0;   // tiles in the region
  std::uint32_t chunks = 0;  // work units; at most tiles * kBlocks, so that none is empty
  int kBlocks = 0;           // k-blocks per tile

  CUSYNC_HOST_DEVICE constexpr std::uint64_t totalKBlocks() const { return std::uint64_t(tiles) * std::uint64_t(kBlocks); }
  CUSYNC_HOST_DEVICE constexpr std::uint64_t chunkBegin(std::uint32_t chunk) const {
    return std::uint64_t(chunk) * totalKBlocks() / chunks;
  }
  // The chunk whose range holds region k-block g: the largest c with floor(c * total / chunks) <= g, that is
  // c * total < (g + 1) * chunks.
  CUSYNC_HOST_DEVICE constexpr std::uint32_t chunkOf(std::uint64_t g) const {
    return std::uint32_t(((g + 1) * chunks - 1) / totalKBlocks());
  }
  CUSYNC_HOST_DEVICE constexpr std::uint32_t firstChunkOfTile(std::uint32_t tile) const {
    return chunkOf(std::uint64_t(tile) * std::uint64_t(kBlocks));
  }
  CUSYNC_HOST_DEVICE constexpr std::uint32_t partsOfTile(std::uint32_t tile) const {
    return chunkOf(std::uint64_t(tile + 1) * std::uint64_t(kBlocks) - 1) - firstChunkOfTile(tile) + 1;
  }
  // The fragment of `chunk` that starts at region k-block g (chunkBegin(chunk) <= g < chunkBegin(chunk + 1)); the
  // chunk's next fragment starts at g + kBlocks.count.
  CUSYNC_HOST_DEVICE constexpr StreamKFragment fragmentAt(std::uint32_t chunk, std::uint64_t g) const {
    const std::uint32_t tile = std::uint32_t(g / std::uint64_t(kBlocks));
    const std::uint64_t tileEnd = std::uint64_t(tile + 1) * std::uint64_t(kBlocks);
    const std::uint64_t chunkEnd = chunkBegin(chunk + 1);
    const std::uint64_t end = chunkEnd < tileEnd ? chunkEnd : tileEnd;
    const std::uint32_t first = firstChunkOfTile(tile);
    return StreamKFragment{tile, chunk - first, partsOfTile(tile),
                           KBlockRange{int(g - std::uint64_t(tile) * std::uint64_t(kBlocks)), int(end - g)}};
  }
  // The most parts any tile has: the partial slots a tile needs. A tile spans at most
  // ceil((kBlocks - 1) / shortest chunk) + 1 chunks; the exact count by one pass over the tiles (host set-up).
  constexpr std::uint32_t maxPartsOfATile() const {
    std::uint32_t most = 0;
    for (std::uint32_t tile = 0; tile < tiles; ++tile) {
      const std::uint32_t parts = partsOfTile(tile);
      most = parts > most ? parts : most;
    }
    return most;
  }
};

}  // namespace cusync
