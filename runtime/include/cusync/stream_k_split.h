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
// Numbering: the region's tiles are dealt to `groups` groups, region tile t to group t % groups, and the chunks too,
// chunk u to group u % groups as its (u / groups)-th chunk. Within a group, its k-blocks run tile by tile, g in
// [0, groupTiles * kBlocks); its i-th chunk covers [chunkBegin(u), chunkBegin(u + groups)), chunkBegin(u) =
// floor(i * groupKBlocks / groupChunks). A fragment is a chunk's piece of one tile; the parts of a tile are the
// chunks that touch it, numbered from 0 in chunk order.
//
// A chunk runs its fragments last tile first (as CUTLASS's stream-K units do), so every chunk starts at the first
// k-block of a tile: at the start of the launch all blocks reduce k-block 0 of their tiles together and share its A
// (the activations) in L2, and each tile's head, which another chunk computes, is done before its tail. Run first
// tile first, the chunks start at scattered k offsets, and GPT-3's QKV GEMM at 512 tokens took 125 us (H100,
// session 16, calls 2-3) where CUTLASS's own Stream-K of the same tile takes 86.
//
// Why groups (CUTLASS's stream-K scheduler has them for the same reason): chunks u = i * groups .. i * groups +
// groups - 1 run at once and reduce the same k-blocks of `groups` consecutive region tiles. Where those tiles share
// an operand (the rows of one column of a weight that L2 cannot hold, in a column-major tile order), each of its
// k-blocks is fetched about once. Without groups, the blocks run every tile at a different k offset, and GPT-3's QKV
// GEMM at 512 tokens (113 MB of weights, read by 4 row tiles) took 127 us instead of the 81 its k-blocks per
// block need (docs/BENCHMARKS.md, issue 14, session 16).
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
  std::uint32_t groups = 1;  // divides both tiles and chunks (Stage::setStreamK checks it)

  CUSYNC_HOST_DEVICE constexpr std::uint32_t groupChunks() const { return chunks / groups; }
  CUSYNC_HOST_DEVICE constexpr std::uint64_t groupKBlocks() const {
    return std::uint64_t(tiles / groups) * std::uint64_t(kBlocks);
  }
  // Where `chunk` starts in its group's k-blocks.
  CUSYNC_HOST_DEVICE constexpr std::uint64_t chunkBegin(std::uint32_t chunk) const {
    return std::uint64_t(chunk / groups) * groupKBlocks() / groupChunks();
  }
  // Where it ends: the start of its group's next chunk, or the group's end.
  CUSYNC_HOST_DEVICE constexpr std::uint64_t chunkEnd(std::uint32_t chunk) const {
    return std::uint64_t(chunk / groups + 1) * groupKBlocks() / groupChunks();
  }
  // The index within its group of the chunk whose range holds group k-block g: the largest i with
  // floor(i * total / n) <= g, that is i * total < (g + 1) * n.
  CUSYNC_HOST_DEVICE constexpr std::uint32_t groupChunkOf(std::uint64_t g) const {
    return std::uint32_t(((g + 1) * groupChunks() - 1) / groupKBlocks());
  }
  CUSYNC_HOST_DEVICE constexpr std::uint32_t partsOfTile(std::uint32_t tile) const {
    const std::uint64_t first = std::uint64_t(tile / groups) * std::uint64_t(kBlocks);
    return groupChunkOf(first + std::uint64_t(kBlocks) - 1) - groupChunkOf(first) + 1;
  }
  // The fragment of `chunk` that ends at k-block `end` of its group (chunkBegin(chunk) < end <= chunkEnd(chunk));
  // the chunk's next fragment ends where this one begins, at end - kBlocks.count.
  CUSYNC_HOST_DEVICE constexpr StreamKFragment fragmentEndingAt(std::uint32_t chunk, std::uint64_t end) const {
    const std::uint32_t groupTile = std::uint32_t((end - 1) / std::uint64_t(kBlocks));
    const std::uint64_t tileBegin = std::uint64_t(groupTile) * std::uint64_t(kBlocks);
    const std::uint64_t begin = chunkBegin(chunk) > tileBegin ? chunkBegin(chunk) : tileBegin;
    const std::uint32_t tile = groupTile * groups + chunk % groups;
    return StreamKFragment{tile, chunk / groups - groupChunkOf(tileBegin), partsOfTile(tile),
                           KBlockRange{int(begin - tileBegin), int(end - begin)}};
  }
  // The most parts any tile has: the partial slots a tile needs (host set-up; every group cuts alike).
  constexpr std::uint32_t maxPartsOfATile() const {
    std::uint32_t most = 0;
    for (std::uint32_t tile = 0; tile < tiles; ++tile) {
      const std::uint32_t parts = partsOfTile(tile);
      most = parts > most ? parts : most;
    }
    return most;
  }
  // Whether the region can be cut so: groups divide tiles and chunks, and no chunk is empty.
  constexpr bool valid() const {
    return groups != 0 && chunks != 0 && kBlocks > 0 && tiles % groups == 0 && chunks % groups == 0 &&
           groupKBlocks() >= groupChunks();
  }
};

}  // namespace cusync
