// Builds one hooked CUTLASS sm90 GEMM from a tile configuration and registers it (gemm_registry.h).
// Included by exactly one translation unit per instantiation (instances/*.cu). Device + host code.
#pragma once

#include <string>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/thread/activation.h>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/util/packed_stride.hpp>

#include "cusync/cutlass/tile_sync_gemm_kernel.hpp"
#include "cusync/error.h"
#include "cusync/launch.cuh"
#include "cusync/tile.h"
#include "gemm_registry.h"

namespace cusync::examples {

template <PolicyKind P>
using PolicyType = std::conditional_t<P == PolicyKind::TileSync, cusync::TileSync, cusync::RowSync>;

template <Activation A>
struct ActivationFunction;
template <>
struct ActivationFunction<Activation::Identity> {
  template <class T>
  using Fn = cutlass::epilogue::thread::Identity<T>;
};
template <>
struct ActivationFunction<Activation::Gelu> {
  template <class T>
  using Fn = cutlass::epilogue::thread::GELU<T>;
};

template <int TileM, int TileN, int TileK, int Stages, bool Cooperative, int MinBlocksPerSm, Activation Act,
          PolicyKind InputPolicyKind, PolicyKind OutputPolicyKind>
struct TileSyncGemmInstance {
  using ElementA = cutlass::half_t;
  using ElementB = cutlass::half_t;
  using ElementD = cutlass::half_t;
  using ElementAccumulator = float;
  using LayoutA = cutlass::layout::RowMajor;     // K contiguous
  using LayoutB = cutlass::layout::ColumnMajor;  // B[K,N] stored N x K, K contiguous
  using LayoutD = cutlass::layout::RowMajor;
  static constexpr int kAlignment = 8;
  using TileShape = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::Int<TileK>>;
  using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;
  using KernelSchedule = std::conditional_t<Cooperative, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                                            cutlass::gemm::KernelTmaWarpSpecialized>;
  using EpilogueSchedule = std::conditional_t<Cooperative, cutlass::epilogue::TmaWarpSpecializedCooperative,
                                              cutlass::epilogue::TmaWarpSpecialized>;
  using Fusion = cutlass::epilogue::fusion::LinCombEltAct<ActivationFunction<Act>::template Fn, ElementD, float,
                                                          void, float>;

  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, float, void, LayoutD, kAlignment,
      ElementD, LayoutD, kAlignment, EpilogueSchedule, Fusion>::CollectiveOp;

  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, kAlignment, ElementB, LayoutB,
      kAlignment, ElementAccumulator, TileShape, ClusterShape, cutlass::gemm::collective::StageCount<Stages>,
      KernelSchedule>::CollectiveOp;

  using InputPolicy = PolicyType<InputPolicyKind>;
  using OutputPolicy = PolicyType<OutputPolicyKind>;
  using Kernel = cusync::cutlass_sm90::TileSyncGemmKernel<CollectiveMainloop, CollectiveEpilogue, InputPolicy,
                                                          OutputPolicy, MinBlocksPerSm>;

  static GridShape tileGrid(int m, int n) { return Kernel::tileGrid(typename Kernel::ProblemShape{m, n, 1, 1}); }
  static std::uint32_t semaphoreCount(GridShape g) { return OutputPolicy::semaphoreCount(g); }

  static void prepareFunction() {
    static bool prepared = false;
    if (prepared) return;
    CUSYNC_CUDA_CHECK(cudaFuncSetAttribute(cusync::cutlass_sm90::tileSyncGemmEntry<Kernel>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, Kernel::SharedStorageSize));
    prepared = true;
  }

  static int maxActiveBlocksPerSm() {
    prepareFunction();
    int blocks = 0;
    CUSYNC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, cusync::cutlass_sm90::tileSyncGemmEntry<Kernel>, Kernel::MaxThreadsPerBlock,
        Kernel::SharedStorageSize));
    return blocks;
  }

  static void launch(const GemmLaunchArgs& args, cudaStream_t stream) {
    prepareFunction();
    using StrideA = typename CollectiveMainloop::StrideA;
    using StrideB = typename CollectiveMainloop::StrideB;
    using StrideD = typename CollectiveEpilogue::StrideD;
    typename Kernel::ProblemShape problem{args.m, args.n, args.k, 1};
    typename Kernel::Arguments arguments;
    arguments.problem_shape = problem;
    arguments.mainloop = {reinterpret_cast<const ElementA*>(args.a),
                          cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(args.m, args.k, 1)),
                          reinterpret_cast<const ElementB*>(args.b),
                          cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(args.n, args.k, 1))};
    arguments.epilogue.thread.alpha = 1.0f;
    arguments.epilogue.thread.beta = 0.0f;
    arguments.epilogue.ptr_C = nullptr;
    arguments.epilogue.dC = {};
    arguments.epilogue.ptr_D = reinterpret_cast<ElementD*>(args.d);
    arguments.epilogue.dD = cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(args.m, args.n, 1));
    auto& sync = arguments.sync;
    sync.stage = args.stage;
    sync.a.input = InputView<InputPolicy>{args.producerSemaphores, args.producerGrid};
    sync.a.producerTileRows = args.producerTileRows;
    sync.a.producerTileColumns = args.producerTileColumns;
    sync.loadOrder = static_cast<cusync::cutlass_sm90::LoadOrder>(args.loadOrder);
    sync.triggerDependentsAtStart = args.triggerDependentsAtStart;
    sync.a.waitForPriorGrid = args.waitForPriorGrid;

    if (!Kernel::can_implement(arguments)) throw cusync::Error("cusync GEMM: CUTLASS cannot implement this problem");
    const GridShape grid = tileGrid(args.m, args.n);
    if (!(grid == args.stage.grid))
      throw cusync::Error("cusync GEMM: stage grid does not match the GEMM's tile grid");
    auto params = Kernel::to_underlying_arguments(arguments);
    cusync::launchKernel(cusync::cutlass_sm90::tileSyncGemmEntry<Kernel>, dim3(grid.tileCount()),
                         dim3(Kernel::MaxThreadsPerBlock), Kernel::SharedStorageSize, stream,
                         args.programmaticLaunch, params);
  }

  static GemmKernelEntry entry() {
    std::string name = std::to_string(TileM) + "x" + std::to_string(TileN) + "x" + std::to_string(TileK) + "_s" +
                       std::to_string(Stages) + (Cooperative ? "_coop" : "_ws") + "_b" +
                       std::to_string(MinBlocksPerSm) + (Act == Activation::Gelu ? "_gelu" : "_id") + "_in" +
                       policyName(InputPolicyKind) + "_out" + policyName(OutputPolicyKind);
    return GemmKernelEntry{name,     GemmTileShape{TileM, TileN, TileK},
                           Stages,   Cooperative,
                           MinBlocksPerSm, Act,
                           InputPolicyKind, OutputPolicyKind,
                           &tileGrid, &semaphoreCount,
                           &maxActiveBlocksPerSm, &launch};
  }
};

}  // namespace cusync::examples

// One registration per translation unit.
#define CUSYNC_REGISTER_GEMM(...)                                 \
  namespace {                                                     \
  using namespace ::cusync::examples;                             \
  const GemmRegistration registration{__VA_ARGS__::entry()};      \
  }
