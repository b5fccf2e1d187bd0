// The halo helper the hooked convolution waits with (runtime/include/cusync/conv_halo.h) against the convolution
// itself: a brute-force stencil over pixels and filter taps (consumer pixel (b, p, q), tap (r, s) reads producer
// pixel (b, stride*p - pad + r, stride*q - pad + s) when inside the image, CUTLASS's fprop indexing). The range
// must contain every tile the stencil touches, equal that set where the specs claim exactness, and its formulas
// must be the specs' (tests/policy/conv_halo_test.cpp checks the specs' own ranges the same way, with isl).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "cusync/conv_halo.h"
#include "cusync/conv_halo_rows.h"

using cusync::ConvHalo;
using cusync::PixelTileRange;

namespace {

struct Case {
  ConvHalo halo;
  std::uint32_t consumerTileM, producerTileM;
};

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The producer pixel tiles each consumer pixel tile reads, by brute force.
std::vector<std::set<std::uint32_t>> stencilTiles(const Case& c, std::int64_t batch) {
  const std::int64_t P = c.halo.outputHeight, Q = c.halo.outputWidth, S = c.halo.stride, R = c.halo.filter;
  const std::int64_t H = S * P, W = S * Q, pad = R / 2;
  std::vector<std::set<std::uint32_t>> tiles(static_cast<std::size_t>(ceilDiv(batch * P * Q, c.consumerTileM)));
  for (std::int64_t m = 0; m < batch * P * Q; ++m) {
    const std::int64_t b = m / (P * Q), p = m / Q % P, q = m % Q;
    for (std::int64_t r = 0; r < R; ++r)
      for (std::int64_t s = 0; s < R; ++s) {
        const std::int64_t h = S * p - pad + r, w = S * q - pad + s;
        if (h < 0 || h >= H || w < 0 || w >= W) continue;  // zero padding: no producer data
        tiles[static_cast<std::size_t>(m / c.consumerTileM)].insert(
            static_cast<std::uint32_t>(((b * H + h) * W + w) / c.producerTileM));
      }
  }
  return tiles;
}

std::uint32_t producerPixelTiles(const Case& c, std::int64_t batch) {
  const std::int64_t S = c.halo.stride;
  return static_cast<std::uint32_t>(
      ceilDiv(batch * S * c.halo.outputHeight * S * c.halo.outputWidth, c.producerTileM));
}

// Checks coverage for every tile; returns how many tiles the range over-approximates.
int checkCoverage(const Case& c, std::int64_t batch) {
  const auto stencil = stencilTiles(c, batch);
  const std::uint32_t rows = producerPixelTiles(c, batch);
  int overApproximated = 0;
  for (std::uint32_t y = 0; y < stencil.size(); ++y) {
    const PixelTileRange range = cusync::producerPixelTilesRead(c.halo, y, c.consumerTileM, c.producerTileM, rows);
    INFO("P=" << c.halo.outputHeight << " Q=" << c.halo.outputWidth << " filter=" << c.halo.filter
              << " stride=" << c.halo.stride << " TileM=" << c.consumerTileM << "/" << c.producerTileM
              << " B=" << batch << " consumer tile " << y << " range [" << range.first << ", " << range.last << "]");
    REQUIRE(range.first <= range.last);
    REQUIRE(range.last < rows);
    for (std::uint32_t tile : stencil[y]) {
      INFO("stencil reads producer tile " << tile);
      REQUIRE(range.first <= tile);
      REQUIRE(tile <= range.last);
    }
    if (range.last - range.first + 1 != stencil[y].size()) ++overApproximated;
  }
  return overApproximated;
}

const std::int64_t kBatches[] = {1, 2, 3, 8, 32};

}  // namespace

TEST_CASE("conv halo: the range holds every producer tile the stencil reads, and exactly those where a tile spans "
          "an image row",
          "[conv]") {
  // The chain example's layers (3x3, stride 1, TileM 64 and 128 >= Q) and the stride-2 spec's (TileM >= 2*Q + 2:
  // 64 >= 58 for Q = 28, 128 >= 30 for Q = 14).
  const std::vector<Case> exact = {
      {{56, 56, 3, 1}, 64, 64},  {{56, 56, 3, 1}, 128, 128}, {{28, 28, 3, 1}, 64, 64}, {{28, 28, 3, 1}, 128, 128},
      {{14, 14, 3, 1}, 64, 64},  {{7, 7, 3, 1}, 128, 128},   {{56, 56, 1, 1}, 64, 64}, {{28, 28, 3, 2}, 64, 64},
      {{14, 14, 3, 2}, 128, 128}, {{28, 28, 1, 2}, 64, 64},
  };
  for (const Case& c : exact)
    for (std::int64_t batch : kBatches) REQUIRE(checkCoverage(c, batch) == 0);
}

