// The CUTLASS building blocks of an sm_80 multistage fp16 GEMM in the layout cusync's GEMMs use: A row-major [M,K]
// and B stored N x K (both K-major, "TN"), fp32 accumulation. Device and host; needs CUTLASS's headers.
//
// These are CUTLASS 3.x's own Ampere pieces, chosen as CUTLASS's sm80 unit tests configure them for fp16 TN: the
// SM80_16x8x16 tensor-core MMA atom on a 2x2 warp grid, 16-byte cp.async global->shared copies, ldmatrix
// shared->register copies and swizzled shared layouts that make both conflict-free. CUTLASS has no
// CollectiveBuilder for sm80, so the collective is assembled here by hand.
#pragma once

#include <cute/atom/copy_atom.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/tensor.hpp>
#include <cutlass/gemm/collective/collective_mma.hpp>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/numeric_types.h>

namespace cusync::cutlass_sm80 {

// Shared-memory atom and global->shared copy of one K-major fp16 operand tile of width TileK, for 128 threads.
// cp.async.cg (CACHEGLOBAL): 16-byte copies that bypass L1. Operands are streamed once per block, and A may be
// another stage's output that this block only just acquired: reading it through L2 only keeps L1 out of the
// visibility argument entirely.
template <int TileK>
struct KMajorHalfOperand;

template <>
struct KMajorHalfOperand<32> {
  using SmemLayoutAtom =
      decltype(cute::composition(cute::Swizzle<2, 3, 3>{},
                                 cute::Layout<cute::Shape<cute::_8, cute::_32>, cute::Stride<cute::_32, cute::_1>>{}));
  // 32 rows x 4 threads per row, 8 halves (16 bytes) per thread: one 32 x 32 pass.
  using GmemTiledCopy = decltype(cute::make_tiled_copy(
      cute::Copy_Atom<cute::SM80_CP_ASYNC_CACHEGLOBAL<cute::uint128_t>, cutlass::half_t>{},
      cute::Layout<cute::Shape<cute::_32, cute::_4>, cute::Stride<cute::_4, cute::_1>>{},
      cute::Layout<cute::Shape<cute::_1, cute::_8>>{}));
};

template <>
struct KMajorHalfOperand<64> {
  using SmemLayoutAtom =
      decltype(cute::composition(cute::Swizzle<3, 3, 3>{},
                                 cute::Layout<cute::Shape<cute::_8, cute::_64>, cute::Stride<cute::_64, cute::_1>>{}));
  // 16 rows x 8 threads per row, 8 halves per thread: one 16 x 64 pass.
  using GmemTiledCopy = decltype(cute::make_tiled_copy(
      cute::Copy_Atom<cute::SM80_CP_ASYNC_CACHEGLOBAL<cute::uint128_t>, cutlass::half_t>{},
      cute::Layout<cute::Shape<cute::_16, cute::_8>, cute::Stride<cute::_8, cute::_1>>{},
      cute::Layout<cute::Shape<cute::_1, cute::_8>>{}));
};

// CUTLASS's predicated sm80 multistage collective (MainloopSm80CpAsync: M, N and K residues are masked, so M
// need not be a multiple of TileM) for D = A * B^T with fp16 operands and fp32 accumulators.
template <int TileM, int TileN, int TileK, int Stages>
struct Fp16TnMainloopConfig {
  static_assert(TileM % 32 == 0 && TileN % 32 == 0, "the 2x2-warp MMA covers 32 x 32 per step");
  using TileShape = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::Int<TileK>>;
  // 2x2 warps; the 32x32x16 permutation lets one ldmatrix.x4 feed two MMAs along N.
  using TiledMma = cute::TiledMMA<cute::MMA_Atom<cute::SM80_16x8x16_F32F16F16F32_TN>,
                                  cute::Layout<cute::Shape<cute::_2, cute::_2, cute::_1>>,
                                  cute::Tile<cute::_32, cute::_32, cute::_16>>;
  using Operand = KMajorHalfOperand<TileK>;
  using SmemCopyAtom = cute::Copy_Atom<cute::SM75_U32x4_LDSM_N, cutlass::half_t>;
  using StrideA = cute::Stride<int64_t, cute::_1, int64_t>;  // [M, K, L], K contiguous
  using StrideB = cute::Stride<int64_t, cute::_1, int64_t>;  // [N, K, L], K contiguous

  using CollectiveMainloop = cutlass::gemm::collective::CollectiveMma<
      cutlass::gemm::MainloopSm80CpAsync<Stages>, TileShape, cutlass::half_t, StrideA, cutlass::half_t, StrideB,
      TiledMma, typename Operand::GmemTiledCopy, typename Operand::SmemLayoutAtom, SmemCopyAtom, cute::identity,
      typename Operand::GmemTiledCopy, typename Operand::SmemLayoutAtom, SmemCopyAtom, cute::identity>;
};

}  // namespace cusync::cutlass_sm80
