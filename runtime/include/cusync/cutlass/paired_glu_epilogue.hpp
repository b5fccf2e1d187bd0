// The SwiGLU of a gated MLP (LLaMA: S = silu(X Wgate^T) * (X Wup^T)) as the epilogue of the GEMM that computes both
// projections, so that SwiGLU is not a stage of its own. Device code; needs CUTLASS/CuTe.
//
// Why: with [gate | up] as two halves of GEMM 1's output, an S tile needs two GEMM-1 tiles far apart, a third
// kernel (or stage) reads both back from memory, and its consumer waits for both. Here the weight rows are paired
// per tile: GEMM-1 tile x holds gate columns [x*TileN/2, (x+1)*TileN/2) in its left half and the up columns of the
// same S columns in its right half (pairGateUpRows, swiglu_weight_pairing.h, lays the weights out so). Every
// accumulator of the left half and its partner TileN/2 columns to the right are then in the same thread's
// registers (the wgmma accumulator layout below), so the epilogue computes S's TileM x TileN/2 tile in registers
// and stores it: S tile x is GEMM-1 tile x, posted once.
//
// The stores are ordinary st.global (S is small next to the GEMM's operands: TileN/2 columns per K = H reduction).
// Posting them needs only the math threads' barrier and the release the kernels already do after an epilogue.
//
// The interface is the part of CUTLASS's sm90 collective epilogue that the fused-chain kernel uses (store,
// store_tail, the pipeline and storage types); the pipeline types are the base epilogue's, so the kernel can run
// this epilogue and a CUTLASS one with one set of pipelines. It loads no C and uses no shared memory.
#pragma once

#include <cstdint>
#include <utility>

#include <cuda_fp16.h>
#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>

#include "cusync/fast_silu.cuh"

namespace cusync::cutlass_sm90 {

template <class BaseEpilogue, class TileShape>
class PairedSiluGluEpilogue {
 public:
  // The fused-chain kernel builds its epilogue pipelines from these (and static_asserts they match the other
  // epilogue's); this epilogue never touches them.
  using LoadPipeline = typename BaseEpilogue::LoadPipeline;
  using LoadPipelineState = typename BaseEpilogue::LoadPipelineState;
  using StorePipeline = typename BaseEpilogue::StorePipeline;
  using StorePipelineState = typename BaseEpilogue::StorePipelineState;
  using PipelineStorage = typename BaseEpilogue::PipelineStorage;
  static constexpr bool RequiresTransactionBytes = BaseEpilogue::RequiresTransactionBytes;  // never used: no C
  using ElementC = void;
  using ElementD = cutlass::half_t;
  struct TensorStorage {};

  static constexpr int kTileColumns = int(cute::size<1>(TileShape{}));
  // A GEMM tile of TileN columns (gate | up) yields TileN / 2 output columns: the consumer's producer tile.
  static constexpr int OutputColumnsDivisor = 2;
  static constexpr int kOutputColumns = kTileColumns / OutputColumnsDivisor;
  static_assert(kTileColumns % 16 == 0, "gate and up halves of whole 8-column accumulator groups");

  struct Arguments {
    __half* s = nullptr;  // S [M, N/2], row-major; N = GEMM 1's columns (paired gate/up)
  };
  struct Params {
    __half* s = nullptr;
  };

  template <class ProblemShape>
  static Params to_underlying_arguments(ProblemShape const&, Arguments const& args, void*) {
    return Params{args.s};
  }
  // Empty when this epilogue can store the problem's tiles, else why not.
  template <class ProblemShape>
  static const char* why_not_implementable(ProblemShape const& problem, Arguments const& args) {
    if (args.s == nullptr) return "the SwiGLU epilogue needs S";
    if (cute::get<1>(problem) % kTileColumns != 0)
      return "a paired gate/up GEMM needs N (2 x the intermediate size) to be a multiple of the tile's N: every tile "
             "holds the gate and up columns of the same TileN/2 outputs";
    return nullptr;
  }
  CUTLASS_DEVICE static void prefetch_tma_descriptors(Params const&) {}

  CUTLASS_DEVICE PairedSiluGluEpilogue(Params const& params, TensorStorage&) : params_(params) {}

  // S's tile for the block's GEMM tile `tile_coord` = (m, n, _, l) from its accumulators.
  template <class ProblemShapeMNKL, class TileShapeMNK, class TileCoordMNKL, class Accumulators, class TiledMma>
  CUTLASS_DEVICE auto store(LoadPipeline, LoadPipelineState load_state, StorePipeline, StorePipelineState store_state,
                            ProblemShapeMNKL problem, TileShapeMNK, TileCoordMNKL tile_coord,
                            Accumulators const& accumulators, TiledMma tiled_mma, int thread_idx, TensorStorage&) {
    using namespace cute;
    // The sm90 wgmma accumulator of a 64 x N atom: per thread, values (2, 2, N/8): two adjacent columns, the row 8
    // further down, then one group per 8 columns; further modes repeat the atom along M. So the partner of value v
    // of the left half (its group index < N/16) is value v + N/4 of the same atom: 8-column groups N/16 further
    // right are N/2 columns further right. Checked here on the fragment's shape; the coordinates come from CuTe.
    using FragmentShape = decltype(shape(std::declval<Accumulators const&>()));
    constexpr int kAtomValues = int(decltype(size<0>(FragmentShape{}))::value);
    static_assert(kAtomValues == kTileColumns / 2 && int(decltype(size<2>(FragmentShape{}))::value) == 1,
                  "one wgmma atom spans the tile's N (values (2, 2, N/8) per atom)");
    constexpr int kPartnerOffset = kTileColumns / 4;
    auto coordinates = tiled_mma.get_thread_slice(thread_idx).partition_C(make_identity_tensor(take<0, 2>(TileShape{})));
    const int rows = int(get<0>(problem));
    const int outputColumns = int(get<1>(problem)) / OutputColumnsDivisor;
    const int firstRow = int(get<0>(tile_coord)) * int(size<0>(TileShape{}));
    const int firstColumn = int(get<1>(tile_coord)) * kOutputColumns;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < int(size(accumulators)); i += 2) {  // pairs of adjacent columns
      if (i % kAtomValues >= kAtomValues / 2) continue;     // an up value: read with its gate partner
      const int row = firstRow + int(get<0>(coordinates(i)));
      if (row >= rows) continue;
      const int column = firstColumn + int(get<1>(coordinates(i)));
      const float2 s{fastSilu(accumulators(i)) * accumulators(i + kPartnerOffset),
                     fastSilu(accumulators(i + 1)) * accumulators(i + 1 + kPartnerOffset)};
      *reinterpret_cast<__half2*>(params_.s + std::int64_t(row) * outputColumns + column) = __float22half2_rn(s);
    }
    return cute::make_tuple(load_state, store_state);
  }

  // Nothing outstanding: the stores are ordinary ones, ordered by the kernel's barrier before its post.
  CUTLASS_DEVICE auto store_tail(LoadPipeline, LoadPipelineState load_state, StorePipeline,
                                 StorePipelineState store_state) {
    return cute::make_tuple(load_state, store_state);
  }

 private:
  Params params_;
};

}  // namespace cusync::cutlass_sm90
