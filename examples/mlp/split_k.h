// Split-K for the MLP examples' two GEMMs: how many parts each GEMM's tiles are split into along K, the small
// search of part counts the examples try per M, and the buffers a split stage needs. Host header.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "common/device_buffers.cuh"
#include "cusync/stage.cuh"
#include "gemm_registry.h"

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

// Split-K state of one GEMM stage: the stage runs `parts` blocks per tile.
struct SplitBuffers {
  std::shared_ptr<DeviceBuffer<float>> partials;
  std::shared_ptr<DeviceBuffer<std::uint32_t>> arrivals;
  SplitBuffers() = default;
  SplitBuffers(Stage& stage, const GemmKernelEntry& kernel, std::uint32_t parts) {
    stage.setBlocksPerTile(parts);
    if (parts <= 1) return;
    const std::size_t tiles = stage.grid().tileCount();
    partials = std::make_shared<DeviceBuffer<float>>(tiles * parts * kernel.tile.m * kernel.tile.n);
    arrivals = std::make_shared<DeviceBuffer<std::uint32_t>>(tiles);
    CUSYNC_CUDA_CHECK(cudaMemset(arrivals->get(), 0, arrivals->bytes()));
  }
  void applyTo(GemmLaunchArgs& args) const {
    args.splitPartials = partials ? partials->get() : nullptr;
    args.splitArrivals = arrivals ? arrivals->get() : nullptr;
  }
};

}  // namespace cusync::examples
