// How conv2d_chain_example and its stress test split the reduction of each convolution of a chain (split-K: the
// hooked kernel's blocksPerTile parts per output tile, runtime/include/cusync/cutlass/tile_sync_conv_kernel.hpp),
// and when a chain may leave out its wait-kernels ("avoid wait-kernel", the W variants). Host header, no CUDA.
//
// A small layer (7x7x512 at batch 1-8: 8-56 output tiles of 64x64 on 132 SMs) fills a fraction of a wave, and its
// implicit GEMM has a long K (9 * 512 = 4608): splitting K into parts multiplies the work units without changing
// the tiles the consumer waits for. A split target names how many waves the parts should fill at most; the
// example tries several and the timing picks (as it does for the tile configurations).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cusync::examples {

enum class ConvSplitTarget { None, HalfWave, OneWave, TwoWaves };

inline const std::vector<std::pair<ConvSplitTarget, std::string>>& convSplitTargetNames() {
  static const std::vector<std::pair<ConvSplitTarget, std::string>> names = {{ConvSplitTarget::None, "none"},
                                                                              {ConvSplitTarget::HalfWave, "half"},
                                                                              {ConvSplitTarget::OneWave, "wave"},
                                                                              {ConvSplitTarget::TwoWaves, "2waves"}};
  return names;
}

// Waves a target fills at most (0 for None).
inline double convSplitWaves(ConvSplitTarget target) {
  switch (target) {
    case ConvSplitTarget::None: return 0.0;
    case ConvSplitTarget::HalfWave: return 0.5;
    case ConvSplitTarget::OneWave: return 1.0;
    case ConvSplitTarget::TwoWaves: return 2.0;
  }
  return 0.0;
}

// Each part keeps at least this many k-blocks, so that its operand pipeline (4-6 stages) still fills and the fp32
// partials it writes and the last part reads stay small against its mainloop.
inline constexpr std::uint32_t kMinKBlocksPerPart = 4;

// Parts per tile of one convolution with `tiles` output tiles, `kBlocks` k-blocks (C / TileK * filter^2) on a GPU
// of `slots` resident blocks (SMs x blocks per SM): the most parts whose work units still fit in the target's
// waves, at most kBlocks / kMinKBlocksPerPart, at least 1 (a layer that fills the target unsplit stays unsplit).
inline std::uint32_t convSplitParts(std::uint32_t tiles, std::uint32_t slots, std::uint32_t kBlocks,
                                    ConvSplitTarget target) {
  const double waves = convSplitWaves(target);
  if (waves <= 0.0 || tiles == 0 || slots == 0) return 1;
  const auto units = static_cast<std::uint64_t>(waves * slots);
  std::uint64_t parts = units / tiles;
  const std::uint64_t most = kBlocks / kMinKBlocksPerPart;
  if (parts > most) parts = most;
  return parts < 1 ? 1u : static_cast<std::uint32_t>(parts);
}

// The configuration suffix of a chain's parts per stage: empty when nothing is split, else "_k" and the parts of
// each stage joined by '+' ("_k8+8"): a split chain is reported as a configuration of its own.
inline std::string convSplitLabel(const std::vector<std::uint32_t>& parts) {
  bool split = false;
  for (std::uint32_t p : parts) split = split || p > 1;
  if (!split) return "";
  std::string label = "_k";
  for (std::size_t s = 0; s < parts.size(); ++s) label += (s ? "+" : "") + std::to_string(parts[s]);
  return label;
}

// "Avoid wait-kernel" (the paper's W; the MLP examples decide it per stage with cusync::decideWaitKernel): legal
// when every block of every stage of the chain is resident at once, blocks = work units (tiles x parts) per stage.
// Then no block can hold a slot that a block it waits for needs, in any launch order of the stages' streams. The
// whole chain, not one stage and its producers: a later stage keeping its wait-kernel could otherwise fill the
// slots that an earlier stage's unstarted blocks need.
inline bool convChainFitsOneWave(const std::vector<std::uint32_t>& blocksPerStage, std::uint32_t slots) {
  std::uint64_t blocks = 0;
  for (std::uint32_t b : blocksPerStage) blocks += b;
  return slots > 0 && blocks <= slots;
}

}  // namespace cusync::examples
