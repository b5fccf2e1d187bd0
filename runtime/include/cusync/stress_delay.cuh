// Stress testing: a compile-time hook that delays a work unit by a pseudo-random time of up to
// CUSYNC_CHAIN_DELAY_NS, placed by the chain kernels where a slow producer or a slow consumer would show an ordering
// bug (before a unit's first wait, before a post). Off, and free, unless the including translation unit defines
// CUSYNC_CHAIN_DELAY_NS before including any cusync header: only the stress tests do, never a benchmark.
#pragma once

#include <cstdint>

#if defined(CUSYNC_CHAIN_DELAY_NS)
#define CUSYNC_CHAIN_DELAY(seed) ::cusync::detail::chainDelay(seed)
#else
#define CUSYNC_CHAIN_DELAY(seed) ((void)0)
#endif

namespace cusync::detail {

#if defined(CUSYNC_CHAIN_DELAY_NS)
__device__ inline void chainDelay(std::uint32_t seed) {
  std::uint32_t h = seed * 0x9E3779B9u ^ std::uint32_t(clock64());
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  const std::uint32_t ns = h % std::uint32_t(CUSYNC_CHAIN_DELAY_NS);
  for (std::uint32_t waited = 0; waited < ns; waited += 1000) __nanosleep(1000);
}
#endif

}  // namespace cusync::detail
