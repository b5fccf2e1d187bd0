// Split-K for the MLP examples' two GEMMs: how many parts each GEMM's tiles are split into along K, and the small
// search of part counts the examples try per M (the buffers a split stage needs: split_state.h). Host header.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace cusync::examples {

// Split-K parts of both GEMMs (1 = none).
struct SplitK {
  std::uint32_t producerParts = 1, consumerParts = 1;
  std::string label() const {
    return producerParts == 1 && consumerParts == 1
               ? std::string()
               : "_sk" + std::to_string(producerParts) + "x" + std::to_string(consumerParts);
  }
};

// Split-K parts for `tiles` tiles over `slotsPerWave` slots, keeping at least 4 k-blocks per part: the most parts
// whose blocks still fit in one wave (`overfill` false), or the fewest that fill a wave (`overfill` true, a second
// partial wave). Which wins depends on the per-block rate, so the search tries both.
inline std::uint32_t splitParts(std::uint32_t tiles, int kBlocks, int slotsPerWave, bool overfill) {
  const std::uint32_t slots = std::uint32_t(slotsPerWave);
  const std::uint32_t wanted = overfill ? (slots + tiles - 1) / tiles : slots / tiles;
  return std::max(1u, std::min(wanted, std::uint32_t(kBlocks / 4)));
}

// One GEMM as the split-K search sees it: its tile count, k-blocks and slots per wave.
struct SplitKGemm {
  std::uint32_t tiles;
  int kBlocks;
  int slotsPerWave;
};

// Split-K settings tried: none, the most parts within one wave, the fewest that fill one (each when new).
inline std::vector<SplitK> splitKCandidates(const SplitKGemm& first, const SplitKGemm& second) {
  std::vector<SplitK> splits{SplitK{}};
  for (bool overfill : {false, true}) {
    const SplitK split{splitParts(first.tiles, first.kBlocks, first.slotsPerWave, overfill),
                       splitParts(second.tiles, second.kBlocks, second.slotsPerWave, overfill)};
    const bool known = std::any_of(splits.begin(), splits.end(), [&](const SplitK& s) {
      return s.producerParts == split.producerParts && s.consumerParts == split.consumerParts;
    });
    if (!known) splits.push_back(split);
  }
  return splits;
}

}  // namespace cusync::examples
