// One hooked CUTLASS sm90 GEMM built from a tile configuration and the policy types it waits and posts with: its
// CUTLASS types, tile grid, occupancy and a launch from the type-erased GemmLaunchArgs (gemm_registry.h). The
// registered MLP instances (tile_sync_gemm_instance.cuh) and the attention chain's GEMMs
// (examples/attention/attention_gemms.h) are built on it. Included by the translation units that instantiate it.
// Device + host code.
#pragma once

#include <string>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/thread/activation.h>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/util/packed_stride.hpp>

#include "cusync/cutlass/tile_sync_gemm_kernel.hpp"
#include "cusync/cutlass/tile_sync_persistent_gemm_kernel.hpp"
#include "cusync/cutlass/tile_sync_pingpong_gemm_kernel.hpp"
#include "common/kernel_occupancy.cuh"
#include "cusync/error.h"
#include "cusync/launch.cuh"
#include "cusync/tile.h"
#include "gelu_epilogue.h"
#include "gemm_registry.h"

namespace cusync::examples {
inline namespace CUSYNC_LOAD_ORDER_NAMESPACE {

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
  using Fn = GeluEpilogueFn<T>;  // gelu_epilogue.h: the tanh form unless CUSYNC_GELU_ERF
};

// One hooked CUTLASS sm90 GEMM: D = act(A * B^T) of a tile configuration, waiting for A's producer tiles under
// InputPolicy_ and posting D's tiles under OutputPolicy_ (policy types generated and proven by cusyncgen, from
// whichever spec names the dependency). ClusterRows 2: 2x1 clusters sharing B by multicast, one tile per block;
// the stage's order must pair the tiles (Stage::setClusterTileOrder(2)). Pingpong: the persistent kernel with two
// math warp groups on alternate tiles (tile_sync_pingpong_gemm_kernel.hpp). Lean: the persistent kernel without
// stream-K, L2 summing or a unit hand-off, static units only (tile_sync_persistent_gemm_kernel.hpp).
template <int TileM, int TileN, int TileK, int Stages, bool Cooperative, int MinBlocksPerSm, bool Persistent,
          Activation Act, class InputPolicy_, class OutputPolicy_, int ClusterRows = 1, bool Pingpong = false,
          bool Lean = false>
struct HookedGemm {
  static_assert(ClusterRows == 1 || (ClusterRows == 2 && !Persistent && MinBlocksPerSm == 1),
                "2x1 clusters: one-tile-per-block kernels at one block per SM");
  static_assert(!Pingpong || (Persistent && !Cooperative && MinBlocksPerSm == 1 && ClusterRows == 1),
                "pingpong: persistent, one warp group per tile, one block per SM, no clusters");
  static_assert(!Lean || (Persistent && !Pingpong), "lean: the cooperative or one-warp-group persistent kernel");
  using ElementA = cutlass::half_t;
  using ElementB = cutlass::half_t;
  using ElementD = cutlass::half_t;
  using ElementAccumulator = float;
  using LayoutA = cutlass::layout::RowMajor;     // K contiguous
  using LayoutB = cutlass::layout::ColumnMajor;  // B[K,N] stored N x K, K contiguous
  using LayoutD = cutlass::layout::RowMajor;
  static constexpr int kAlignment = 8;
  using TileShape = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::Int<TileK>>;
  using ClusterShape = cute::Shape<cute::Int<ClusterRows>, cute::_1, cute::_1>;
  using KernelSchedule = std::conditional_t<
      Pingpong, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
      std::conditional_t<Cooperative, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                         cutlass::gemm::KernelTmaWarpSpecialized>>;
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

  using InputPolicy = InputPolicy_;
  using OutputPolicy = OutputPolicy_;
  using Kernel = std::conditional_t<
      Pingpong,
      cusync::cutlass_sm90::TileSyncPingpongGemmKernel<CollectiveMainloop, CollectiveEpilogue, InputPolicy,
                                                       OutputPolicy>,
      std::conditional_t<
          Persistent,
          cusync::cutlass_sm90::TileSyncPersistentGemmKernel<CollectiveMainloop, CollectiveEpilogue, InputPolicy,
                                                             OutputPolicy, MinBlocksPerSm, Lean>,
          cusync::cutlass_sm90::TileSyncGemmKernel<CollectiveMainloop, CollectiveEpilogue, InputPolicy, OutputPolicy,
                                                   MinBlocksPerSm>>>;

  static GridShape tileGrid(int m, int n) { return Kernel::tileGrid(typename Kernel::ProblemShape{m, n, 1, 1}); }
  static std::uint32_t semaphoreCount(GridShape g) { return OutputPolicy::semaphoreCount(g); }

  using Occupancy = KernelOccupancy<&cusync::cutlass_sm90::tileSyncGemmEntry<Kernel>>;
  static void prepareFunction() { Occupancy::allowSharedMemory(Kernel::SharedStorageSize); }
  static int maxActiveBlocksPerSm() {
    return Occupancy::maxActiveBlocksPerSm(Kernel::MaxThreadsPerBlock, Kernel::SharedStorageSize);
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
    sync.loadOrder = args.loadOrder;
    sync.triggerDependentsAtStart = args.triggerDependentsAtStart;
    sync.splitPartials = args.splitPartials;
    sync.splitArrivals = args.splitArrivals;
    sync.splitAccumulate = args.splitAccumulate;
    sync.trace = args.trace;
    sync.traceStage = args.traceStage;
    sync.a.waitForPriorGrid = args.waitForPriorGrid;

    // The kernel refuses what it cannot run (its why_not_implementable) and says how many blocks it takes.
    if (const char* why = Kernel::why_not_implementable(arguments))
      throw cusync::Error(std::string("cusync GEMM: ") + why);
    auto params = Kernel::to_underlying_arguments(arguments);
    cusync::launchKernelInClusters(cusync::cutlass_sm90::tileSyncGemmEntry<Kernel>,
                                   Kernel::get_grid_shape(arguments), dim3(Kernel::MaxThreadsPerBlock),
                                   Kernel::SharedStorageSize, stream, args.launchOrdering, unsigned(ClusterRows),
                                   params);
  }
};

}  // namespace CUSYNC_LOAD_ORDER_NAMESPACE
}  // namespace cusync::examples
