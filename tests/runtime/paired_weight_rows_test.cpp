// pairedWeightRow (cusync/paired_weight_rows.h): where the one-token GEMV's paired SwiGLU tile finds its gate and up
// rows, in the examples' per-tile pairing and in the PyTorch op's 64-row groups.
#include <cstdint>
#include <set>

#include <catch2/catch.hpp>

#include "cusync/paired_weight_rows.h"

namespace {
constexpr std::uint32_t kHalf = 16;  // a 32-row GEMV tile: 16 gate rows, then the 16 up rows of the same outputs
}

TEST_CASE("pairedWeightRow with groups of half a tile reads each tile's rows in place", "[paired_rows]") {
  for (std::uint32_t tile = 0; tile < 10; ++tile)
    for (std::uint32_t row = 0; row < 2 * kHalf; ++row)
      CHECK(cusync::pairedWeightRow(tile, row, kHalf, kHalf) == tile * 2 * kHalf + row);
}

TEST_CASE("pairedWeightRow reads the op's 64-row pairing: gate row o and up row o of each output o", "[paired_rows]") {
  // The op's W1 (cusync.pair_gate_up): rows [128g, 128g + 64) are Wg's rows [64g, 64g + 64), rows [128g + 64,
  // 128g + 128) Wu's same rows. Output o's gate row is then 128 (o / 64) + o % 64, its up row 64 more.
  constexpr std::uint32_t kGroup = 64, kIntermediate = 256;
  std::set<std::uint32_t> seen;
  for (std::uint32_t tile = 0; tile < kIntermediate / kHalf; ++tile)
    for (std::uint32_t row = 0; row < kHalf; ++row) {
      const std::uint32_t output = tile * kHalf + row;
      const std::uint32_t gate = 2 * kGroup * (output / kGroup) + output % kGroup;
      CHECK(cusync::pairedWeightRow(tile, row, kHalf, kGroup) == gate);
      CHECK(cusync::pairedWeightRow(tile, row + kHalf, kHalf, kGroup) == gate + kGroup);
      seen.insert(cusync::pairedWeightRow(tile, row, kHalf, kGroup));
      seen.insert(cusync::pairedWeightRow(tile, row + kHalf, kHalf, kGroup));
    }
  // Every row of W1 [2I, H] is read exactly once.
  CHECK(seen.size() == 2 * kIntermediate);
  CHECK(*seen.rbegin() == 2 * kIntermediate - 1);
}
