// cusync's conditions on a launch of the hooked convolution (runtime/include/cusync/conv_stage_checks.h), which the
// kernel's whyNotImplementable applies after CUTLASS's can_implement: a real layer passes, and each condition, broken
// alone, refuses it with its own message. Plain C++: the kernel itself needs CUTLASS and nvcc.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "cusync/conv_halo.h"
#include "cusync/conv_halo_rows.h"
#include "cusync/conv_stage_checks.h"

using cusync::ConvHalo;
using cusync::ConvProblem;
using cusync::ConvStageLaunch;
using cusync::ConvTileShape;
using cusync::GridShape;
using cusync::PixelTileRange;

namespace {

// The refusal as a string ("" when the launch is fine), so that a failing assertion prints it.
std::string refusal(const ConvStageLaunch& launch) {
  const char* why = cusync::whyConvStageNotImplementable(launch);
  return why ? std::string(why) : std::string();
}

// A ResNet 3x3 layer, 56x56x64 -> 56x56x64, batch 2, stride 1, padding 1, with 128x64x64 tiles, waiting for a
// producer of 128x64 tiles that wrote its 56x56x64 input: 49 pixel tiles of one channel tile on both sides.
ConvProblem resnetProblem() {
  ConvProblem problem;
  problem.batch = 2;
  problem.inputHeight = problem.inputWidth = 56;
  problem.inputChannels = 64;
  problem.outputHeight = problem.outputWidth = 56;
  problem.outputChannels = 64;
  problem.filterHeight = problem.filterWidth = 3;
  problem.stride[0] = problem.stride[1] = 1;
  problem.padding[0] = problem.padding[1] = 1;
  problem.dilation[0] = problem.dilation[1] = 1;
  return problem;
}

constexpr ConvTileShape kTile{128, 64, 64};
constexpr std::uint32_t kProducerTileM = 128, kProducerTileN = 64;
constexpr std::uint32_t kPixelTiles = 49;  // 2 * 56 * 56 / 128

const ConvHalo kHalo{56, 56, 3, 1};

// The halo rows' table as the host computes it; the checks read only whether it is there, the kernel its rows.
const std::vector<PixelTileRange>& resnetHaloRows() {
  static const std::vector<PixelTileRange> rows =
      cusync::haloRowsOf(kHalo, kPixelTiles, kTile.m, kProducerTileM, kPixelTiles);
  return rows;
}

ConvStageLaunch resnetLaunch() {
  ConvStageLaunch launch;
  launch.problem = resnetProblem();
  launch.tile = kTile;
  launch.stage.grid = GridShape{1, kPixelTiles, 1};
  launch.activation.waits = true;
  launch.activation.producerGrid = GridShape{1, kPixelTiles, 1};
  launch.activation.halo = kHalo;
  launch.activation.producerTileM = kProducerTileM;
  launch.activation.producerTileN = kProducerTileN;
  launch.activation.haloRows = resnetHaloRows().data();
  launch.activation.haloRowCount = std::uint32_t(resnetHaloRows().size());
  return launch;
}

}  // namespace

TEST_CASE("the tile grid of a convolution is its output channels by its output pixels", "[conv_stage_checks]") {
  CHECK(cusync::convTileGrid(resnetProblem(), kTile) == GridShape{1, 49, 1});
  ConvProblem wide = resnetProblem();
  wide.outputChannels = 130;
  wide.batch = 3;  // 9408 pixels: 73.5 tiles of 128
  CHECK(cusync::convTileGrid(wide, kTile) == GridShape{3, 74, 1});
  const cusync::ConvReduction reduction = cusync::convReductionOf(resnetProblem(), kTile.k);
  CHECK(reduction.channels == 64);
  CHECK(reduction.filter == 3);
  CHECK(reduction.kBlocks() == 9);
}

TEST_CASE("a waiting ResNet 3x3 layer with its halo table passes the checks", "[conv_stage_checks]") {
  CHECK(refusal(resnetLaunch()).empty());

  SECTION("split into as many parts as it has k-blocks, with its buffers") {
    ConvStageLaunch launch = resnetLaunch();
    launch.stage.blocksPerTile = 9;
    launch.stage.splitBuffers = true;
    CHECK(refusal(launch).empty());
  }
  SECTION("as a stride-2 layer, 56x56 -> 28x28, of its producer's 49 pixel tiles") {
    ConvStageLaunch launch = resnetLaunch();
    launch.problem.outputHeight = launch.problem.outputWidth = 28;
    launch.problem.stride[0] = launch.problem.stride[1] = 2;
    launch.activation.halo = ConvHalo{28, 28, 3, 2};
    launch.stage.grid = GridShape{1, 13, 1};  // 2 * 28 * 28 / 128 = 12.25
    const std::vector<PixelTileRange> rows =
        cusync::haloRowsOf(launch.activation.halo, 13, kTile.m, kProducerTileM, kPixelTiles);
    launch.activation.haloRows = rows.data();
    launch.activation.haloRowCount = std::uint32_t(rows.size());
    CHECK(refusal(launch).empty());
  }
  SECTION("as a 1x1 layer without padding") {
    ConvStageLaunch launch = resnetLaunch();
    launch.problem.filterHeight = launch.problem.filterWidth = 1;
    launch.problem.padding[0] = launch.problem.padding[1] = 0;
    launch.activation.halo.filter = 1;
    CHECK(refusal(launch).empty());
  }
}

