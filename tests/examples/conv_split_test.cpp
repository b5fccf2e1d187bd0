// The host decisions of conv2d_chain_example's split-K and "avoid wait-kernel" (examples/conv2d/conv_split.h): how
// many parts each convolution is split into for a target number of waves, the configuration label of a split chain,
// and when a chain may leave out its wait-kernels. Host only.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "conv_split.h"
#include "conv_variants.h"

using namespace cusync::examples;

TEST_CASE("conv split: the parts fill at most the target's waves and never split a layer that fills it", "[split]") {
  // 7x7x512 at batch 1 on 64x64 tiles: 1 pixel tile x 8 channel tiles, K = 9 * 512 / 64 = 72 k-blocks, 132 slots.
  REQUIRE(convSplitParts(8, 132, 72, ConvSplitTarget::OneWave) == 16);  // 128 work units <= 132
  REQUIRE(convSplitParts(8, 132, 72, ConvSplitTarget::HalfWave) == 8);  // 64 <= 66
  REQUIRE(convSplitParts(8, 132, 72, ConvSplitTarget::TwoWaves) == 18);  // 33 capped at 72 / 4 k-blocks a part
  // Batch 8: 7 x 8 = 56 tiles, 2 parts fill 112 of 132 slots.
  REQUIRE(convSplitParts(56, 132, 72, ConvSplitTarget::OneWave) == 2);
  REQUIRE(convSplitParts(56, 132, 72, ConvSplitTarget::HalfWave) == 1);
  // A layer that already fills the wave, no target, no tiles or no slots: unsplit.
  REQUIRE(convSplitParts(200, 132, 72, ConvSplitTarget::OneWave) == 1);
  REQUIRE(convSplitParts(8, 132, 72, ConvSplitTarget::None) == 1);
  REQUIRE(convSplitParts(0, 132, 72, ConvSplitTarget::OneWave) == 1);
  REQUIRE(convSplitParts(8, 0, 72, ConvSplitTarget::OneWave) == 1);
  // A short K (1x1, 64 channels: one k-block) is never split: every part keeps kMinKBlocksPerPart k-blocks.
  REQUIRE(convSplitParts(8, 132, 1, ConvSplitTarget::OneWave) == 1);
  REQUIRE(convSplitParts(8, 132, 9, ConvSplitTarget::OneWave) == 2);
  for (std::uint32_t tiles : {1u, 3u, 8u, 56u, 131u})
    for (std::uint32_t kBlocks : {1u, 4u, 9u, 72u, 288u})
      for (ConvSplitTarget target : {ConvSplitTarget::HalfWave, ConvSplitTarget::OneWave, ConvSplitTarget::TwoWaves}) {
        const std::uint32_t parts = convSplitParts(tiles, 264, kBlocks, target);
        INFO("tiles " << tiles << " k-blocks " << kBlocks << " parts " << parts);
        REQUIRE(parts >= 1);
        REQUIRE((parts == 1 || parts * kMinKBlocksPerPart <= kBlocks));  // the kernel refuses parts > k-blocks
        REQUIRE((parts == 1 || tiles * parts <= convSplitWaves(target) * 264));
      }
}

TEST_CASE("conv split: a split chain is labelled as a configuration of its own, an unsplit one is not", "[split]") {
  REQUIRE(convSplitLabel({1, 1}).empty());
  REQUIRE(convSplitLabel({}).empty());
  REQUIRE(convSplitLabel({8, 8}) == "_k8+8");
  REQUIRE(convSplitLabel({1, 4, 1}) == "_k1+4+1");
}

TEST_CASE("conv split: a chain leaves out its wait-kernels only when all its blocks fit at once", "[split]") {
  REQUIRE(convChainFitsOneWave({49, 49}, 132));
  REQUIRE(convChainFitsOneWave({66, 66}, 132));
  REQUIRE_FALSE(convChainFitsOneWave({66, 67}, 132));
  REQUIRE_FALSE(convChainFitsOneWave({8, 8, 8, 8}, 0));
  // The whole chain counts, not a stage and its producer: four stages of 40 blocks do not fit 132 slots.
  REQUIRE_FALSE(convChainFitsOneWave({40, 40, 40, 40}, 132));
  REQUIRE(convChainFitsOneWave({16 * 8, 0}, 132));
}

TEST_CASE("conv variants: the W variants are tile-synchronized wait-kernel-free variants of their policies",
          "[split]") {
  REQUIRE(convVariantName(ConvVariant::TileSyncW) == "TileSync-W");
  REQUIRE(convVariantName(ConvVariant::RowSyncW) == "RowSync-W");
  for (ConvVariant v : {ConvVariant::TileSyncW, ConvVariant::RowSyncW}) {
    REQUIRE(avoidsWaitKernel(v));
    REQUIRE(tileSynchronized(v));
    REQUIRE_FALSE(programmaticLaunch(v));
    REQUIRE_FALSE(cutlassStock(v));
  }
  REQUIRE(rowSync(ConvVariant::RowSyncW));
  REQUIRE_FALSE(rowSync(ConvVariant::TileSyncW));
  REQUIRE_FALSE(avoidsWaitKernel(ConvVariant::TileSync));
  REQUIRE_FALSE(avoidsWaitKernel(ConvVariant::RowSyncPdl));
}
