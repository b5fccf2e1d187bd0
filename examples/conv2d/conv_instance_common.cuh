// What the hooked convolution (tile_sync_conv_instance.cuh) and CUTLASS's stock one (stock_conv_instance.cuh) of a
// tile configuration share, so that the CUTLASS-stock baseline computes exactly what the hooked kernel does: the
// element types, the conv mainloop collective, the bias + ReLU fusion, the CUTLASS problem of a layer, the epilogue
// arguments both set alike, and the configuration's name. Device + host code; included by the two instance headers.
#pragma once

#include <string>

#include <cute/tensor.hpp>
// The conv builders use KernelHardwareInfo without including it (CUTLASS 4.2).
#include <cutlass/kernel_hardware_info.hpp>
#include <cutlass/conv/collective/collective_builder.hpp>
#include <cutlass/conv/convnd_problem_shape.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/thread/activation.h>

#include "conv_registry.h"

namespace cusync::examples {

template <int TileM, int TileN, int TileK, int Stages>
struct ConvTileConfiguration {
  using Element = cutlass::half_t;
  using ElementAccumulator = float;
  static constexpr int kAlignment = 8;  // 16 bytes: TMA
  // K nested as CUTLASS's conv tests write it: the mainloop tiles the (C, S, R) reduction mode.
  using TileShape = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::Shape<cute::Int<TileK>>>;
  using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;
  // Bias per output channel (a GEMM column), ReLU, beta = 0 and no C operand.
  using Fusion = cutlass::epilogue::fusion::LinCombPerColBiasEltAct<cutlass::epilogue::thread::ReLu, Element, float,
                                                                    Element, void, float>;
  // CUTLASS 4.2's sm90 conv mainloop has one schedule (one math warp group; no cooperative/ping-pong for conv).
  using CollectiveMainloop = typename cutlass::conv::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::conv::Operator::kFprop, Element,
      cutlass::layout::TensorNHWC, kAlignment, Element, cutlass::layout::TensorNHWC, kAlignment, ElementAccumulator,
      TileShape, ClusterShape, cutlass::conv::collective::StageCount<Stages>,
      cutlass::conv::KernelImplicitTmaWarpSpecializedSm90>::CollectiveOp;
  using ProblemShape = typename CollectiveMainloop::ProblemShape;
  // The TMA epilogue with the fusion, storing D in `LayoutD`: the hooked kernel writes the packed NHWC output as
  // the row-major GEMM D[pixels, channels], CUTLASS's conv kernel in its own TensorNHWC form.
  template <class LayoutD>
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, float, void, LayoutD, kAlignment, Element,
      LayoutD, kAlignment, cutlass::epilogue::TmaWarpSpecialized, Fusion>::CollectiveOp;

  static ProblemShape problemOf(const ConvLayerShape& s) {
    using Extent = typename ProblemShape::TensorExtent;
    using Spatial = typename ProblemShape::ShapePadding;
    return ProblemShape(cutlass::conv::Mode::kCrossCorrelation, Extent{s.batch, s.height, s.width, s.inChannels},
                        Extent{s.outChannels, s.filter, s.filter, s.inChannels}, Spatial{s.padding(), s.padding()},
                        Spatial{s.padding(), s.padding()}, Spatial{s.stride, s.stride}, Spatial{1, 1}, 1);
  }

  // The epilogue arguments both kernels set alike (the output stride is each one's own).
  template <class EpilogueArguments>
  static void setBiasReluEpilogue(EpilogueArguments& epilogue, const ConvLaunchArgs& args) {
    epilogue.thread.alpha = 1.0f;
    epilogue.thread.beta = 0.0f;
    epilogue.thread.bias_ptr = reinterpret_cast<const Element*>(args.bias);
    epilogue.ptr_C = nullptr;
    epilogue.dC = {};
    epilogue.ptr_D = reinterpret_cast<Element*>(args.output);
  }

  // e.g. 64x64x64_s4_b1_ followed by the kernel's kind.
  static std::string name(int minBlocksPerSm, const std::string& kind) {
    return std::to_string(TileM) + "x" + std::to_string(TileN) + "x" + std::to_string(TileK) + "_s" +
           std::to_string(Stages) + "_b" + std::to_string(minBlocksPerSm) + "_" + kind;
  }
};

}  // namespace cusync::examples
