// The "CUTLASS-stock" baseline of conv2d_chain_example: CUTLASS 4.2's own sm90 implicit-GEMM convolution
// (cutlass::conv::kernel::ConvUniversal over the same conv mainloop collective the hooked kernel uses, i.e.
// GemmUniversal with KernelImplicitTmaWarpSpecializedSm90: one tile per block, the tile from blockIdx through the
// stock tile scheduler) for one tile configuration, registered like the hooked instances (conv_registry.h). Included
// by exactly one generated translation unit per configuration (examples/conv2d/CMakeLists.txt). Device + host code.
//
// The same math as tile_sync_conv_instance.cuh: fprop, NHWC fp16 in and out, fp32 accumulation, bias + ReLU in the
// epilogue through the same fusion (LinCombPerColBiasEltAct: bias per output channel, beta = 0, no C operand), with
// the epilogue in CUTLASS's conv form (TensorNHWC output, the stride CUTLASS's conv testbed sets). What is ours:
//  * The launch: `cutlass::device_kernel` with the grid, block and shared memory ConvUniversalAdapter::run uses for
//    a 1x1x1 cluster, through cudaLaunchKernelEx so that a stage can be launched programmatically (PDL;
//    ConvUniversalAdapter has no PDL launch in 4.2). The generated translation units define
//    CUTLASS_ENABLE_GDC_FOR_SM90, so the stock kernel's own griddepcontrol.wait (load warp, before its first load)
//    and launch_dependents (after its mainloop) are compiled in; launched in stream order they do nothing.
//  * The launch bounds: MinBlocksPerSm of the configuration instead of the stock 1 (a derived kernel type that only
//    changes `MinBlocksPerMultiprocessor`), so that "b2" configurations get the same register budget as the hooked
//    ones. The kernel body is CUTLASS's.
#pragma once

#include <cstdint>
#include <string>

#include <cute/tensor.hpp>
// The conv builders use KernelHardwareInfo without including it (CUTLASS 4.2).
#include <cutlass/kernel_hardware_info.hpp>
#include <cutlass/conv/collective/collective_builder.hpp>
#include <cutlass/conv/convnd_problem_shape.hpp>
#include <cutlass/conv/kernel/conv_universal.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/device_kernel.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/thread/activation.h>

#include "common/kernel_occupancy.cuh"
#include "conv_instance_common.cuh"
#include "conv_registry.h"
#include "cusync/error.h"
#include "cusync/launch.cuh"

#if !defined(CUTLASS_ENABLE_GDC_FOR_SM90)
#error "stock_conv_instance.cuh: define CUTLASS_ENABLE_GDC_FOR_SM90 (examples/conv2d/CMakeLists.txt does) for PDL"
#endif

namespace cusync::examples {

template <int TileM, int TileN, int TileK, int Stages, int MinBlocksPerSm>
struct StockConvInstance : ConvTileConfiguration<TileM, TileN, TileK, Stages> {
  using Configuration = ConvTileConfiguration<TileM, TileN, TileK, Stages>;
  using typename Configuration::Element;
  using typename Configuration::CollectiveMainloop;
  using typename Configuration::ProblemShape;
  using Configuration::problemOf;
  using CollectiveEpilogue = typename Configuration::template Epilogue<cutlass::layout::TensorNHWC>;
  using StockKernel = cutlass::conv::kernel::ConvUniversal<ProblemShape, CollectiveMainloop, CollectiveEpilogue>;

  // CUTLASS's kernel with the configuration's launch bounds (cutlass::device_kernel reads them from the type).
  struct Kernel : StockKernel {
    static constexpr std::uint32_t MinBlocksPerMultiprocessor = MinBlocksPerSm;
  };
  static_assert(sizeof(Kernel) == sizeof(StockKernel), "the launch-bounds wrapper adds no state");

  // The grid the stock launch covers, as the example's stage grid: x = output-channel tiles, y = pixel tiles.
  static GridShape tileGrid(const ConvLayerShape& s) {
    return GridShape{std::uint32_t((s.outChannels + TileN - 1) / TileN),
                     std::uint32_t((s.outPixels() + TileM - 1) / TileM), 1u};
  }

  static typename Kernel::Arguments argumentsOf(const ConvLaunchArgs& args) {
    using StrideD = typename CollectiveEpilogue::StrideD;
    typename Kernel::Arguments arguments;
    arguments.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    arguments.problem_shape = problemOf(args.shape);
    arguments.mainloop = {reinterpret_cast<const Element*>(args.activation),
                          reinterpret_cast<const Element*>(args.filter)};
    Configuration::setBiasReluEpilogue(arguments.epilogue, args);
    // The output's (Q, P, N) strides, innermost first, as CUTLASS's conv testbed sets them for fprop.
    StrideD dD{};
    const auto& problem = arguments.problem_shape;
    cute::for_each(cute::make_seq<cute::rank<0>(StrideD{})>{}, [&](auto i) {
      cute::get<0, i>(dD) = problem.stride_C[ProblemShape::RankT - 2 - i];
    });
    arguments.epilogue.dD = dD;
    return arguments;
  }

  // The stock kernel neither waits nor posts: a launch that asks it to is refused, as is what CUTLASS refuses.
  static std::string whyNotImplementable(const ConvLaunchArgs& args) {
    if (args.producerSemaphores != nullptr || args.stage.semaphores != nullptr)
      return "the CUTLASS stock convolution does not synchronize tiles";
    if (!(tileGrid(args.shape) == args.stage.grid)) return "stage grid does not match the convolution's tile grid";
    if (args.stage.blocksPerTile != 1) return "CUTLASS's stock convolution runs here without split-K";
    if (!Kernel::can_implement(argumentsOf(args))) return "CUTLASS cannot implement this convolution";
    return "";
  }

  using Occupancy = KernelOccupancy<&cutlass::device_kernel<Kernel>>;

  static void launch(const ConvLaunchArgs& args, cudaStream_t stream) {
    Occupancy::allowSharedMemory(Kernel::SharedStorageSize);
    if (const std::string why = whyNotImplementable(args); !why.empty())
      throw cusync::Error("CUTLASS stock conv " + entry().name + ": " + why);
    const typename Kernel::Params params = Kernel::to_underlying_arguments(argumentsOf(args), nullptr);
    const dim3 grid = Kernel::get_grid_shape(params);
    if (std::uint64_t(grid.x) * grid.y * grid.z != args.stage.grid.tileCount())
      throw cusync::Error("CUTLASS stock conv " + entry().name + ": grid differs from the stage's tile count");
    cusync::launchKernel(cutlass::device_kernel<Kernel>, grid, Kernel::get_block_shape(), Kernel::SharedStorageSize,
                         stream, args.launchOrdering, params);
  }

  static int blocksPerSm() {
    return Occupancy::maxActiveBlocksPerSm(int(Kernel::MaxThreadsPerBlock), Kernel::SharedStorageSize);
  }

  static ConvKernelEntry entry() {
    const std::string name = Configuration::name(MinBlocksPerSm, kCutlassStockKernelName);
    return ConvKernelEntry{name, TileM, TileN, TileK, Stages, MinBlocksPerSm, std::nullopt, &tileGrid,
                           &whyNotImplementable, &launch, &blocksPerSm};
  }
};

}  // namespace cusync::examples

// One registration per translation unit.
#define CUSYNC_REGISTER_STOCK_CONV(...)                          \
  namespace {                                                    \
  using namespace ::cusync::examples;                            \
  const ConvRegistration registration{__VA_ARGS__::entry()};     \
  }
