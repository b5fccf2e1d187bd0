// Which producer pixel tiles a consumer convolution's pixel tile reads: the halo of examples/conv2d/*.dep, as code
// the hooked convolution (cutlass/tile_sync_conv_kernel.hpp) waits with and the host checks compare against a
// brute-force stencil (tests/runtime/conv_halo_test.cpp). Serves host and device; depends only on tile.h.
//
// Both convolutions are implicit GeMMs (fprop, NHWC): pixel m = (b*P + p)*Q + q of an output image P x Q is GeMM
// row m, and a tile of TileM rows covers pixels [y*TileM, (y+1)*TileM). The consumer reads the producer's output,
// an image (stride*P) x (stride*Q), with a `filter` x `filter` stencil, padding filter/2 (zeros, not producer data).
// lowest(m) and highest(m) are the formulas of the specs, written the same way so that a reader can compare them
// line by line:
//   3x3, stride 1 (conv2d_3x3.dep, conv2d_bottleneck.dep):
//     lowest(m)  = max(m/(P*Q)*(P*Q), m - Q - min(m % Q, 1))
//     highest(m) = min(m/(P*Q)*(P*Q) + P*Q - 1, m + Q + min(Q - 1 - m % Q, 1))
//   3x3, stride 2 (conv2d_stride2.dep), center(m) = 2*m + 2*Q*(m/Q):
//     lowest(m)  = center(m) - 2*Q*min(m/Q % P, 1) - min(m % Q, 1)
//     highest(m) = center(m) + 2*Q + 1
//   1x1, stride 1: lowest = highest = m;  1x1, stride 2: lowest = highest = center(m)
// Each is non-decreasing in m and bounds every pixel pixel m reads (not always tightly: the 3x3 lowest of a pixel
// in an image's first row reaches back to the image's start), so a tile reads only producer pixels in
// [lowest(first), highest(last)]. The spec's range is therefore pixel tiles lowest(first)/ProducerTileM to
// highest(last)/ProducerTileM, clipped to the producer grid (the last tile's `last` may lie past the last pixel).
// It is exact (no tile waited for that the stencil does not touch) when a tile spans at least one image row
// (3x3 stride 1: TileM >= Q; stride 2: TileM >= 2*Q + 2), as the specs say; otherwise it over-approximates.
#pragma once

#include <cstdint>

#include "cusync/tile.h"

namespace cusync {

// One consumer convolution's reading geometry. `stride` and `filter` are what the specs cover; anything else is
// refused by `supported()` (and by the kernel's whyNotImplementable).
struct ConvHalo {
  std::uint32_t outputHeight = 0, outputWidth = 0;  // P, Q: the consumer's output image
  std::uint32_t filter = 3;                          // R = S
  std::uint32_t stride = 1;

  CUSYNC_HOST_DEVICE constexpr bool supported() const {
    return outputHeight > 0 && outputWidth > 0 && (filter == 1 || filter == 3) && (stride == 1 || stride == 2);
  }
  CUSYNC_HOST_DEVICE constexpr std::uint64_t imagePixels() const {
    return std::uint64_t{outputHeight} * outputWidth;
  }

  // Pixel (b, stride*p, stride*q) of the producer image for consumer pixel m: the stencil's center.
  CUSYNC_HOST_DEVICE constexpr std::uint64_t center(std::uint64_t m) const {
    if (stride == 1) return m;
    return 2 * m + 2 * std::uint64_t{outputWidth} * (m / outputWidth);
  }

  // The lowest producer pixel consumer pixel m can read (a lower bound, non-decreasing in m).
  CUSYNC_HOST_DEVICE constexpr std::uint64_t lowest(std::uint64_t m) const {
    const std::uint64_t P = outputHeight, Q = outputWidth;
    if (filter == 1) return center(m);
    if (stride == 1) {
      const std::uint64_t imageStart = m / (P * Q) * (P * Q);
      const std::uint64_t back = Q + min1(m % Q);  // m - back is the up-left neighbour, or the row above's start
      return m >= imageStart + back ? m - back : imageStart;
    }
    return center(m) - 2 * Q * min1(m / Q % P) - min1(m % Q);
  }

