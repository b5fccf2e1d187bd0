// What the hooked GEMV stage (hooked_gemv_kernel.cuh) can run, decided on the host before any launch: its constants
// and the reason a problem is refused. Host and device; no CUDA runtime needed (unit-tested on the CPU).
#pragma once

#include <cstdint>
#include <string>

#include "cusync/tile.h"  // CUSYNC_HOST_DEVICE

namespace cusync {

inline constexpr int kGemvWarps = 8;                     // warps of a block, each streaming whole weight rows
inline constexpr int kGemvThreads = kGemvWarps * 32;
inline constexpr int kGemvMaxTokens = 4;                 // token generation at B <= 4: fp32 CUDA-core arithmetic
inline constexpr int kGemvKBlock = 64;                   // the split-K granularity, in k
inline constexpr int kGemvStep = 32 * 8;                 // k of one warp load: 32 lanes x 8 halves (512 bytes)
inline constexpr int kGemvRowsPerLoad = 4;               // rows a warp streams at once
inline constexpr int kGemvUnroll = 2;                    // warp loads per row in flight

// The launch's facts the kernel depends on.
struct GemvStageProblem {
  int m = 0, n = 0, k = 0;      // D[m, n] = A[m, k] x W[n, k]^T
  int tileN = 0;                // output columns per tile
  std::uint32_t gridRows = 0;   // the stage grid's row tiles
  std::uint32_t parts = 1;      // split-K parts per tile
  std::uint32_t wholeTiles = 0, persistentBlocks = 0;
  bool splitBuffers = false;    // fp32 partials and arrival counters given
  // A whole-rows stage (hooked_rows_mma_gemv_kernel.cuh): each tile runs in this many blocks of 8 columns over the
  // whole of K (the stage's parts are these column groups); 0 for the split-K GEMV stages.
  std::uint32_t columnGroups = 0;
  bool arrivalCounters = false;  // its tiles' arrival counters given
};

// Empty when the GEMV stage runs `p`; else what is wrong, in words.
inline std::string whyNotGemvStage(const GemvStageProblem& p) {
  if (p.m < 1 || p.m > kGemvMaxTokens)
    return "M = " + std::to_string(p.m) + " is outside the GEMV's 1.." + std::to_string(kGemvMaxTokens) + " tokens";
  if (p.gridRows != 1) return "the GEMV computes one row tile, the stage grid has " + std::to_string(p.gridRows);
  if (p.tileN <= 0 || p.n % p.tileN != 0)
    return "N = " + std::to_string(p.n) + " is not a multiple of the tile's " + std::to_string(p.tileN) + " columns";
  if (p.columnGroups != 0) {  // the parts are column groups over the whole of K
    if (p.k <= 0 || p.k % 8 != 0) return "K = " + std::to_string(p.k) + " is not a multiple of 8 (16-byte rows)";
    if (p.parts != p.columnGroups)
      return "the whole-rows GEMV runs a tile as " + std::to_string(p.columnGroups) +
             " column groups, the stage has " + std::to_string(p.parts) + " parts per tile";
    if (!p.arrivalCounters) return "the whole-rows GEMV needs its tiles' arrival counters";
  } else {  // the parts are k-ranges
    if (p.k <= 0 || p.k % kGemvKBlock != 0)
      return "K = " + std::to_string(p.k) + " is not a multiple of " + std::to_string(kGemvKBlock);
    if (p.parts < 1 || p.parts > std::uint32_t(p.k / kGemvKBlock))
      return std::to_string(p.parts) + " split-K parts for " + std::to_string(p.k / kGemvKBlock) + " k-blocks of " +
             std::to_string(kGemvKBlock);
    if (p.parts > 1 && !p.splitBuffers) return "split-K without partials and arrival counters";
  }
  if (p.wholeTiles != 0) return "the GEMV splits every tile alike (no whole tiles before split ones)";
  if (p.persistentBlocks != 0) return "the GEMV runs one block per work unit, not persistent blocks";
  return "";
}

// The longest k-range of a part, in k: what a block stages of each token's activations (kBlocksOfPart's balanced
// split, rounded up).
CUSYNC_HOST_DEVICE constexpr int gemvLongestPart(int k, std::uint32_t parts) {
  return int((std::uint32_t(k / kGemvKBlock) + parts - 1) / parts) * kGemvKBlock;
}

}  // namespace cusync
