// The register epilogue of the sm_80 hooked GEMM: D = act(alpha * accumulator + beta * C), applied per element by
// CUTLASS's DefaultEpilogue, which stores straight from registers with a bounds predicate per element (so M need
// not be a multiple of the tile). Device and host; needs CUTLASS's headers.
//
// Why a thread operator of our own: DefaultEpilogue calls its operator with one scalar accumulator and needs
// ElementD; CUTLASS's LinearCombination has that interface but no activation, and its LinearCombinationGeneric
// (which has one) works on fragments only. The activation itself is CUTLASS's (epilogue/thread/activation.h:
// GELU is the exact erf form), applied in fp32 before the one rounding to fp16.
#pragma once

#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/default_epilogue.hpp>
#include <cutlass/epilogue/thread/activation.h>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/numeric_conversion.h>

namespace cusync::cutlass_sm80 {

template <class ElementD_, template <class> class Activation>
class LinearCombinationActivation {
 public:
  using ElementOutput = ElementD_;
  using ElementD = ElementD_;
  using ElementC = ElementD_;
  using ElementAccumulator = float;
  using ElementCompute = float;
  static constexpr int kCount = 1;  // DefaultEpilogue applies the operator element by element

  struct Params {
    float alpha = 1.0f;
    float beta = 0.0f;
  };

  CUTLASS_HOST_DEVICE explicit LinearCombinationActivation(Params const& params) : params_(params) {}

  CUTLASS_HOST_DEVICE bool is_source_needed() const { return params_.beta != 0.0f; }

  CUTLASS_HOST_DEVICE ElementD operator()(ElementAccumulator accumulator) const {
    return convert_(Activation<float>{}(params_.alpha * accumulator));
  }

  CUTLASS_HOST_DEVICE ElementD operator()(ElementAccumulator accumulator, ElementC source) const {
    const float c = cutlass::NumericConverter<float, ElementC>{}(source);
    return convert_(Activation<float>{}(params_.alpha * accumulator + params_.beta * c));
  }

 private:
  Params params_;
  cutlass::NumericConverter<ElementD, float, cutlass::FloatRoundStyle::round_to_nearest> convert_;
};

// D row-major [M, N] (N contiguous), L batches.
using StrideD = cute::Stride<int64_t, cute::_1, int64_t>;

template <class ElementD, template <class> class Activation>
using ActivationEpilogue =
    cutlass::epilogue::collective::DefaultEpilogue<ElementD, StrideD, StrideD,
                                                   LinearCombinationActivation<ElementD, Activation>,
                                                   cutlass::gemm::EpilogueDefault>;

}  // namespace cusync::cutlass_sm80