  // The highest producer pixel consumer pixel m can read (an upper bound, non-decreasing in m). Past the last
  // image, as for the last tile's padding rows, it names pixels of no image; callers clip to the producer grid.
  CUSYNC_HOST_DEVICE constexpr std::uint64_t highest(std::uint64_t m) const {
    const std::uint64_t P = outputHeight, Q = outputWidth;
    if (filter == 1) return center(m);
    if (stride == 1) {
      const std::uint64_t imageEnd = m / (P * Q) * (P * Q) + P * Q - 1;
      const std::uint64_t ahead = m + Q + min1(Q - 1 - m % Q);
      return ahead < imageEnd ? ahead : imageEnd;
    }
    return center(m) + 2 * Q + 1;
  }

 private:
  CUSYNC_HOST_DEVICE static constexpr std::uint64_t min1(std::uint64_t v) { return v < 1 ? v : 1; }
};

// Producer pixel tiles [first, last] (grid rows y), both inclusive.
struct alignas(8) PixelTileRange {  // 8-byte aligned: a table row (conv_halo_rows.h) is one 64-bit load
  std::uint32_t first = 0, last = 0;
};

// The producer pixel tiles consumer pixel tile `consumerTileY` reads: lowest(first pixel)/producerTileM to
// highest(last pixel)/producerTileM, clipped to the producer grid's `producerPixelTiles` rows. Every channel tile
// of each is read (the consumer's K runs over all of the producer's channels).
CUSYNC_HOST_DEVICE constexpr PixelTileRange producerPixelTilesRead(const ConvHalo& halo, std::uint32_t consumerTileY,
                                                                   std::uint32_t consumerTileM,
                                                                   std::uint32_t producerTileM,
                                                                   std::uint32_t producerPixelTiles) {
  const std::uint64_t firstPixel = std::uint64_t{consumerTileY} * consumerTileM;
  const std::uint64_t lastPixel = firstPixel + consumerTileM - 1;
  const std::uint64_t lastTile = producerPixelTiles - 1;
  const std::uint64_t first = halo.lowest(firstPixel) / producerTileM;
  const std::uint64_t last = halo.highest(lastPixel) / producerTileM;
  return PixelTileRange{static_cast<std::uint32_t>(first < lastTile ? first : lastTile),
                        static_cast<std::uint32_t>(last < lastTile ? last : lastTile)};
}

// The reduction (K) of a convolution's implicit GEMM and how its k-blocks map to filter taps and channels: CUTLASS's
// sm90 fprop mainloop orders K as (C, S, R), C fastest (sm90_implicit_gemm_gmma_ss_warpspecialized.hpp: "[K,T,R,S,C]
// into ((K), (C,S,R,T))"), and tiles it by TileK along C, so k-block k is channel block k % channelBlocks() of filter
// tap k / channelBlocks(), tap = r * filter + s.
struct ConvReduction {
  std::uint32_t channels = 0;  // C, the producer's output channels
  std::uint32_t tileK = 64;
  std::uint32_t filter = 3;    // R = S

  CUSYNC_HOST_DEVICE constexpr std::uint32_t channelBlocks() const { return (channels + tileK - 1) / tileK; }
  CUSYNC_HOST_DEVICE constexpr std::uint32_t kBlocks() const { return channelBlocks() * filter * filter; }
};

// A rectangle of producer tiles: pixel tiles (grid rows y) [pixelFirst, pixelLast] times channel tiles (grid columns
// x) [channelFirst, channelLast], all inclusive; `empty` when it holds none.
struct ProducerTileRect {
  std::uint32_t pixelFirst = 0, pixelLast = 0, channelFirst = 0, channelLast = 0;
  bool empty = true;

