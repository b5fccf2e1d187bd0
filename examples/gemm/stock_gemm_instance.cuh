// One configuration of CUTLASS's stock sm90 persistent GEMM (stock_gemm_registry.h): the collective builders'
// mainloop and epilogue and CUTLASS's own GemmUniversal kernel with its persistent tile scheduler, nothing of
// cusync's. Included by the generated translation units of examples/gemm/CMakeLists.txt (CUSYNC_STOCK_GEMM_CONFIGS).
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/thread/activation.h>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/util/packed_stride.hpp>

#include "cusync/error.h"
#include "gelu_epilogue.h"
#include "stock_gemm_registry.h"

namespace cusync::examples {

// Pingpong: two math warp groups on two tiles, one's epilogue under the other's MMA; cooperative: both on one tile.
// Scheduler: CUTLASS's persistent tile scheduler, or its Stream-K one (streamk_gemm.cu). LayoutD: D's layout
// (column-major for the swapped GEMMs of StockGemmInstance, whose D^T is the caller's row-major D).
template <int TileM, int TileN, int TileK, int ClusterM, bool Pingpong, template <class> class ActivationFn,
          class Scheduler = cutlass::gemm::PersistentScheduler, class LayoutD = cutlass::layout::RowMajor>
struct StockGemmKernel {
  using TileShape = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::Int<TileK>>;
  using ClusterShape = cute::Shape<cute::Int<ClusterM>, cute::_1, cute::_1>;
  using KernelSchedule = std::conditional_t<Pingpong, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                                            cutlass::gemm::KernelTmaWarpSpecializedCooperative>;
  using EpilogueSchedule = std::conditional_t<Pingpong, cutlass::epilogue::TmaWarpSpecialized,
                                              cutlass::epilogue::TmaWarpSpecializedCooperative>;
  using Fusion = cutlass::epilogue::fusion::LinCombEltAct<ActivationFn, cutlass::half_t, float, void, float>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, LayoutD, 8, cutlass::half_t, LayoutD, 8,
      EpilogueSchedule, Fusion>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::half_t, cutlass::layout::RowMajor, 8,
      cutlass::half_t, cutlass::layout::ColumnMajor, 8, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      KernelSchedule>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue, Scheduler>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
};

template <class K>
class StockGemmOf final : public StockGemm {
 public:
  StockGemmOf(int m, int n, int k, const char* name) : m_(m), n_(n), k_(k), name_(name) {
    int device = 0;
    CUSYNC_CUDA_CHECK(cudaGetDevice(&device));
    hardware_.device_id = device;
    hardware_.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(device);
    const auto args = arguments(nullptr, nullptr, nullptr);
    check(K::Gemm::can_implement(args), "can_implement");
    const std::size_t bytes = K::Gemm::get_workspace_size(args);
    if (bytes > 0) CUSYNC_CUDA_CHECK(cudaMalloc(&workspace_, bytes));
  }
  ~StockGemmOf() override { cudaFree(workspace_); }

  // Initializes the kernel's workspace on `stream`, then launches: capturable into a CUDA graph and right on every
  // replay (Stream-K's reduction barriers must be re-initialized for each run: docs/GPU_NOTES.md).
  void run(const __half* a, const __half* b, __half* d, cudaStream_t stream) override {
    const auto args = arguments(a, b, d);
    check(gemm_.initialize(args, workspace_, stream), "initialize");
    check(gemm_.run(stream), "run");
  }

 private:
  void check(cutlass::Status status, const char* what) const {
    if (status != cutlass::Status::kSuccess)
      throw cusync::Error(name_ + ": " + what + ": " + cutlassGetStatusString(status));
  }

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
  std::string name_;
  cutlass::KernelHardwareInfo hardware_{};
  void* workspace_ = nullptr;
  typename K::Gemm gemm_;
};

// Swapped: the GEMM the caller runs transposed (StockGemmEntry::swapped), D column-major, on CUTLASS's Stream-K
// scheduler (at small M the weights' rows give few tiles: 48 of 128 rows for GPT-3's GEMM 1, against 132 SMs).
template <int TileM, int TileN, int TileK, int ClusterM, bool Pingpong, bool Swapped = false>
struct StockGemmInstance {
  static std::string name() {
    return "cutlass_" + std::to_string(TileM) + "x" + std::to_string(TileN) + "x" + std::to_string(TileK) + "_c" +
           std::to_string(ClusterM) + "x1_" + (Pingpong ? "pingpong" : "coop") + (Swapped ? "_swapped" : "");
  }
  template <template <class> class ActivationFn>
  using Kernel = StockGemmKernel<TileM, TileN, TileK, ClusterM, Pingpong, ActivationFn,
                                 std::conditional_t<Swapped, cutlass::gemm::StreamKScheduler,
                                                    cutlass::gemm::PersistentScheduler>,
                                 std::conditional_t<Swapped, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>>;
  static StockGemmEntry entry() {
    return StockGemmEntry{name(),
                          [](int m, int n, int k, Activation activation) -> std::unique_ptr<StockGemm> {
                            const std::string label = name();
                            if (activation == Activation::Gelu)
                              return std::make_unique<StockGemmOf<Kernel<GeluEpilogueFn>>>(
                                  m, n, k, label.c_str());
                            return std::make_unique<StockGemmOf<Kernel<cutlass::epilogue::thread::Identity>>>(
                                m, n, k, label.c_str());
                          },
                          Swapped};
  }
};

}  // namespace cusync::examples

#define CUSYNC_REGISTER_STOCK_GEMM(...)                                                   \
  namespace {                                                                             \
  const ::cusync::examples::StockGemmRegistration stockRegistration{__VA_ARGS__::entry()}; \
  }
