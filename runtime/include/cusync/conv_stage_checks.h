// Why a launch of the hooked convolution (cutlass/tile_sync_conv_kernel.hpp) would be invalid, cusync's part of it:
// the stage must be the convolution's tile grid and ask only for what the kernel does (one unit per block, split-K
// of every tile or none), and a convolution that waits must have a producer its halo (conv_halo.h) describes. The
// kernel's whyNotImplementable runs CUTLASS's own can_implement first, then this. Host code in plain C++ (no CUDA,
// no CUTLASS), so that tests/runtime/conv_stage_checks_test.cpp can break each condition without compiling a kernel.
#pragma once

#include <cstdint>

#include "cusync/conv_halo.h"
#include "cusync/tile.h"

namespace cusync {

// A 2-D convolution, fprop, NHWC: CUTLASS's ConvProblemShape in plain numbers (shape_A = N, H, W, C of the
// activation, shape_B = K, R, S, C of the filter, shape_C = N, P, Q, K of the output).
struct ConvProblem {
  int batch = 0;                          // N
  int inputHeight = 0, inputWidth = 0;    // H, W: the activation, the producer's output image
  int inputChannels = 0;                  // C
  int outputHeight = 0, outputWidth = 0;  // P, Q
  int outputChannels = 0;                 // K
  int filterHeight = 0, filterWidth = 0;  // R, S
  int stride[2] = {1, 1};                 // along H, along W (traversal_stride)
  int padding[2] = {0, 0};                // before the first row, before the first column (lower_padding)
  int dilation[2] = {1, 1};
};

// The output tile of one block, and the k-block: the kernel's TileShape, never 0 (the checks divide by it).
struct ConvTileShape {
  std::uint32_t m = 0, n = 0, k = 0;  // pixels, output channels, input channels
};

// What the checks read of the stage's StageView and split-K buffers.
struct ConvStageFacts {
  GridShape grid;
  std::uint32_t persistentBlocks = 0;
  std::uint32_t streamKChunks = 0;
  std::uint32_t blocksPerTile = 1;
  std::uint32_t wholeTiles = 0;
  bool splitBuffers = false;  // SplitKBuffers' partials and arrivals are both set
};

// What the checks read of the activation's producer (ProducedActivation).
struct ConvActivationFacts {
  bool waits = false;  // the producer's semaphores are set: the convolution waits for its halo
  GridShape producerGrid;
  ConvHalo halo;
  std::uint32_t producerTileM = 0, producerTileN = 0;
  const PixelTileRange* haloRows = nullptr;  // read only for null: the table lives on the device
  std::uint32_t haloRowCount = 0;
};

// One launch of a hooked convolution stage, as the checks see it.
struct ConvStageLaunch {
  ConvProblem problem;
  ConvTileShape tile;
  ConvStageFacts stage;
  ConvActivationFacts activation;
};

// The convolution's implicit GEMM tiled: x = output-channel tiles, y = pixel tiles (N * P * Q pixels), z = 1.
inline GridShape convTileGrid(const ConvProblem& problem, ConvTileShape tile) {
  const std::int64_t pixels = std::int64_t{problem.batch} * problem.outputHeight * problem.outputWidth;
  return GridShape{static_cast<std::uint32_t>((problem.outputChannels + std::int64_t{tile.n} - 1) / tile.n),
                   static_cast<std::uint32_t>((pixels + tile.m - 1) / tile.m), 1u};
}

// The convolution's K as the kernel walks it: C channels of an R x R stencil, TileK per k-block.
inline ConvReduction convReductionOf(const ConvProblem& problem, std::uint32_t tileK) {
  return ConvReduction{std::uint32_t(problem.inputChannels), tileK, std::uint32_t(problem.filterHeight)};
}

// Null, or the first reason in this order: the stage's shape and what it asks of the kernel, then, when the
// convolution waits, its halo rows' table, its channels, its halo against the problem and the producer's tiling.
inline const char* whyConvStageNotImplementable(const ConvStageLaunch& launch) {
  const ConvProblem& problem = launch.problem;
  const ConvStageFacts& stage = launch.stage;
  if (!(convTileGrid(problem, launch.tile) == stage.grid))
    return "stage grid does not match the convolution's tile grid";
  if (stage.persistentBlocks != 0) return "the cusync convolution is not persistent";
  if (stage.streamKChunks != 0) return "the cusync convolution runs no stream-K chunks (they need a persistent kernel)";
  const std::uint32_t parts = stage.blocksPerTile;
  if (parts == 0) return "a stage needs at least one block per tile";
  if (stage.wholeTiles != 0) return "the hooked convolution splits every tile or none (the stage has whole tiles)";
  if (parts > 1 && !stage.splitBuffers) return "split-K needs partial and arrival buffers";
  const ConvReduction reduction = convReductionOf(problem, launch.tile.k);
  if (parts > reduction.kBlocks()) return "more split-K parts than k-blocks (C / TileK * filter^2)";
  if (std::uint64_t(stage.grid.tileCount()) * parts > 0x7fffffffu) return "too many work units for one launch";
  const ConvActivationFacts& produced = launch.activation;
  if (!produced.waits) return nullptr;
  if (produced.haloRows == nullptr)
    return "a waiting convolution needs its halo rows on the device (ProducedActivation::haloRows, conv_halo_rows.h)";
  if (produced.haloRowCount != stage.grid.y)
    return "the halo rows' table does not have one row per pixel tile of the convolution";
  if (reduction.channels == 0 || reduction.channelBlocks() * launch.tile.k != reduction.channels)
    return "the k-block waits need input channels that are a multiple of TileK";
  const ConvHalo& halo = produced.halo;
  if (!halo.supported()) return "only 1x1 and 3x3 filters with stride 1 or 2 have a halo (conv_halo.h)";
  if (int(halo.outputHeight) != problem.outputHeight || int(halo.outputWidth) != problem.outputWidth)
    return "the halo's output size is not the convolution's";
  if (int(halo.filter) != problem.filterHeight || int(halo.filter) != problem.filterWidth)
    return "the halo's filter is not the convolution's";
  for (int i = 0; i < 2; ++i) {
    if (problem.stride[i] != int(halo.stride)) return "the halo's stride is not the convolution's";
    if (problem.dilation[i] != 1) return "dilated convolutions have no halo (conv_halo.h)";
    if (problem.padding[i] != int(halo.filter / 2)) return "the halo assumes padding filter/2";
  }
  if (problem.inputHeight != int(halo.stride * halo.outputHeight) ||
      problem.inputWidth != int(halo.stride * halo.outputWidth))
    return "the halo assumes an input image stride times the output's (conv_halo.h)";
  if (produced.producerTileM == 0) return "the producer's pixel tile height is 0";
  if (produced.producerTileN == 0) return "the producer's channel tile width is 0";
  if (produced.producerGrid.x != (reduction.channels + produced.producerTileN - 1) / produced.producerTileN)
    return "the producer grid's channel tiles do not cover this convolution's input channels";
  const long long inputPixels = 1LL * problem.batch * problem.inputHeight * problem.inputWidth;
  if (produced.producerGrid.y != std::uint32_t((inputPixels + produced.producerTileM - 1) / produced.producerTileM) ||
      produced.producerGrid.z != 1)
    return "the producer grid does not tile this convolution's input pixels";
  return nullptr;
}

}  // namespace cusync