  CUSYNC_HOST_DEVICE constexpr bool contains(std::uint32_t y, std::uint32_t x) const {
    return !empty && pixelFirst <= y && y <= pixelLast && channelFirst <= x && x <= channelLast;
  }
  CUSYNC_HOST_DEVICE constexpr bool contains(const ProducerTileRect& other) const {
    return other.empty || (!empty && pixelFirst <= other.pixelFirst && other.pixelLast <= pixelLast &&
                           channelFirst <= other.channelFirst && other.channelLast <= channelLast);
  }
};

// What the k-block rectangles of one consumer pixel tile have in common, computed once per tile (its 64-bit
// divisions stay out of the per-k-block path): the stencil centers of its first and last pixel and its whole halo.
struct ConsumerTilePixels {
  std::int64_t centerFirst = 0, centerLast = 0, haloLowest = 0, haloHighest = 0;
};
CUSYNC_HOST_DEVICE constexpr ConsumerTilePixels consumerTilePixels(const ConvHalo& halo, std::uint32_t consumerTileY,
                                                                   std::uint32_t consumerTileM) {
  const std::uint64_t firstPixel = std::uint64_t{consumerTileY} * consumerTileM;
  const std::uint64_t lastPixel = firstPixel + consumerTileM - 1;
  return ConsumerTilePixels{std::int64_t(halo.center(firstPixel)), std::int64_t(halo.center(lastPixel)),
                            std::int64_t(halo.lowest(firstPixel)), std::int64_t(halo.highest(lastPixel))};
}

// Where a consumer reads its producer: the producer grid's tiles (pixel tiles of producerTileM pixels, channel
// tiles of producerTileN channels).
struct ProducerTiling {
  std::uint32_t tileM = 0, tileN = 0, pixelTiles = 0, channelTiles = 0;
};

// The producer tiles filter tap `tap` (= r * filter + s) over channel block `channelBlock` reads for one consumer
// pixel tile (a split-K part waits only for its own k-blocks'): the channel tiles of the channel block, and the
// pixel tiles the tap reads. Consumer pixel m reads producer pixel center(m) + (r - pad) * stride * Q + (s - pad)
// when that lies inside the image (otherwise padding, no producer data), and center is non-decreasing, so the tap
// reads within [center(first) + offset, center(last) + offset]; intersected with the whole halo's
// [lowest(first), highest(last)] (which knows the image boundaries) and clipped to the producer grid. Empty when
// the tap reads only padding.
CUSYNC_HOST_DEVICE constexpr ProducerTileRect producerTilesReadByTap(const ConvHalo& halo,
                                                                     const ConvReduction& reduction,
                                                                     std::uint32_t tap, std::uint32_t channelBlock,
                                                                     const ConsumerTilePixels& pixels,
                                                                     const ProducerTiling& producer) {
  ProducerTileRect rect;
  const std::int64_t r = tap / halo.filter, s = tap % halo.filter, pad = halo.filter / 2;
  const std::int64_t offset = (r - pad) * std::int64_t(halo.stride) * halo.outputWidth + (s - pad);
  std::int64_t low = pixels.centerFirst + offset, high = pixels.centerLast + offset;
  low = low > pixels.haloLowest ? low : pixels.haloLowest;
  high = high < pixels.haloHighest ? high : pixels.haloHighest;
  if (high < 0 || low > high || producer.pixelTiles == 0 || producer.channelTiles == 0 || producer.tileM == 0 ||
      producer.tileN == 0)
    return rect;
  const std::uint32_t lastPixelTile = producer.pixelTiles - 1;
  // Pixel indices fit in 32 bits (CUTLASS refuses M past int32); the division is the per-k-block cost.
  const std::uint32_t firstTile = std::uint32_t(low) / producer.tileM, lastTile = std::uint32_t(high) / producer.tileM;
  rect.pixelFirst = firstTile < lastPixelTile ? firstTile : lastPixelTile;
  rect.pixelLast = lastTile < lastPixelTile ? lastTile : lastPixelTile;
  const std::uint32_t firstChannel = channelBlock * reduction.tileK;
  std::uint32_t lastChannel = firstChannel + reduction.tileK - 1;
  if (lastChannel >= reduction.channels) lastChannel = reduction.channels - 1;
  const std::uint32_t lastChannelTile = producer.channelTiles - 1;
  rect.channelFirst = firstChannel / producer.tileN < lastChannelTile ? firstChannel / producer.tileN : lastChannelTile;
  rect.channelLast = lastChannel / producer.tileN < lastChannelTile ? lastChannel / producer.tileN : lastChannelTile;
  rect.empty = false;
  return rect;
}

// The same for k-block `kBlock` of consumer pixel tile `consumerTileY`.
CUSYNC_HOST_DEVICE constexpr ProducerTileRect producerTilesReadByKBlock(
    const ConvHalo& halo, const ConvReduction& reduction, std::uint32_t kBlock, std::uint32_t consumerTileY,
    std::uint32_t consumerTileM, std::uint32_t producerTileM, std::uint32_t producerPixelTiles,
    std::uint32_t producerTileN, std::uint32_t producerChannelTiles) {
  const std::uint32_t channelBlocks = reduction.channelBlocks();
  return producerTilesReadByTap(halo, reduction, kBlock / channelBlocks, kBlock % channelBlocks,
                                consumerTilePixels(halo, consumerTileY, consumerTileM),
                                ProducerTiling{producerTileM, producerTileN, producerPixelTiles, producerChannelTiles});
}

}  // namespace cusync