TEST_CASE("conv halo: with tiles shorter than an image row the range over-approximates but still covers", "[conv]") {
  // 56-pixel rows, 16-pixel tiles: the halo of a tile inside one row leaves 56 - 18 unread pixels between two of
  // the rows it touches, which hold whole tiles the range waits for. The spec (conv2d_3x3.dep) says so; here it
  // is shown to happen. (32-pixel tiles leave gaps of 22 pixels, no whole tile: exact.)
  const Case c{{56, 56, 3, 1}, 16, 16};
  for (std::int64_t batch : kBatches) REQUIRE(checkCoverage(c, batch) > 0);
  // Different producer and consumer tile heights: coverage still holds (the kernel allows it).
  for (std::int64_t batch : kBatches) checkCoverage({{28, 28, 3, 1}, 128, 64}, batch);
  for (std::int64_t batch : kBatches) checkCoverage({{28, 28, 3, 1}, 64, 128}, batch);
}

TEST_CASE("conv halo: lowest and highest bound every pixel a consumer pixel reads and never decrease", "[conv]") {
  for (const ConvHalo halo : {ConvHalo{56, 56, 3, 1}, ConvHalo{7, 7, 3, 1}, ConvHalo{28, 28, 3, 2},
                              ConvHalo{28, 28, 1, 2}, ConvHalo{14, 14, 1, 1}}) {
    const std::int64_t P = halo.outputHeight, Q = halo.outputWidth, S = halo.stride, R = halo.filter;
    const std::int64_t H = S * P, W = S * Q, pad = R / 2, batch = 3;
    std::uint64_t previousLowest = 0, previousHighest = 0;
    for (std::int64_t m = 0; m < batch * P * Q; ++m) {
      const std::int64_t b = m / (P * Q), p = m / Q % P, q = m % Q;
      const std::uint64_t lo = halo.lowest(static_cast<std::uint64_t>(m));
      const std::uint64_t hi = halo.highest(static_cast<std::uint64_t>(m));
      INFO("P=" << P << " stride=" << S << " filter=" << R << " m=" << m);
      REQUIRE(lo >= previousLowest);
      REQUIRE(hi >= previousHighest);
      previousLowest = lo;
      previousHighest = hi;
      for (std::int64_t r = 0; r < R; ++r)
        for (std::int64_t s = 0; s < R; ++s) {
          const std::int64_t h = S * p - pad + r, w = S * q - pad + s;
          if (h < 0 || h >= H || w < 0 || w >= W) continue;
          const std::uint64_t read = static_cast<std::uint64_t>((b * H + h) * W + w);
          REQUIRE(lo <= read);
          REQUIRE(read <= hi);
        }
    }
  }
}

TEST_CASE("conv halo: the 3x3 formulas are conv2d_3x3.dep's and conv2d_stride2.dep's, term by term", "[conv]") {
  // Written here as the specs write them, in signed arithmetic (the specs' max() guards the image start).
  {
    const std::int64_t P = 56, Q = 56;
    const ConvHalo halo{56, 56, 3, 1};
    for (std::int64_t m = 0; m < 4 * P * Q; ++m) {
      const std::int64_t lowest = std::max(m / (P * Q) * (P * Q), m - Q - std::min<std::int64_t>(m % Q, 1));
      const std::int64_t highest =
          std::min(m / (P * Q) * (P * Q) + P * Q - 1, m + Q + std::min<std::int64_t>(Q - 1 - m % Q, 1));
      REQUIRE(halo.lowest(static_cast<std::uint64_t>(m)) == static_cast<std::uint64_t>(lowest));
      REQUIRE(halo.highest(static_cast<std::uint64_t>(m)) == static_cast<std::uint64_t>(highest));
    }
  }
  {
    const std::int64_t P = 28, Q = 28;
    const ConvHalo halo{28, 28, 3, 2};
    for (std::int64_t m = 0; m < 4 * P * Q; ++m) {
      const std::int64_t center = 2 * m + 2 * Q * (m / Q);
      const std::int64_t lowest =
          center - 2 * Q * std::min<std::int64_t>(m / Q % P, 1) - std::min<std::int64_t>(m % Q, 1);
      REQUIRE(halo.lowest(static_cast<std::uint64_t>(m)) == static_cast<std::uint64_t>(lowest));
      REQUIRE(halo.highest(static_cast<std::uint64_t>(m)) == static_cast<std::uint64_t>(center + 2 * Q + 1));
    }
  }
}

