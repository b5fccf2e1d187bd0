// The k-blocks one split-K part of a tile reduces: the balanced split every hooked kernel uses (one tile per block,
// persistent, fused chain, convolution), so a part's range is the same whichever kernel runs it, and the consumer
// waits and producer reductions of one stage agree on it. Host and device; no CUDA needed.
#pragma once

#include <cstdint>

#include "cusync/tile.h"  // CUSYNC_HOST_DEVICE

namespace cusync {

struct KBlockRange {
  int begin = 0;  // first k-block of the part
  int count = 0;  // k-blocks in the part
};

// Part `part` of `parts` over `kBlocks` k-blocks: [part * kBlocks / parts, (part + 1) * kBlocks / parts). The parts
// cover every k-block exactly once, their sizes differ by at most one, and each has at least one k-block when
// parts <= kBlocks (the kernels' can_implement refuses more parts).
// An unsplit tile (parts == 1, the common case) returns at once: every thread of a block runs this, and the 64-bit
// divisions otherwise cost each warp tens of instructions before its first load (the hooked convolution's prologue,
// session 23's SASS pages).
CUSYNC_HOST_DEVICE constexpr KBlockRange kBlocksOfPart(std::uint32_t part, std::uint32_t parts, int kBlocks) {
  if (parts == 1) return KBlockRange{0, kBlocks};
  const int begin = int(std::uint64_t(part) * std::uint64_t(kBlocks) / parts);
  const int end = int(std::uint64_t(part + 1) * std::uint64_t(kBlocks) / parts);
  return KBlockRange{begin, end - begin};
}

}  // namespace cusync
