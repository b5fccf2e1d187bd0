// Stream-K chunks (stream_k_split.h): cut into fragments, the chunks must cover every k-block of every region tile
// exactly once; the chunks must be balanced (their k-block counts differ by at most one, which is the point of
// stream-K); each tile's parts must be numbered 0..parts-1 by the chunks that touch it, with the part count every
// fragment of the tile reports (the split-K arrival counts to it); and maxPartsOfATile must bound them (the partial
// slots). With groups, the chunks that run together (i * groups .. i * groups + groups - 1) must reduce the same
// k-blocks of consecutive tiles, which is what lets them share an operand's k-blocks in L2. Checked by brute force
// over region sizes around the H100's 132 blocks.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "cusync/stream_k_split.h"

using cusync::StreamKFragment;
using cusync::StreamKRegion;

TEST_CASE("stream-K chunks cover every k-block once, balanced, with consistent part numbers", "[stream-k]") {
  struct Case {
    std::uint32_t tiles, chunks;
    int kBlocks;
    std::uint32_t groups;
  };
  const std::vector<Case> cases{{144, 132, 192, 1}, {144, 132, 192, 4}, {156, 132, 192, 4}, {96, 132, 128, 1},
                                {96, 132, 128, 4},  {12, 132, 192, 1},  {1, 1, 5, 1},       {7, 3, 1, 1},
                                {264, 132, 24, 2},  {252, 132, 24, 1},  {5, 13, 3, 1},      {180, 132, 192, 4},
                                {8, 4, 1, 4}};
  for (const Case& c : cases) {
    INFO(c.tiles << " tiles, " << c.chunks << " chunks in " << c.groups << " groups, " << c.kBlocks
                 << " k-blocks a tile");
    const StreamKRegion region{c.tiles, c.chunks, c.kBlocks, c.groups};
    REQUIRE(region.valid());
    std::vector<std::vector<int>> covered(c.tiles, std::vector<int>(std::size_t(c.kBlocks), 0));
    std::vector<std::vector<std::uint32_t>> partsSeen(c.tiles);
    std::uint64_t smallest = UINT64_MAX, largest = 0;
    for (std::uint32_t chunk = 0; chunk < c.chunks; ++chunk) {
      const std::uint64_t begin = region.chunkBegin(chunk), end = region.chunkEnd(chunk);
      REQUIRE(end > begin);  // no empty chunk when chunks <= tiles * kBlocks
      smallest = std::min(smallest, end - begin);
      largest = std::max(largest, end - begin);
      std::vector<StreamKFragment> fragments;  // as the chunk runs them: last tile first
      for (std::uint64_t g = end; g > begin;) {
        fragments.push_back(region.fragmentEndingAt(chunk, g));
        const StreamKFragment& f = fragments.back();
        REQUIRE(std::uint64_t(f.regionTile / c.groups) * c.kBlocks + f.kBlocks.begin + f.kBlocks.count == g);
        REQUIRE(f.kBlocks.count >= 1);
        g -= std::uint64_t(f.kBlocks.count);
      }
      // A chunk that spans tiles starts its run at its last tile's first k-block.
      if (fragments.size() > 1) REQUIRE(fragments.front().kBlocks.begin == 0);
      std::reverse(fragments.begin(), fragments.end());  // in k order, as the parts are numbered
      std::uint64_t g = begin;
      for (const StreamKFragment& f : fragments) {
        REQUIRE(f.regionTile < c.tiles);
        REQUIRE(f.regionTile % c.groups == chunk % c.groups);  // a chunk stays in its group's tiles
        REQUIRE(std::uint64_t(f.regionTile / c.groups) * c.kBlocks + f.kBlocks.begin == g);
        REQUIRE(f.kBlocks.count >= 1);
        REQUIRE(f.kBlocks.begin + f.kBlocks.count <= c.kBlocks);
        REQUIRE(f.part < f.parts);
        REQUIRE(f.parts == region.partsOfTile(f.regionTile));
        REQUIRE(f.parts <= region.maxPartsOfATile());
        for (int k = f.kBlocks.begin; k < f.kBlocks.begin + f.kBlocks.count; ++k) ++covered[f.regionTile][k];
        partsSeen[f.regionTile].push_back(f.part);
        g += std::uint64_t(f.kBlocks.count);
      }
      REQUIRE(g == end);
    }
    REQUIRE(largest - smallest <= 1);
    for (std::uint32_t tile = 0; tile < c.tiles; ++tile) {
      for (int k = 0; k < c.kBlocks; ++k) REQUIRE(covered[tile][k] == 1);
      // One fragment per part, parts numbered in chunk order from 0.
      std::vector<std::uint32_t> expected(region.partsOfTile(tile));
      for (std::uint32_t p = 0; p < expected.size(); ++p) expected[p] = p;
      REQUIRE(partsSeen[tile] == expected);
    }
  }
}

