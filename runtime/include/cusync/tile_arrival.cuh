// One part's arrival at a tile that several blocks finish together (split-K parts, or the whole-rows GEMV's column
// groups): the part that arrives last reduces or posts the tile. Shared by the hooked GEMV stages
// (hooked_gemv_unit.cuh, hooked_rows_mma_gemv_kernel.cuh) and the skinny chain (skinny_chain_kernel.cuh). Device
// code.
#pragma once

#include <cstdint>

namespace cusync::detail {

// Called by one thread of the arriving block, after a block barrier that follows every thread's stores of its share.
// Release: a fence, then the count. The last arrival takes the counter back to 0 (as split_k_reduction.hpp does):
// every part of this launch has arrived and the next launch's come after it, so the counter never grows and never
// wraps (counting on across launches and testing a multiple of `parts` breaks at the 32-bit wrap unless `parts` is a
// power of two). It then fences again (acquire: every other part's stores before its reads or its post). Returns
// whether this part arrived last.
__device__ __forceinline__ bool arriveAtTile(std::uint32_t* counter, std::uint32_t parts) {
  __threadfence();
  const std::uint32_t before = atomicAdd(counter, 1u);
  const bool last = before + 1u == parts;
  if (last) {
    atomicSub(counter, parts);
    __threadfence();
  }
  return last;
}

}  // namespace cusync::detail
