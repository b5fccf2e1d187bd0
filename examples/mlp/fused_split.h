// Split-K choices for a fused chain: how many k-range parts each GEMM's tiles are split into so that the chain's
// queue holds enough units to keep every slot busy and to let GEMM 2 start on the GEMM-1 columns that finish
// first. Host header, free of CUDA (unit-tested in tests/runtime).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace cusync::examples {

struct FusedSplit {
  std::uint32_t firstParts = 1, secondParts = 1;
  std::string label() const {
    return firstParts == 1 && secondParts == 1
               ? std::string()
               : "_sk" + std::to_string(firstParts) + "x" + std::to_string(secondParts);
  }
  friend bool operator==(const FusedSplit& a, const FusedSplit& b) {
    return a.firstParts == b.firstParts && a.secondParts == b.secondParts;
  }
};

// Parts for `tiles` tiles of `kBlocks` k-blocks so that the GEMM alone fills `waves` waves of `slots` slots,
// keeping at least `minBlocksPerPart` k-blocks per part (the pipeline's depth; fewer starve the MMA).
inline std::uint32_t partsForWaves(std::uint32_t tiles, std::uint32_t kBlocks, std::uint32_t slots,
                                   std::uint32_t waves, std::uint32_t minBlocksPerPart = 4) {
  const std::uint32_t wanted = (waves * slots + tiles - 1) / tiles;
  const std::uint32_t most = std::max(1u, kBlocks / minBlocksPerPart);
  return std::max(1u, std::min(wanted, most));
}

// The splits a fused chain tries: none, and each GEMM filling 1, 2 or 4 waves on its own (each when new).
inline std::vector<FusedSplit> fusedSplitCandidates(std::uint32_t tilesFirst, std::uint32_t kBlocksFirst,
                                                    std::uint32_t tilesSecond, std::uint32_t kBlocksSecond,
                                                    std::uint32_t slots) {
  std::vector<FusedSplit> splits{FusedSplit{}};
  for (std::uint32_t waves : {1u, 2u, 4u}) {
    const FusedSplit s{partsForWaves(tilesFirst, kBlocksFirst, slots, waves),
                       partsForWaves(tilesSecond, kBlocksSecond, slots, waves)};
    if (std::find(splits.begin(), splits.end(), s) == splits.end()) splits.push_back(s);
  }
  return splits;
}

}  // namespace cusync::examples