TEST_CASE("a stream-K share of at least a tile cuts a tile in at most two parts", "[stream-k]") {
  // GPT-3's QKV GEMM at 512 tokens: 144 tiles of 192 k-blocks over 132 blocks, 209.5 k-blocks each. The last
  // arrival of a tile then adds one partial, where split-K of the last wave in 11 parts adds ten.
  REQUIRE(StreamKRegion{144, 132, 192}.maxPartsOfATile() == 2);
  // Fewer tiles than blocks (LLaMA's QKV GEMM at 512 tokens: 96 tiles of 128 k-blocks, 93 a block): three parts.
  REQUIRE(StreamKRegion{96, 132, 128}.maxPartsOfATile() == 3);
  // As many chunks as tiles: every tile whole, one part.
  REQUIRE(StreamKRegion{132, 132, 192}.maxPartsOfATile() == 1);
}

TEST_CASE("stream-K chunks that run together reduce the same k-blocks of consecutive tiles", "[stream-k]") {
  // GPT-3's QKV GEMM at 512 tokens in groups of its 4 row tiles (column-major order): chunks 4i .. 4i + 3 cut the
  // four rows of one column at the same k-blocks.
  const StreamKRegion region{144, 132, 192, 4};
  for (std::uint32_t i = 0; i < region.groupChunks(); ++i) {
    std::vector<std::vector<StreamKFragment>> fragments(4);
    for (std::uint32_t group = 0; group < 4; ++group) {
      const std::uint32_t chunk = i * 4 + group;
      for (std::uint64_t g = region.chunkEnd(chunk); g > region.chunkBegin(chunk);) {
        fragments[group].push_back(region.fragmentEndingAt(chunk, g));
        g -= std::uint64_t(fragments[group].back().kBlocks.count);
      }
    }
    for (std::uint32_t group = 1; group < 4; ++group) {
      REQUIRE(fragments[group].size() == fragments[0].size());
      for (std::size_t f = 0; f < fragments[0].size(); ++f) {
        REQUIRE(fragments[group][f].regionTile == fragments[0][f].regionTile + group);
        REQUIRE(fragments[group][f].kBlocks.begin == fragments[0][f].kBlocks.begin);
        REQUIRE(fragments[group][f].kBlocks.count == fragments[0][f].kBlocks.count);
        REQUIRE(fragments[group][f].part == fragments[0][f].part);
      }
    }
  }
  // The chunks are as long as without groups: 36 tiles of 192 k-blocks over 33 chunks, 209-210 each.
  REQUIRE(region.chunkEnd(0) - region.chunkBegin(0) == 209);
  REQUIRE(region.maxPartsOfATile() == 2);
}

TEST_CASE("a stream-K region refuses groups that do not divide its tiles and chunks", "[stream-k]") {
  REQUIRE_FALSE(StreamKRegion{156, 132, 192, 8}.valid());  // 132 chunks in 8 groups
  REQUIRE_FALSE(StreamKRegion{150, 132, 192, 4}.valid());  // 150 tiles in 4 groups
  REQUIRE_FALSE(StreamKRegion{2, 132, 8, 1}.valid());      // 16 k-blocks for 132 chunks
  REQUIRE(StreamKRegion{156, 132, 192, 4}.valid());
}
