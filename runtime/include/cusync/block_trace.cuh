// The device side of block traces (block_trace.h): thread 0 of a block writes its record. Shared by every kernel
// that records one (the hooked GEMV stage, the attention chain's decode kernel, the one-tile CUTLASS GEMM). Device
// code.
#pragma once

#include <cstdint>

#include "cusync/block_trace.h"
#include "cusync/semaphore.cuh"  // detail::globalTimerNs

namespace cusync {

// Writes this block's record at trace[blockIdx.x], finished now, on the SM it ran on. One thread calls it.
__device__ __forceinline__ void recordBlockTrace(BlockTrace* trace, std::uint32_t stage, std::uint32_t tileX,
                                                 std::uint64_t start, std::uint64_t waited, std::uint32_t tileY = 0,
                                                 std::uint32_t part = 0) {
  std::uint32_t sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  trace[blockIdx.x] = BlockTrace{stage, blockIdx.x, sm, tileX, start, waited, detail::globalTimerNs(), tileY, part};
}

}  // namespace cusync
