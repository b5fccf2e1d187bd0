// Builds one fused-chain GEMM (fused_chain_gemm_kernel.hpp) from a tile configuration and GEMM 0's activation, and
// registers it (fused_chain_registry.h). Included by exactly one translation unit per instantiation. Device + host
// code.
#pragma once

#include <string>
#include <type_traits>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/thread/activation.h>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/util/packed_stride.hpp>

#include "cusync/cutlass/fused_chain_gemm_kernel.hpp"
#include "cusync/cutlass/paired_glu_epilogue.hpp"
#include "cusync/cutlass/staged_tile_epilogue.hpp"
#include "cusync/cutlass/tile_sync_gemm_kernel.hpp"  // tileSyncGemmEntry
#include "common/kernel_occupancy.cuh"
#include "cusync/error.h"
#include "gelu_epilogue.h"
#include "cusync/launch.cuh"
#include "fused_chain_registry.h"

namespace cusync::examples {

// GEMM 0's epilogue: GELU (the GPT-3 MLP) or SwiGLU of paired gate/up columns (the LLaMA MLP).
enum class ChainActivation { Gelu, PairedSwiGlu };

// SecondTileN: GEMM 2's tile width, when it differs from GEMM 1's (TileN): the two GEMMs then run their own tiles in
// one launch (fused_chain_gemm_kernel.hpp), e.g. LLaMA's GEMM 1 in 176-column tiles and GEMM 2 in 256-column ones.
// Staged: both GEMMs' epilogues run on the producer warp group's spare warps from a tile staged in shared memory
// (staged_tile_epilogue.hpp) instead of on the math warps (CUTLASS's TMA epilogues).
// SecondTileK: GEMM 2's k-block depth, when it differs from GEMM 1's: a wider GEMM 2 with half the depth has stage
// buffers no larger than GEMM 1's, so the shared pipeline's stages are as many as GEMM 1's tile allows
// (fused_chain_gemm_kernel.hpp). SecondStages: GEMM 2's stage count, when it differs from GEMM 1's (Stages): each
// GEMM then has its own pipeline over the stage buffers they share, e.g. 7 stages of 28 KB for a 128x96 GEMM 1 and
// 5 of 40 KB for a 128x192 GEMM 2.
template <int TileM, int TileN, int TileK, int Stages, bool Cooperative,
          ChainActivation Activation = ChainActivation::Gelu, int ClusterRows = 1, int SecondTileN = TileN,
          bool Staged = false, int SecondTileK = TileK, int SecondStages = Stages>
struct FusedChainInstance {
  static constexpr bool kSwiGlu = Activation == ChainActivation::PairedSwiGlu;
  using Element = cutlass::half_t;
  using LayoutA = cutlass::layout::RowMajor;     // K contiguous
  using LayoutB = cutlass::layout::ColumnMajor;  // B[K,N] stored N x K
  using LayoutD = cutlass::layout::RowMajor;
  static constexpr int kAlignment = 8;
  using TileShape = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::Int<TileK>>;
  using TileShapeSecond = cute::Shape<cute::Int<TileM>, cute::Int<SecondTileN>, cute::Int<SecondTileK>>;
  // 2x1: the two blocks of a cluster run vertically adjacent tiles and share each B (weight) tile by multicast.
  using ClusterShape = cute::Shape<cute::Int<ClusterRows>, cute::_1, cute::_1>;
  using KernelSchedule = std::conditional_t<Cooperative, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                                            cutlass::gemm::KernelTmaWarpSpecialized>;
  using EpilogueSchedule = std::conditional_t<Cooperative, cutlass::epilogue::TmaWarpSpecializedCooperative,
                                              cutlass::epilogue::TmaWarpSpecialized>;
  template <template <class> class ElementwiseActivation, class Shape = TileShape>
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Shape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, LayoutD, kAlignment, Element, LayoutD,
      kAlignment, EpilogueSchedule,
      cutlass::epilogue::fusion::LinCombEltAct<ElementwiseActivation, Element, float, void, float>>::CollectiveOp;
  using EpilogueGelu = Epilogue<GeluEpilogueFn>;
  using EpilogueIdentity = Epilogue<cutlass::epilogue::thread::Identity>;
  using CutlassEpilogueSecond = Epilogue<cutlass::epilogue::thread::Identity, TileShapeSecond>;
  template <class Shape, int ShapeStages>
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, LayoutA, kAlignment, Element, LayoutB,
      kAlignment, float, Shape, ClusterShape, cutlass::gemm::collective::StageCount<ShapeStages>,
      KernelSchedule>::CollectiveOp;
  using CollectiveMainloop = Mainloop<TileShape, Stages>;
  using CollectiveMainloopSecond = Mainloop<TileShapeSecond, SecondStages>;
  using CutlassEpilogueFirst =
      std::conditional_t<kSwiGlu, cusync::cutlass_sm90::PairedSiluGluEpilogue<EpilogueIdentity, TileShape>,
                         EpilogueGelu>;
  using StagedActivation = cusync::cutlass_sm90::StagedActivation;
  using StagedEpilogueFirst = cusync::cutlass_sm90::StagedTileEpilogue<
      kSwiGlu ? StagedActivation::PairedSwiGlu : StagedActivation::Gelu, EpilogueIdentity, TileShape>;
  using StagedEpilogueSecond =
      cusync::cutlass_sm90::StagedTileEpilogue<StagedActivation::Identity, CutlassEpilogueSecond, TileShapeSecond>;
  using EpilogueFirst = std::conditional_t<Staged, StagedEpilogueFirst, CutlassEpilogueFirst>;
  using EpilogueSecond = std::conditional_t<Staged, StagedEpilogueSecond, CutlassEpilogueSecond>;
  using Policy = std::conditional_t<kSwiGlu, SwiGluMlpPolicy, FusedMlpPolicy>;  // fused_chain_registry.h
  using Kernel = cusync::cutlass_sm90::FusedChainGemmKernel<CollectiveMainloop, EpilogueFirst, EpilogueSecond, Policy,
                                                            CollectiveMainloopSecond>;
  using LaunchArgs = FusedChainLaunchArgsFor<Policy>;
  using Entry = FusedChainEntryFor<Policy>;
  static constexpr int kFirstOutputColumnsDivisor = Kernel::kFirstOutputColumnsDivisor;

