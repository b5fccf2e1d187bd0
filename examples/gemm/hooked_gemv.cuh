// The hooked GEMV stage (runtime/include/cusync/hooked_gemv_kernel.cuh on the CUDA cores,
// hooked_mma_gemv_kernel.cuh on the tensor cores) behind the type-erased GemmLaunchArgs of the
// hooked CUTLASS GEMMs (gemm_registry.h): its tile grid, occupancy and a launch that refuses, with the reason, what
// the kernel cannot run (gemv_stage_shape.h). A chain registers it where it would a HookedGemm (the attention
// chain's token generation: examples/attention/attention_gemv_instance.cuh). Include from the translation unit that
// instantiates it. Device + host code.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "common/kernel_occupancy.cuh"
#include "cusync/error.h"
#include "cusync/hooked_gemv_kernel.cuh"
#include "cusync/hooked_mma_gemv_kernel.cuh"
#include "cusync/hooked_packed_gemv_kernel.cuh"
#include "cusync/hooked_rows_mma_gemv_kernel.cuh"
#include "cusync/launch.cuh"
#include "cusync/tile.h"
#include "gemm_registry.h"

namespace cusync::examples {

// D = A x B^T for M <= kGemvMaxTokens tokens, in tiles of TileM rows (the spec's: only row tile 0 exists) by TileN
// columns, BlocksPerSm blocks of kGemvThreads per SM; waits for A under InputPolicy_ and posts D under
// OutputPolicy_, as HookedGemm does. StageWeights: when the launch waits (tile by tile or for the whole previous
// grid), each block copies its unit's weights into shared memory before the wait (hooked_gemv_kernel.cuh), where
// they fit (kStagedWeightBytes, and the device's shared memory beside the activations); otherwise, and in a launch
// that does not wait, it streams them through registers. MmaStages > 0: the products on tensor cores, each warp
// streaming its weights through a ring of MmaStages 4 KB slots (hooked_mma_gemv_kernel.cuh; StageWeights unused).
// WholeRowsUnroll > 0: on tensor cores, TileN / 8 blocks per tile, each 8 columns over the whole of K, that many
// 4 KB pieces of each row loaded per batch (hooked_rows_mma_gemv_kernel.cuh; the stage's parts are those column
// groups; StageWeights and MmaStages unused). PackedRows: on tensor cores, TileN / 16 blocks per tile, each 16 columns
// over the whole of K read from B packed once in mma fragment order (hooked_packed_gemv_kernel.cuh; the launch's b is
// the packed copy, packGemvWeights at 16 rows; the stage's parts are the column groups; the other options unused).
template <int TileM, int TileN, int BlocksPerSm, bool StageWeights, class InputPolicy_, class OutputPolicy_,
          int MmaStages = 0, int WholeRowsUnroll = 0, bool PackedRows = false>
struct HookedGemv {
  static constexpr bool Packed = PackedRows;
  static_assert(!Packed || (MmaStages == 0 && !StageWeights && WholeRowsUnroll == 0),
                "the packed stage streams its packed weights through registers");
  static constexpr bool WholeRows = WholeRowsUnroll > 0 || Packed;
  static_assert(MmaStages == 0 || !StageWeights, "the tensor-core stage streams its weights through its ring");
  static_assert(!WholeRows || (MmaStages == 0 && !StageWeights), "the whole-rows stage streams through registers");
  static constexpr bool kTensorCores = MmaStages > 0;
  static constexpr std::uint32_t kColumnGroups =
      Packed ? TileN / kPacked16GemvRows : WholeRows ? TileN / kRowMmaGemvRows : 0;
  using InputPolicy = InputPolicy_;
  using OutputPolicy = OutputPolicy_;
  // Dynamic shared memory asked of every instance once, for the staged activations and weights of the longest
  // k-range it may get: 200 KB, or what the device lets a block have beside the kernel's static shared memory (an
  // sm_80 or sm_86 part has less, and asking for more would fail).
  static constexpr int kSharedBytesWanted = 200 * 1024;
  static constexpr int kStagedWeightBytes = 160 * 1024;
  static int sharedBytesAllowed() {
    static const int allowed = [] {
      int device = 0, optIn = 0;
      CUSYNC_CUDA_CHECK(cudaGetDevice(&device));
      CUSYNC_CUDA_CHECK(cudaDeviceGetAttribute(&optIn, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
      cudaFuncAttributes attributes{};
      CUSYNC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel<kGemvMaxTokens>));
      return std::min(kSharedBytesWanted, optIn - int(attributes.sharedSizeBytes));
    }();
    return allowed;
  }

  template <int kTokens>
  static constexpr auto kernel = [] {
    if constexpr (Packed)
      return &hookedPackedGemvKernel<InputPolicy, OutputPolicy, TileN, BlocksPerSm>;  // one instance for 1-4 tokens
    else if constexpr (WholeRows)
      return &hookedRowsMmaGemvKernel<InputPolicy, OutputPolicy, kTokens, TileN, BlocksPerSm, WholeRowsUnroll>;
    else if constexpr (kTensorCores)
      return &hookedMmaGemvKernel<InputPolicy, OutputPolicy, kTokens, TileN, BlocksPerSm, MmaStages>;
    else
      return &hookedGemvKernel<InputPolicy, OutputPolicy, kTokens, TileN, BlocksPerSm>;
  }();