TEST_CASE("a convolution that does not wait is not asked for a halo", "[conv_stage_checks]") {
  ConvStageLaunch launch = resnetLaunch();
  launch.activation = cusync::ConvActivationFacts{};
  CHECK(refusal(launch).empty());
  launch.problem.dilation[0] = 2;  // nothing to wait for, so no halo to describe it
  launch.problem.inputChannels = 96;
  CHECK(refusal(launch).empty());
}

TEST_CASE("the stage must be the convolution's one-unit-per-block tile grid", "[conv_stage_checks]") {
  ConvStageLaunch launch = resnetLaunch();
  SECTION("a grid that is not the tile grid") {
    launch.stage.grid.y = 48;
    CHECK(refusal(launch) == "stage grid does not match the convolution's tile grid");
  }
  SECTION("persistent blocks") {
    launch.stage.persistentBlocks = 132;
    CHECK(refusal(launch) == "the cusync convolution is not persistent");
  }
  SECTION("stream-K chunks") {
    launch.stage.streamKChunks = 4;
    CHECK(refusal(launch) == "the cusync convolution runs no stream-K chunks (they need a persistent kernel)");
  }
  SECTION("no block per tile") {
    launch.stage.blocksPerTile = 0;
    CHECK(refusal(launch) == "a stage needs at least one block per tile");
  }
  SECTION("whole tiles before split ones") {
    launch.stage.blocksPerTile = 2;
    launch.stage.splitBuffers = true;
    launch.stage.wholeTiles = 3;
    CHECK(refusal(launch) == "the hooked convolution splits every tile or none (the stage has whole tiles)");
  }
}

TEST_CASE("split-K needs its buffers and at least one k-block per part", "[conv_stage_checks]") {
  ConvStageLaunch launch = resnetLaunch();
  SECTION("split without buffers") {
    launch.stage.blocksPerTile = 2;
    CHECK(refusal(launch) == "split-K needs partial and arrival buffers");
  }
  SECTION("more parts than k-blocks") {
    launch.stage.blocksPerTile = 10;
    launch.stage.splitBuffers = true;
    CHECK(refusal(launch) == "more split-K parts than k-blocks (C / TileK * filter^2)");
  }
  SECTION("more work units than one launch has blocks") {
    // 10000 images of 56x56: 245000 pixel tiles; 64000 channels: 9000 k-blocks; 2.2e9 units.
    launch.problem.batch = 10000;
    launch.problem.inputChannels = 64000;
    launch.stage.grid = cusync::convTileGrid(launch.problem, kTile);
    REQUIRE(launch.stage.grid.tileCount() == 245000);
    launch.stage.blocksPerTile = 9000;
    launch.stage.splitBuffers = true;
    CHECK(refusal(launch) == "too many work units for one launch");
    launch.stage.blocksPerTile = 8765;  // 2147425000 units, under 2^31
    CHECK(refusal(launch) != "too many work units for one launch");
  }
}

TEST_CASE("a waiting convolution needs one halo row per pixel tile", "[conv_stage_checks]") {
  ConvStageLaunch launch = resnetLaunch();
  SECTION("no table") {
    launch.activation.haloRows = nullptr;
    CHECK(refusal(launch) ==
          "a waiting convolution needs its halo rows on the device (ProducedActivation::haloRows, conv_halo_rows.h)");
  }
  SECTION("a row short") {
    launch.activation.haloRowCount = kPixelTiles - 1;
    CHECK(refusal(launch) == "the halo rows' table does not have one row per pixel tile of the convolution");
  }
}

TEST_CASE("a waiting convolution's channels are whole k-blocks", "[conv_stage_checks]") {
  ConvStageLaunch launch = resnetLaunch();
  launch.problem.inputChannels = 96;  // a k-block and a half
  CHECK(refusal(launch) == "the k-block waits need input channels that are a multiple of TileK");
}

