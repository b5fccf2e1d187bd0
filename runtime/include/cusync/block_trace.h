// Where the time of a chain of one-unit-per-block launches goes, block by block: an optional record per block,
// written by the kernels that take a trace buffer (the hooked GEMV stage, the attention chain's decode kernel and
// its CUTLASS flash attention stage, the one-tile-per-block CUTLASS GEMM) when a launch is given one. Times are the
// GPU's global timer (ns). Serves host and device (includes nothing from CUDA).
//
// Why: a tile-synchronized chain can run no faster than the same kernels stream-ordered even where its consumers
// could start early, and neither the total time nor the stage times alone say why; the records show when each
// stage's blocks became resident, how long they waited for their producers and when they finished.
#pragma once

#include <cstdint>

namespace cusync {

struct BlockTrace {
  std::uint32_t stage;   // the caller's stage index
  std::uint32_t block;   // blockIdx.x
  std::uint32_t sm;      // the SM it ran on
  std::uint32_t tileX;   // its unit's tile column (GEMV) or head (attention)
  std::uint64_t start;   // the block began
  // Its waits for producer tiles were over (== start where it waits for nothing). The CUTLASS GEMM, whose producer
  // warp waits k-block by k-block while the math warps compute, records when its math warps' last MMA completed.
  std::uint64_t waited;
  std::uint64_t done;    // it finished (stored and posted, or handed its split-K part over)
  std::uint32_t tileY = 0;  // its unit's tile row (the CUTLASS GEMM and flash attention; 0 elsewhere)
  std::uint32_t part = 0;   // its split-K part (the CUTLASS GEMM; 0 elsewhere)
};

}  // namespace cusync
