#pragma once
// A value every lane of a warp already holds, handed back through lane-0 shuffles so that the compiler can prove it
// warp-uniform. A value read from shared memory (a unit drawn by another warp, a ticket) is not provably uniform,
// and CUTLASS's sm90 mainloops over a k-block count or tile derived from one keep their pipeline state in vector
// registers: every wgmma descriptor then goes through R2UR and the loop loses the uniform datapath. Seen in the
// SASS of the hooked convolution (71 instructions per k-block against stock CUTLASS's 54; 48-57% more executed
// instructions per launch, session 23), the fused chain and the persistent GEMM. CUTLASS's canonical_warp_idx_sync
// shuffles for the same reason.
// Call with all 32 lanes converged and holding the same value.
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace cusync {

template <class T>
__device__ __forceinline__ T warpUniform(T value) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % sizeof(std::uint32_t) == 0,
                "warpUniform shuffles whole 32-bit words of a trivially copyable value");
  if constexpr (sizeof(T) == sizeof(std::uint32_t) && std::is_arithmetic_v<T>) {
    return __shfl_sync(0xffffffffu, value, 0);
  } else {
    std::uint32_t words[sizeof(T) / sizeof(std::uint32_t)];
    std::memcpy(words, &value, sizeof(T));
#pragma unroll
    for (auto& word : words) word = __shfl_sync(0xffffffffu, word, 0);
    std::memcpy(&value, words, sizeof(T));
    return value;
  }
}

}  // namespace cusync