TEST_CASE("a waiting convolution's halo must be one conv_halo.h describes", "[conv_stage_checks]") {
  ConvStageLaunch launch = resnetLaunch();
  SECTION("a 5x5 filter") {
    launch.activation.halo.filter = 5;
    CHECK(refusal(launch) == "only 1x1 and 3x3 filters with stride 1 or 2 have a halo (conv_halo.h)");
  }
  SECTION("stride 3") {
    launch.activation.halo.stride = 3;
    CHECK(refusal(launch) == "only 1x1 and 3x3 filters with stride 1 or 2 have a halo (conv_halo.h)");
  }
}

TEST_CASE("a waiting convolution's halo must be its problem's", "[conv_stage_checks]") {
  ConvStageLaunch launch = resnetLaunch();
  SECTION("another output height") {
    launch.activation.halo.outputHeight = 28;
    CHECK(refusal(launch) == "the halo's output size is not the convolution's");
  }
  SECTION("another output width") {
    launch.activation.halo.outputWidth = 55;
    CHECK(refusal(launch) == "the halo's output size is not the convolution's");
  }
  SECTION("a 1x1 halo for a 3x3 filter") {
    launch.activation.halo.filter = 1;
    CHECK(refusal(launch) == "the halo's filter is not the convolution's");
  }
  SECTION("a 3x1 filter") {
    launch.problem.filterWidth = 1;
    CHECK(refusal(launch) == "the halo's filter is not the convolution's");
  }
  SECTION("stride 2 along W only") {
    launch.problem.stride[1] = 2;
    CHECK(refusal(launch) == "the halo's stride is not the convolution's");
  }
  SECTION("dilation 2 along H") {
    launch.problem.dilation[0] = 2;
    CHECK(refusal(launch) == "dilated convolutions have no halo (conv_halo.h)");
  }
  SECTION("dilation 2 along W") {
    launch.problem.dilation[1] = 2;
    CHECK(refusal(launch) == "dilated convolutions have no halo (conv_halo.h)");
  }
  SECTION("no padding along W") {
    launch.problem.padding[1] = 0;
    CHECK(refusal(launch) == "the halo assumes padding filter/2");
  }
  SECTION("padding 2 along H") {
    launch.problem.padding[0] = 2;
    CHECK(refusal(launch) == "the halo assumes padding filter/2");
  }
  SECTION("an input image taller than stride times the output") {
    launch.problem.inputHeight = 57;
    CHECK(refusal(launch) == "the halo assumes an input image stride times the output's (conv_halo.h)");
  }
  SECTION("an input image narrower than stride times the output") {
    launch.problem.inputWidth = 55;
    CHECK(refusal(launch) == "the halo assumes an input image stride times the output's (conv_halo.h)");
  }
}

TEST_CASE("a waiting convolution's producer grid must tile its input", "[conv_stage_checks]") {
  ConvStageLaunch launch = resnetLaunch();
  SECTION("no producer pixel tile height") {
    launch.activation.producerTileM = 0;
    CHECK(refusal(launch) == "the producer's pixel tile height is 0");
  }
  SECTION("no producer channel tile width") {
    launch.activation.producerTileN = 0;
    CHECK(refusal(launch) == "the producer's channel tile width is 0");
  }
  SECTION("channel tiles of 32 channels where the grid has one column") {
    launch.activation.producerTileN = 32;
    CHECK(refusal(launch) == "the producer grid's channel tiles do not cover this convolution's input channels");
  }
  SECTION("two channel tiles for 64 channels of 64") {
    launch.activation.producerGrid.x = 2;
    CHECK(refusal(launch) == "the producer grid's channel tiles do not cover this convolution's input channels");
  }
  SECTION("a pixel tile short") {
    launch.activation.producerGrid.y = kPixelTiles - 1;
    CHECK(refusal(launch) == "the producer grid does not tile this convolution's input pixels");
  }
  SECTION("pixel tiles of 64 pixels where the grid has 49 rows") {
    launch.activation.producerTileM = 64;
    CHECK(refusal(launch) == "the producer grid does not tile this convolution's input pixels");
  }
  SECTION("a batched producer grid") {
    launch.activation.producerGrid.z = 2;
    CHECK(refusal(launch) == "the producer grid does not tile this convolution's input pixels");
  }
}

TEST_CASE("the first broken condition is the one reported", "[conv_stage_checks]") {
  ConvStageLaunch launch = resnetLaunch();
  launch.problem.dilation[0] = 2;
  launch.activation.producerTileM = 0;
  CHECK(refusal(launch) == "dilated convolutions have no halo (conv_halo.h)");
  launch.activation.haloRows = nullptr;
  CHECK(refusal(launch) ==
        "a waiting convolution needs its halo rows on the device (ProducedActivation::haloRows, conv_halo_rows.h)");
  launch.stage.blocksPerTile = 2;
  CHECK(refusal(launch) == "split-K needs partial and arrival buffers");
  launch.stage.persistentBlocks = 1;
  CHECK(refusal(launch) == "the cusync convolution is not persistent");
}
