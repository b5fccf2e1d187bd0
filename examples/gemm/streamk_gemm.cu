// CUTLASS's stock Stream-K GEMM (see streamk_gemm.h). Built without CUTLASS_ENABLE_GDC_FOR_SM90: CUTLASS 4.2's
// Stream-K scheduler does not compile with it (docs/GPU_NOTES.md).
#include "streamk_gemm.h"

#include <string>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/thread/activation.h>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/util/packed_stride.hpp>

#include "cusync/error.h"

namespace cusync::examples {

namespace {

template <template <class> class ActivationFn>
struct StreamKKernel {
  using TileShape = cute::Shape<cute::_128, cute::_128, cute::_64>;
  using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;
  using Fusion = cutlass::epilogue::fusion::LinCombEltAct<ActivationFn, cutlass::half_t, float, void, float>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, cutlass::layout::RowMajor, 8,
      cutlass::half_t, cutlass::layout::RowMajor, 8, cutlass::epilogue::TmaWarpSpecializedCooperative,
      Fusion>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::half_t, cutlass::layout::RowMajor, 8,
      cutlass::half_t, cutlass::layout::ColumnMajor, 8, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue,
                                                      cutlass::gemm::StreamKScheduler>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
};

void checkStatus(cutlass::Status status, const char* what) {
  if (status != cutlass::Status::kSuccess)
    throw cusync::Error(std::string("CUTLASS Stream-K: ") + what + ": " + cutlassGetStatusString(status));
}

}  // namespace

struct StreamKGemm::Implementation {
  virtual ~Implementation() = default;
  virtual void run(const __half* a, const __half* b, __half* d, cudaStream_t stream) = 0;
};

namespace {

template <class K>
class StreamKImplementation final : public StreamKGemm::Implementation {
 public:
  StreamKImplementation(int m, int n, int k) : m_(m), n_(n), k_(k) {
    int device = 0;
    CUSYNC_CUDA_CHECK(cudaGetDevice(&device));
    hardware_.device_id = device;
    hardware_.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(device);
    const std::size_t bytes = K::Gemm::get_workspace_size(arguments(nullptr, nullptr, nullptr));
    if (bytes > 0) CUSYNC_CUDA_CHECK(cudaMalloc(&workspace_, bytes));
  }
  ~StreamKImplementation() override { cudaFree(workspace_); }

  void run(const __half* a, const __half* b, __half* d, cudaStream_t stream) override {
    const auto args = arguments(a, b, d);
    checkStatus(K::Gemm::can_implement(args), "can_implement");
    checkStatus(gemm_.run(args, workspace_, stream), "run");
  }

 private:
  typename K::Gemm::Arguments arguments(const __half* a, const __half* b, __half* d) const {
    using StrideA = typename K::Mainloop::StrideA;
    using StrideB = typename K::Mainloop::StrideB;
    using StrideD = typename K::Epilogue::StrideD;
    typename K::Gemm::Arguments args{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {m_, n_, k_, 1},
        {reinterpret_cast<const cutlass::half_t*>(a),
         cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(m_, k_, 1)),
         reinterpret_cast<const cutlass::half_t*>(b),
         cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(n_, k_, 1))},
        {{}, nullptr, {}, reinterpret_cast<cutlass::half_t*>(d),
         cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(m_, n_, 1))},
        hardware_};
    args.epilogue.thread.alpha = 1.0f;
    args.epilogue.thread.beta = 0.0f;
    return args;
  }

  int m_, n_, k_;
  cutlass::KernelHardwareInfo hardware_{};
  void* workspace_ = nullptr;
  typename K::Gemm gemm_;
};

}  // namespace

StreamKGemm::StreamKGemm(int m, int n, int k, Activation activation) {
  if (activation == Activation::Gelu)
    implementation_ = std::make_unique<StreamKImplementation<StreamKKernel<cutlass::epilogue::thread::GELU>>>(m, n, k);
  else
    implementation_ =
        std::make_unique<StreamKImplementation<StreamKKernel<cutlass::epilogue::thread::Identity>>>(m, n, k);
}

StreamKGemm::~StreamKGemm() = default;

void StreamKGemm::run(const __half* a, const __half* b, __half* d, cudaStream_t stream) {
  implementation_->run(a, b, d, stream);
}

}  // namespace cusync::examples