  // Dynamic shared memory of a launch of `tokens` tokens whose longest part spans `longestPart` k, weights staged or
  // not.
  static int sharedBytes(int tokens, int longestPart, bool stageWeights) {
    if constexpr (Packed) return 0;  // its warps' sums are static
    if constexpr (WholeRows) return rowMmaGemvSharedBytes(tokens);
    if constexpr (kTensorCores) return hookedMmaGemvSharedBytes(MmaStages, tokens, longestPart);
    return tokens * longestPart * 2 + (stageWeights ? TileN * longestPart * 2 : 0);
  }

  static std::string name() {
    return "gemv_" + std::to_string(TileM) + "x" + std::to_string(TileN) + "_b" + std::to_string(BlocksPerSm) +
           (StageWeights ? "_sw" : "") + (kTensorCores ? "_mma" + std::to_string(MmaStages) : "") +
           (Packed      ? std::string("_packed")
            : WholeRows ? "_rows" + (WholeRowsUnroll > 1 ? std::to_string(WholeRowsUnroll) : std::string())
                        : std::string(""));
  }

  static GridShape tileGrid(int m, int n) {
    return GridShape{std::uint32_t((n + TileN - 1) / TileN), std::uint32_t((m + TileM - 1) / TileM), 1};
  }

  // At the most tokens and a k-range of 2048 (what the attention chain's splits give): what sizes its splits.
  static int maxActiveBlocksPerSm() {
    KernelOccupancy<kernel<kGemvMaxTokens>>::allowSharedMemory(sharedBytesAllowed());  // the most any launch asks
    return KernelOccupancy<kernel<kGemvMaxTokens>>::maxActiveBlocksPerSm(kGemvThreads,
                                                                          sharedBytes(kGemvMaxTokens, 2048, false));
  }

  static void launch(const GemmLaunchArgs& args, cudaStream_t stream) {
    GemvStageProblem problem;
    problem.m = args.m;
    problem.n = args.n;
    problem.k = args.k;
    problem.tileN = TileN;
    problem.gridRows = args.stage.grid.y;
    problem.parts = args.stage.blocksPerTile;
    problem.wholeTiles = args.stage.wholeTiles;
    problem.persistentBlocks = args.stage.persistentBlocks;
    problem.splitBuffers = args.splitPartials != nullptr && args.splitArrivals != nullptr;
    problem.columnGroups = kColumnGroups;
    problem.arrivalCounters = args.splitArrivals != nullptr;
    if (const std::string why = whyNotGemvStage(problem); !why.empty())
      throw cusync::Error("cusync GEMV " + name() + ": " + why);
    const int longestPart = gemvLongestPart(args.k, problem.parts);
    const int activationBytes = args.m * longestPart * 2;
    const int weightBytes = TileN * longestPart * 2;
    const bool waits = args.producerSemaphores != nullptr || args.waitForPriorGrid;
    const bool stageWeights = StageWeights && waits && weightBytes <= kStagedWeightBytes &&
                              activationBytes + weightBytes <= sharedBytesAllowed();
    const int bytes = sharedBytes(args.m, longestPart, stageWeights);
    if (bytes > sharedBytesAllowed())
      throw cusync::Error("cusync GEMV " + name() +
                          ": a part's shared memory (activations, staged weights or ring) takes " +
                          std::to_string(bytes) +
                          " bytes of shared memory, more than " + std::to_string(sharedBytesAllowed()) +
                          " (split K in more parts)");
    static_assert(TileN % 8 == 0, "whole 16-byte vectors per staged row");
    HookedGemvParams<InputPolicy> params;
    params.m = args.m;
    params.n = args.n;
    params.k = args.k;
    params.a = args.a;
    params.w = args.b;
    params.d = args.d;
    params.stage = args.stage;
    params.input = InputView<InputPolicy>{args.producerSemaphores, args.producerGrid};
    params.producerTileRows = args.producerTileRows;
    params.producerTileColumns = args.producerTileColumns;
    params.splitPartials = args.splitPartials;
    params.splitArrivals = args.splitArrivals;
    params.triggerDependentsAtStart = args.triggerDependentsAtStart;
    params.waitForPriorGrid = args.waitForPriorGrid;
    params.stageWeights = stageWeights;
    params.activationVectors = activationBytes / 16;
    params.trace = args.trace;
    params.traceStage = args.traceStage;
    switch (args.m) {
      case 1: return launchWith<1>(params, bytes, args, stream);
      case 2: return launchWith<2>(params, bytes, args, stream);
      case 3: return launchWith<3>(params, bytes, args, stream);
      default: return launchWith<4>(params, bytes, args, stream);
    }
  }

 private:
  template <int kTokens>
  static void launchWith(const HookedGemvParams<InputPolicy>& params, int sharedBytes, const GemmLaunchArgs& args,
                         cudaStream_t stream) {
    KernelOccupancy<kernel<kTokens>>::allowSharedMemory(sharedBytesAllowed());
    cusync::launchKernel(kernel<kTokens>, dim3(args.stage.workUnits()), dim3(kGemvThreads), std::size_t(sharedBytes),
                         stream, args.launchOrdering, params);
  }
};

}  // namespace cusync::examples
