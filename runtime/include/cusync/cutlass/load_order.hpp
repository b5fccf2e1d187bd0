// How the TMA producer warp of the hooked GEMM orders its loads around the waits for produced tiles. Host and
// device; free of CUTLASS, so host code that selects a GEMM variant can name it.
#pragma once

#include <cstdint>

namespace cusync::cutlass_sm90 {

enum class LoadOrder : std::uint32_t {
  WaitThenLoad = 0,  // per k-block: wait for A's producer tiles, load A, load B (CUTLASS's order; the "+Rw" build
                     // has the two loads reordered by cusync-tile-rewriter)
  WeightsFirst = 1,  // "R", hand-written: B of the first pipeline-depth k-blocks before the first wait, then per
                     // k-block B before the wait for A
};

}  // namespace cusync::cutlass_sm90
