// The balanced k-range of a split-K part (split_k_range.h), which every hooked kernel uses: parts must cover each
// k-block exactly once, in order, with sizes that differ by at most one, so that the last arrival's reduction adds
// every k-block's product once and a consumer's waits cover what the part reads.
#include <algorithm>

#include <catch2/catch.hpp>

#include "cusync/split_k_range.h"

TEST_CASE("split-K parts cover every k-block once, in order, balanced", "[split]") {
  for (int kBlocks : {1, 7, 8, 96, 192})
    for (std::uint32_t parts = 1; parts <= std::uint32_t(kBlocks) && parts <= 16; ++parts) {
      int next = 0, smallest = kBlocks, largest = 0;
      for (std::uint32_t part = 0; part < parts; ++part) {
        const cusync::KBlockRange r = cusync::kBlocksOfPart(part, parts, kBlocks);
        INFO("k-blocks " << kBlocks << ", part " << part << " of " << parts);
        REQUIRE(r.begin == next);
        REQUIRE(r.count >= 1);
        next += r.count;
        smallest = std::min(smallest, r.count);
        largest = std::max(largest, r.count);
      }
      REQUIRE(next == kBlocks);
      REQUIRE(largest - smallest <= 1);
    }
  // The products do not overflow 32 bits where part * kBlocks would (a 64-bit intermediate).
  const cusync::KBlockRange last = cusync::kBlocksOfPart(65535, 65536, 1 << 20);
  REQUIRE(last.begin + last.count == (1 << 20));
  REQUIRE(last.count == 16);
}
