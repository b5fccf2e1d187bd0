// The halo's producer pixel tiles (conv_halo.h's producerPixelTilesRead) of every consumer pixel tile of a
// convolution, computed once on the host. Host header.
//
// Why: the hooked convolution's activation-loading thread computed its tile's range itself, with 64-bit divisions
// by the image's sizes, between its ticket and its first semaphore reads: ahead of the block's first activation
// load, on one thread. Nsight Compute's samples put about 40% of what a synchronized consumer loses per kernel with
// nothing to wait for there (2-4 us at B = 8; docs/BENCHMARKS.md, issue 13, session 35). A table row is one 64-bit
// load, issued together with the ticket's atomic.
#pragma once

#include <cstdint>
#include <vector>

#include "cusync/conv_halo.h"

namespace cusync {

// Row y (consumer pixel tile y, of `consumerPixelTiles`): the producer pixel tiles it reads, clipped to the
// producer's `producerPixelTiles`.
inline std::vector<PixelTileRange> haloRowsOf(const ConvHalo& halo, std::uint32_t consumerPixelTiles,
                                              std::uint32_t consumerTileM, std::uint32_t producerTileM,
                                              std::uint32_t producerPixelTiles) {
  std::vector<PixelTileRange> rows(consumerPixelTiles);
  for (std::uint32_t y = 0; y < consumerPixelTiles; ++y)
    rows[y] = producerPixelTilesRead(halo, y, consumerTileM, producerTileM, producerPixelTiles);
  return rows;
}

}  // namespace cusync
