// Split-K choices for a fused chain: how many k-range parts each GEMM's tiles are split into so that the chain's
// queue holds enough units to keep every slot busy and to let GEMM 2 start on the GEMM-1 columns that finish
// first. Host header, free of CUDA (unit-tested in tests/runtime).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
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

// A split as the command line and the configuration names write it: "none" (unsplit) or "AxB" (GEMM 1 x GEMM 2
// parts, each 1 to 999); nullopt for anything else.
inline std::optional<FusedSplit> parseFusedSplit(const std::string& text) {
  if (text == "none") return FusedSplit{};
  const std::size_t x = text.find('x');
  if (x == std::string::npos || x == 0 || x > 3 || x + 1 == text.size() || text.size() - x - 1 > 3 ||
      text.find_first_not_of("0123456789x") != std::string::npos || text.find('x', x + 1) != std::string::npos)
    return std::nullopt;
  const auto first = std::uint32_t(std::stoul(text.substr(0, x)));
  const auto second = std::uint32_t(std::stoul(text.substr(x + 1)));
  if (first == 0 || second == 0) return std::nullopt;
  return FusedSplit{first, second};
}

// Parts for `tiles` tiles of `kBlocks` k-blocks so that the GEMM alone fills `waves` waves of `slots` slots,
// keeping at least `minBlocksPerPart` k-blocks per part (the pipeline's depth; fewer starve the MMA).
inline std::uint32_t partsForWaves(std::uint32_t tiles, std::uint32_t kBlocks, std::uint32_t slots,
                                   std::uint32_t waves, std::uint32_t minBlocksPerPart = 4) {
  const std::uint32_t wanted = (waves * slots + tiles - 1) / tiles;
  const std::uint32_t most = std::max(1u, kBlocks / minBlocksPerPart);
  return std::max(1u, std::min(wanted, most));
}

// The most parts for which `tiles` tiles still fit in `waves` waves of `slots` slots, when they fill at least 90% of
// them; 0 when no part count does (or when one part already exceeds the waves). GEMM 1's units should end in a full
// wave: GEMM 2's last k-range reads the GEMM-1 columns that finish last, so a partial last wave of GEMM 1 lies on
// the chain's critical path (unit traces at M = 1 on the H100, docs/BENCHMARKS.md, session 5: 6 parts of 48 tiles
// make 2.18 waves, and the last 0.18 ends 46 us after the second).
inline std::uint32_t partsFillingWaves(std::uint32_t tiles, std::uint32_t kBlocks, std::uint32_t slots,
                                       std::uint32_t waves, std::uint32_t minBlocksPerPart = 4) {
  if (tiles == 0) return 0;
  const std::uint32_t most = std::max(1u, kBlocks / minBlocksPerPart);
  const std::uint32_t parts = std::min(waves * slots / tiles, most);
  if (parts == 0) return 0;
  return std::uint64_t(tiles) * parts * 10 >= std::uint64_t(waves) * slots * 9 ? parts : 0;
}

// The splits a fused chain tries: none; each GEMM filling 1, 2 or 4 waves on its own (at least that many units);
// and, for each, GEMM 1 split so that its units end in a nearly full wave (partsFillingWaves), with GEMM 2 as
// before and with GEMM 2 ending in a nearly full wave too (the chain's last units; LLaMA at M = 1 on the H100: 4 x 3
// parts leave GEMM 1 a 0.3 wave and 3 x 3 leave GEMM 2 a 0.45 wave at the end, session 5 traces), each when new.
inline std::vector<FusedSplit> fusedSplitCandidates(std::uint32_t tilesFirst, std::uint32_t kBlocksFirst,
                                                    std::uint32_t tilesSecond, std::uint32_t kBlocksSecond,
                                                    std::uint32_t slots) {
  std::vector<FusedSplit> splits{FusedSplit{}};
  auto add = [&](const FusedSplit& s) {
    if (std::find(splits.begin(), splits.end(), s) == splits.end()) splits.push_back(s);
  };
  for (std::uint32_t waves : {1u, 2u, 4u}) {
    const std::uint32_t second = partsForWaves(tilesSecond, kBlocksSecond, slots, waves);
    add(FusedSplit{partsForWaves(tilesFirst, kBlocksFirst, slots, waves), second});
    const std::uint32_t first = partsFillingWaves(tilesFirst, kBlocksFirst, slots, waves);
    if (first > 1) add(FusedSplit{first, second});
    const std::uint32_t secondFilling = partsFillingWaves(tilesSecond, kBlocksSecond, slots, waves);
    if (first > 1 && secondFilling >= 1) add(FusedSplit{first, secondFilling});
  }
  return splits;
}

}  // namespace cusync::examples