TEST_CASE("conv halo: only the filters and strides the specs cover are supported", "[conv]") {
  REQUIRE(ConvHalo{56, 56, 3, 1}.supported());
  REQUIRE(ConvHalo{28, 28, 1, 2}.supported());
  REQUIRE_FALSE(ConvHalo{56, 56, 5, 1}.supported());
  REQUIRE_FALSE(ConvHalo{56, 56, 3, 3}.supported());
  REQUIRE_FALSE(ConvHalo{0, 56, 3, 1}.supported());
}

namespace {

// Every k-block of every consumer tile: the rectangle holds each producer tile the k-block's filter tap and channel
// block read (brute force, CUTLASS's (C, S, R) k order), and lies inside the whole tile's halo range.
void checkKBlockCoverage(const Case& c, std::int64_t batch, std::uint32_t channels, std::uint32_t tileK,
                         std::uint32_t producerTileN) {
  const std::int64_t P = c.halo.outputHeight, Q = c.halo.outputWidth, S = c.halo.stride, R = c.halo.filter;
  const std::int64_t H = S * P, W = S * Q, pad = R / 2;
  const cusync::ConvReduction reduction{channels, tileK, c.halo.filter};
  const std::uint32_t pixelTiles = producerPixelTiles(c, batch);
  const std::uint32_t channelTiles = static_cast<std::uint32_t>(ceilDiv(channels, producerTileN));
  const std::int64_t consumerTiles = ceilDiv(batch * P * Q, c.consumerTileM);
  for (std::uint32_t y = 0; y < consumerTiles; ++y) {
    const PixelTileRange halo = cusync::producerPixelTilesRead(c.halo, y, c.consumerTileM, c.producerTileM, pixelTiles);
    for (std::uint32_t k = 0; k < reduction.kBlocks(); ++k) {
      const cusync::ProducerTileRect rect = cusync::producerTilesReadByKBlock(
          c.halo, reduction, k, y, c.consumerTileM, c.producerTileM, pixelTiles, producerTileN, channelTiles);
      const std::int64_t tap = k / reduction.channelBlocks(), r = tap / R, s = tap % R;
      const std::int64_t c0 = (k % reduction.channelBlocks()) * tileK;
      const std::int64_t c1 = std::min<std::int64_t>(c0 + tileK, channels) - 1;
      INFO("P=" << P << " Q=" << Q << " filter=" << R << " stride=" << S << " TileM=" << c.consumerTileM << "/"
                << c.producerTileM << " B=" << batch << " C=" << channels << " TileK=" << tileK << " producer TileN="
                << producerTileN << " tile " << y << " k-block " << k);
      if (!rect.empty) {
        REQUIRE(halo.first <= rect.pixelFirst);
        REQUIRE(rect.pixelLast <= halo.last);
        REQUIRE(rect.channelLast < channelTiles);
      }
      for (std::int64_t m = std::int64_t(y) * c.consumerTileM;
           m < std::min<std::int64_t>((std::int64_t(y) + 1) * c.consumerTileM, batch * P * Q); ++m) {
        const std::int64_t b = m / (P * Q), p = m / Q % P, q = m % Q;
        const std::int64_t h = S * p - pad + r, w = S * q - pad + s;
        if (h < 0 || h >= H || w < 0 || w >= W) continue;
        const auto pixelTile = static_cast<std::uint32_t>(((b * H + h) * W + w) / c.producerTileM);
        for (std::int64_t channel = c0; channel <= c1; ++channel) {
          INFO("pixel " << m << " reads producer tile (" << channel / producerTileN << ", " << pixelTile << ")");
          REQUIRE(rect.contains(pixelTile, static_cast<std::uint32_t>(channel / producerTileN)));
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("conv halo: each k-block's rectangle holds every producer tile its filter tap and channels read",
          "[conv][split]") {
  const std::vector<Case> cases = {{{7, 7, 3, 1}, 64, 64},    {{7, 7, 3, 1}, 128, 64},  {{14, 14, 3, 1}, 64, 128},
                                   {{28, 28, 3, 1}, 128, 128}, {{28, 28, 3, 2}, 64, 64}, {{14, 14, 1, 2}, 64, 64},
                                   {{7, 7, 1, 1}, 64, 64},     {{56, 56, 3, 1}, 16, 16}};
  for (const Case& c : cases)
    for (std::int64_t batch : {1, 3, 8}) {
      checkKBlockCoverage(c, batch, 128, 64, 64);
      checkKBlockCoverage(c, batch, 128, 64, 128);
      checkKBlockCoverage(c, batch, 96, 64, 64);  // a partial channel block
    }
}

TEST_CASE("conv halo: a k-block reads one channel tile, and a corner tap of a tile in an image's first row only "
          "padding",
          "[conv][split]") {
  // 7x7 images, 64-pixel tiles: tile 0 holds image 0 and 15 pixels of image 1, so tap (0, 0) reads image 0's row
  // above (padding) and image 1's: not empty. With batch 1 and 8-pixel tiles, tile 0 lies in the first row.
  const ConvHalo halo{7, 7, 3, 1};
  const cusync::ConvReduction reduction{512, 64, 3};
  REQUIRE(reduction.kBlocks() == 72);
  const cusync::ProducerTileRect corner =
      cusync::producerTilesReadByKBlock(halo, reduction, 0, 0, 7, 7, 7, 64, 8);
  REQUIRE(corner.empty);
  const cusync::ProducerTileRect center =
      cusync::producerTilesReadByKBlock(halo, reduction, 4 * 8 + 3, 0, 7, 7, 7, 64, 8);
  REQUIRE_FALSE(center.empty);
  REQUIRE(center.pixelFirst == 0);
  REQUIRE(center.pixelLast == 0);
  REQUIRE(center.channelFirst == 3);
  REQUIRE(center.channelLast == 3);
}

TEST_CASE("conv halo rows: the host table the kernel reads has one row per consumer tile, the stencil's exact range "
          "where tiles span an image row",
          "[conv]") {
  // The hooked convolution reads its tile's range from this table instead of computing it (conv_halo_rows.h), built
  // as conv_chain.cuh builds it: one row per consumer pixel tile, ceil(B*P*Q / TileM) of them. Where a tile spans an
  // image row (the example's layers) each row must be exactly the lowest to the highest producer tile the stencil
  // touches; with mixed tile heights and short tiles it must still cover the stencil.
  struct TableCase {
    Case c;
    bool exact;
  };
  const std::vector<TableCase> cases = {
      {{{56, 56, 3, 1}, 64, 64}, true},  {{{28, 28, 3, 1}, 128, 128}, true}, {{{14, 14, 3, 1}, 64, 64}, true},
      {{{28, 28, 3, 2}, 64, 64}, true},  {{{56, 56, 1, 1}, 64, 64}, true},   {{{56, 56, 3, 1}, 16, 16}, false},
      {{{28, 28, 3, 1}, 128, 64}, false}, {{{28, 28, 3, 1}, 64, 128}, false}};
  for (const TableCase& t : cases)
    for (std::int64_t batch : {1, 3, 8}) {
      const Case& c = t.c;
      const auto stencil = stencilTiles(c, batch);
      const std::uint32_t consumerTiles = static_cast<std::uint32_t>(
          ceilDiv(batch * c.halo.outputHeight * c.halo.outputWidth, c.consumerTileM));
      const std::vector<PixelTileRange> rows =
          cusync::haloRowsOf(c.halo, consumerTiles, c.consumerTileM, c.producerTileM, producerPixelTiles(c, batch));
      REQUIRE(rows.size() == stencil.size());
      for (std::uint32_t y = 0; y < rows.size(); ++y) {
        INFO("P=" << c.halo.outputHeight << " stride=" << c.halo.stride << " filter=" << c.halo.filter << " TileM="
                  << c.consumerTileM << "/" << c.producerTileM << " B=" << batch << " consumer tile " << y);
        REQUIRE_FALSE(stencil[y].empty());
        const std::uint32_t lowest = *stencil[y].begin(), highest = *stencil[y].rbegin();
        CHECK(rows[y].first <= lowest);
        CHECK(highest <= rows[y].last);
        if (t.exact) {
          CHECK(rows[y].first == lowest);
          CHECK(rows[y].last == highest);
        }
      }
    }
}
