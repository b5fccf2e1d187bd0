#pragma once
// A value every lane of a warp already holds, handed back through lane-0 shuffles so that the compiler can prove it
// warp-uniform. CUTLASS's sm90 mainloops keep their pipeline state in uniform registers only when the k-block count
// and first k-block they are given are provably uniform. A count read from shared memory (a drawn unit), or computed
// from one through an integer division (a split-K part's range, split_k_range.h; shuffling the unit before the
// division is not enough), is not: the loop's state then lives in vector registers and every wgmma descriptor goes
// through R2UR. Shuffling the derived values themselves restored the uniform datapath in every hooked kernel (SASS
// per k-block, session 23): convolution 71 -> 54 (stock CUTLASS: 54), one-tile GEMM 60 -> 45, fused chain 62 -> 46,
// persistent GEMM 97 -> 65 (two k=64 halves per k-block). CUTLASS's canonical_warp_idx_sync shuffles for the same
// reason.
// Call with all 32 lanes converged and holding the same value.
#include <type_traits>

namespace cusync {

template <class T>
__device__ __forceinline__ T warpUniform(T value) {
  static_assert(std::is_arithmetic_v<T> && sizeof(T) == 4, "warpUniform shuffles one 32-bit number");
  return __shfl_sync(0xffffffffu, value, 0);
}

}  // namespace cusync