  static GridShape tileGrid(int m, int n) { return Kernel::tileGrid(typename Kernel::ProblemShape{m, n, 1, 1}); }
  static GridShape secondTileGrid(int m, int n) {
    return Kernel::secondTileGrid(typename Kernel::ProblemShape{m, n, 1, 1});
  }

  using Occupancy = KernelOccupancy<&cusync::cutlass_sm90::tileSyncGemmEntry<Kernel>>;
  static void prepareFunction() { Occupancy::allowSharedMemory(Kernel::SharedStorageSize); }
  static int maxActiveBlocksPerSm() {
    return Occupancy::maxActiveBlocksPerSm(Kernel::MaxThreadsPerBlock, Kernel::SharedStorageSize);
  }
  // Clusters of ClusterRows blocks resident at once: an SM pair must come from one GPC, so this can be fewer than
  // SMs x occupancy / ClusterRows.
  static int maxActiveClusters() {
    prepareFunction();
    cudaLaunchConfig_t config{};
    int device = 0, sms = 0;
    CUSYNC_CUDA_CHECK(cudaGetDevice(&device));
    CUSYNC_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    config.gridDim = dim3(unsigned(sms / ClusterRows * ClusterRows));
    config.blockDim = dim3(Kernel::MaxThreadsPerBlock);
    config.dynamicSmemBytes = Kernel::SharedStorageSize;
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = ClusterRows;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    int clusters = 0;
    CUSYNC_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, cusync::cutlass_sm90::tileSyncGemmEntry<Kernel>, &config));
    return clusters;
  }

  template <class Collective, class Epi>
  static typename Kernel::template GemmArguments<cusync::cutlass_sm90::TileSyncMainloop<Collective>, Epi> gemmArguments(
      int m, int n, int k, const __half* a, const __half* b, __half* d, float* partials, std::uint32_t* arrivals) {
    using StrideA = typename Collective::StrideA;
    using StrideB = typename Collective::StrideB;
    typename Kernel::template GemmArguments<cusync::cutlass_sm90::TileSyncMainloop<Collective>, Epi> g;
    g.problem_shape = typename Kernel::ProblemShape{m, n, k, 1};
    g.mainloop = {reinterpret_cast<const Element*>(a), cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(m, k, 1)),
                  reinterpret_cast<const Element*>(b), cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(n, k, 1))};
    if constexpr (cusync::cutlass_sm90::IsStagedEpilogue<Epi>::value) {
      g.epilogue.d = d;  // [m, n / OutputColumnsDivisor]
    } else if constexpr (std::is_same_v<Epi, EpilogueIdentity> || std::is_same_v<Epi, EpilogueGelu> ||
                         std::is_same_v<Epi, CutlassEpilogueSecond>) {
      using StrideD = typename Epi::StrideD;
      g.epilogue.thread.alpha = 1.0f;
      g.epilogue.thread.beta = 0.0f;
      g.epilogue.ptr_C = nullptr;
      g.epilogue.dC = {};
      g.epilogue.ptr_D = reinterpret_cast<Element*>(d);
      g.epilogue.dD = cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(m, n, 1));
    } else {
      g.epilogue.s = d;  // [m, n / 2]
    }
    g.split = cusync::cutlass_sm90::SplitKBuffers{partials, arrivals};
    return g;
  }

  static typename Kernel::Arguments arguments(const LaunchArgs& args) {
    typename Kernel::Arguments a;
    a.first = gemmArguments<CollectiveMainloop, EpilogueFirst>(args.m, args.n0, args.k0, args.a0, args.b0, args.d0,
                                                               args.splitPartials[0], args.splitArrivals[0]);
    // GEMM 1 reads the columns GEMM 0's epilogue writes: n0, or n0 / 2 after the paired SwiGLU.
    a.second = gemmArguments<CollectiveMainloopSecond, EpilogueSecond>(
        args.m, args.n1, args.n0 / kFirstOutputColumnsDivisor, args.d0, args.b1, args.d1, args.splitPartials[1],
        args.splitArrivals[1]);
    a.stages[0] = args.stages[0];
    a.stages[1] = args.stages[1];
    a.queue = args.queue;
    a.firstOutput.input = args.gemm0Output;
    if (args.gemm0Output.producerSemaphores != nullptr) {
      a.firstOutput.producerTileRows = TileM;
      a.firstOutput.producerTileColumns = TileN / kFirstOutputColumnsDivisor;
    }
    a.loadOrder = args.loadOrder;
    a.trace = args.trace;
    a.waitForWholeUnit = args.waitForWholeUnit;
    return a;
  }

  static std::string whyNotImplementable(const LaunchArgs& args) {
    const char* why = Kernel::why_not_implementable(arguments(args));
    return why ? why : "";
  }

  static void launch(const LaunchArgs& args, cudaStream_t stream) {
    prepareFunction();
    const auto a = arguments(args);
    if (const char* why = Kernel::why_not_implementable(a)) throw cusync::Error(std::string("cusync fused chain: ") + why);
    const auto params = Kernel::to_underlying_arguments(a);
    // The queue's drawers are clusters when ClusterRows > 1: ClusterRows blocks each.
    cusync::launchKernelInClusters(cusync::cutlass_sm90::tileSyncGemmEntry<Kernel>,
                                   dim3(args.queue.persistentBlocks * ClusterRows), dim3(Kernel::MaxThreadsPerBlock),
                                   Kernel::SharedStorageSize, stream, cusync::LaunchOrdering::StreamOrder,
                                   unsigned(ClusterRows), params);
  }

  static Entry entry() {
    const std::string name = "fused_" + std::to_string(TileM) + "x" + std::to_string(TileN) + "x" +
                             std::to_string(TileK) + "_s" + std::to_string(Stages) + (Cooperative ? "_coop" : "_ws") +
                             (ClusterRows > 1 ? "_c" + std::to_string(ClusterRows) : std::string()) +
                             (SecondTileN != TileN ? "_n" + std::to_string(SecondTileN) : std::string()) +
                             (SecondTileK != TileK ? "_k" + std::to_string(SecondTileK) : std::string()) +
                             (SecondStages != Stages ? "_gemm2s" + std::to_string(SecondStages) : std::string()) +
                             (Staged ? "_st" : "");
    return Entry{name,
                 GemmTileShape{TileM, TileN, TileK},
                 Stages,
                 Cooperative,
                 &tileGrid,
                 &maxActiveBlocksPerSm,
                 &whyNotImplementable,
                 &launch,
                 ClusterRows,
                 ClusterRows > 1 ? &maxActiveClusters : nullptr,
                 GemmTileShape{TileM, SecondTileN, SecondTileK},
                 &secondTileGrid};
  }
};

}  // namespace cusync::examples

#define CUSYNC_REGISTER_FUSED_CHAIN(...)                           \
  namespace {                                                      \
  using namespace ::cusync::examples;                              \
  const FusedChainRegistration fusedRegistration{__VA_ARGS__::entry()}; \
  }
