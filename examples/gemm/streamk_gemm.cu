// CUTLASS's stock Stream-K GEMM (see streamk_gemm.h): stock_gemm_instance.cuh's cooperative 128x128 kernel under
// CUTLASS's Stream-K tile scheduler. Built without CUTLASS_ENABLE_GDC_FOR_SM90: CUTLASS 4.2's Stream-K scheduler
// does not compile with it (docs/GPU_NOTES.md).
#include "streamk_gemm.h"

#include "stock_gemm_instance.cuh"

namespace cusync::examples {

namespace {
template <template <class> class ActivationFn>
using StreamKKernel =
    StockGemmKernel<128, 128, 64, 1, /*Pingpong=*/false, ActivationFn, cutlass::gemm::StreamKScheduler>;
}  // namespace

StreamKGemm::StreamKGemm(int m, int n, int k, Activation activation) {
  if (activation == Activation::Gelu)
    implementation_ =
        std::make_unique<StockGemmOf<StreamKKernel<GeluEpilogueFn>>>(m, n, k, "CUTLASS Stream-K");
  else
    implementation_ =
        std::make_unique<StockGemmOf<StreamKKernel<cutlass::epilogue::thread::Identity>>>(m, n, k, "CUTLASS Stream-K");
}

StreamKGemm::~StreamKGemm() = default;

void StreamKGemm::run(const __half* a, const __half* b, __half* d, cudaStream_t stream) {
  implementation_->run(a, b, d, stream);
}

}  // namespace cusync::examples
