// Asking L2 to fetch a byte range of global memory ahead of its use: bulk prefetches, which need no registers and no
// shared memory and return at once (a hint: nothing waits for them, and nothing breaks if L2 evicts the lines
// before they are read). Device code; on parts before sm_90, which lack the instruction, it does nothing.
//
// Why: a consumer that waits for its producer's tiles can still start fetching what does not depend on them (its
// weights, a KV cache) while DRAM would otherwise idle; after the wait it then reads from L2.
#pragma once

#include <cstdint>

namespace cusync {

// Bytes one bulk prefetch asks for at most: the PTX ISA states no limit beyond the operand's 32 bits, so this only
// keeps each request of a modest size.
inline constexpr std::uint32_t kL2PrefetchChunkBytes = 32 * 1024;

// Prefetches [p, p + bytes) into L2 from the calling thread. `p` must be 16-byte aligned; the range is cut to whole
// 16-byte pieces (the instruction's granule), the tail left alone.
__device__ __forceinline__ void prefetchRangeToL2(const void* p, std::uint64_t bytes) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  const char* at = static_cast<const char*>(p);
  bytes &= ~std::uint64_t(15);
  while (bytes > 0) {
    const std::uint32_t chunk = bytes < kL2PrefetchChunkBytes ? std::uint32_t(bytes) : kL2PrefetchChunkBytes;
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(at), "r"(chunk) : "memory");
    at += chunk;
    bytes -= chunk;
  }
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace cusync
