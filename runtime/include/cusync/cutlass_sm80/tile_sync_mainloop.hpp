// CUTLASS's predicated sm80 multistage mainloop (CollectiveMma<MainloopSm80CpAsync>) with a wait before the
// cp.async issue of each A k-tile another stage produces. Device code; needs CUTLASS's headers.
//
// Why CUTLASS 3.x's collective rather than 2.x's MmaMultistage: it is the same CuTe vocabulary as the sm90 hooked
// GEMM (problem shape, strides, block coordinates, DefaultEpilogue over the same TiledMma), and its pieces are
// plain types (TiledMma, tiled copies, swizzled shared layouts) a kernel can use directly, where 2.x's iterators
// and warp-level MMA are wired into one class hierarchy. Neither offers a hook before the load of A, so the
// pipeline of the collective's operator() is re-expressed here over its own types, with the wait inserted; the
// shared layouts, copies, MMA and the order of cp.async groups, waits and barriers are CUTLASS's.
//
// Where the wait goes, and why there: cp.async runs Stages - 1 k-tiles ahead of the MMA, so the data a k-tile's
// MMA reads was fetched long before. The wait must come before the cp.async of that k-tile's A, not before its MMA.
#pragma once

#include <cute/algorithm/functional.hpp>
#include <cute/algorithm/gemm.hpp>
#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/gemm/collective/collective_mma.hpp>

#include "cusync/cutlass/load_order.hpp"

namespace cusync::cutlass_sm80 {

using cutlass_sm90::LoadOrder;

template <class BaseMainloop>
struct TileSyncMainloop : BaseMainloop {
  using typename BaseMainloop::DispatchPolicy;
  using typename BaseMainloop::TileShape;
  using typename BaseMainloop::TiledMma;
  using typename BaseMainloop::SmemLayoutA;
  using typename BaseMainloop::SmemLayoutB;
  using typename BaseMainloop::GmemTiledCopyA;
  using typename BaseMainloop::GmemTiledCopyB;
  using typename BaseMainloop::SmemCopyAtomA;
  using typename BaseMainloop::SmemCopyAtomB;
  using typename BaseMainloop::TransformA;
  using typename BaseMainloop::TransformB;
  using typename BaseMainloop::SharedStorage;
  using typename BaseMainloop::Params;
  static constexpr int Stages = DispatchPolicy::Stages;
  static constexpr int kTileK = cute::size<2>(TileShape{});

  // accum += A-tile * B-tile^T over the block's k-tiles. gA: (BLK_M, BLK_K, k), gB: (BLK_N, BLK_K, k);
  // residue_mnk as CUTLASS's kernels compute it (rows and columns left from the tile's origin, K - BLK_K * k <= 0).
  // `waitForA(columnBegin, columnEnd)` is block-collective (every thread calls it, it may barrier); it is called
  // before each k-tile's A is issued, with the columns of A that k-tile reads.
  //
  // LoadOrder::WeightsFirst ("R"): B never waits, so in the prologue the B tiles of all Stages - 1 prefetched
  // k-tiles are issued before the first wait, and in the steady state each k-tile's B goes before its wait. The
  // cp.async groups stay correct: the first group then holds the prologue's B tiles and the first A tile, so
  // waiting for group i still means "k-tile i's A and B have landed".
  template <class FrgTensorD, class TensorA, class TensorB, class ResidueMNK, class WaitForA>
  CUTLASS_DEVICE void multiply(FrgTensorD& accum, TensorA gA, TensorB gB, int k_tile_count, ResidueMNK residue_mnk,
                               int thread_idx, char* smem_buf, WaitForA& waitForA, LoadOrder order) {
    using namespace cute;
    static_assert(is_rmem<FrgTensorD>::value, "accumulators must be in registers");
    static_assert(is_gmem<TensorA>::value && is_gmem<TensorB>::value, "A and B must be in global memory");

    SharedStorage& storage = *reinterpret_cast<SharedStorage*>(smem_buf);
    Tensor sA = make_tensor(make_smem_ptr(storage.smem_a.data()), SmemLayoutA{});  // (BLK_M,BLK_K,PIPE)
    Tensor sB = make_tensor(make_smem_ptr(storage.smem_b.data()), SmemLayoutB{});  // (BLK_N,BLK_K,PIPE)

    // The partial k-tile (K not a multiple of BLK_K) is read first: shift so that it is k-tile 0, whose columns
    // below -residue_k are masked; all later k-tiles are then full and aligned.
    const int residue_k = get<2>(residue_mnk);
    gA = cute::domain_offset(make_coord(0, residue_k, 0), gA);
    gB = cute::domain_offset(make_coord(0, residue_k, 0), gB);

    GmemTiledCopyA gmem_tiled_copy_A;
    GmemTiledCopyB gmem_tiled_copy_B;
    auto gmem_thr_copy_A = gmem_tiled_copy_A.get_slice(thread_idx);
    auto gmem_thr_copy_B = gmem_tiled_copy_B.get_slice(thread_idx);
    Tensor tAgA = gmem_thr_copy_A.partition_S(gA);  // (ACPY,ACPY_M,ACPY_K,k)
    Tensor tAsA = gmem_thr_copy_A.partition_D(sA);  // (ACPY,ACPY_M,ACPY_K,PIPE)
    Tensor tBgB = gmem_thr_copy_B.partition_S(gB);  // (BCPY,BCPY_N,BCPY_K,k)
    Tensor tBsB = gmem_thr_copy_B.partition_D(sB);  // (BCPY,BCPY_N,BCPY_K,PIPE)

    // Row predicates: rows of the tile beyond M (N for B) are never loaded; their shared memory stays zero.
    Tensor tApA = make_tensor<bool>(make_shape(size<1>(tAsA), size<2>(tAsA)), Stride<_1, _0>{});
    Tensor tBpB = make_tensor<bool>(make_shape(size<1>(tBsB), size<2>(tBsB)), Stride<_1, _0>{});
    Tensor cA = make_identity_tensor(make_shape(size<0>(sA), size<1>(sA)));  // (BLK_M,BLK_K) -> (m,k)
    Tensor cB = make_identity_tensor(make_shape(size<0>(sB), size<1>(sB)));  // (BLK_N,BLK_K) -> (n,k)
    Tensor tAcA = gmem_thr_copy_A.partition_S(cA);
    Tensor tBcB = gmem_thr_copy_B.partition_S(cB);
    CUTLASS_PRAGMA_UNROLL
    for (int m = 0; m < size<0>(tApA); ++m) tApA(m, 0) = get<0>(tAcA(0, m, 0)) < get<0>(residue_mnk);
    CUTLASS_PRAGMA_UNROLL
    for (int n = 0; n < size<0>(tBpB); ++n) tBpB(n, 0) = get<0>(tBcB(0, n, 0)) < get<1>(residue_mnk);

    clear(tAsA);
    clear(tBsB);

    // Columns of A that k-tile `k` reads (k-tile 0 is the partial one).
    auto waitForKTile = [&](int k) {
      const int begin = k * kTileK + residue_k;
      waitForA(static_cast<std::uint32_t>(begin < 0 ? 0 : begin), static_cast<std::uint32_t>(begin + kTileK));
    };
    // Issues the cp.async of one k-tile of A or B into pipe `pipe`; k-tile 0 masks its columns below -residue_k.
    auto issueA = [&](int k, int pipe) {
      if (k == 0) {
        CUTLASS_PRAGMA_UNROLL
        for (int kk = 0; kk < size<2>(tAsA); ++kk)
          if (get<1>(tAcA(0, 0, kk)) >= -residue_k)
            copy_if(gmem_tiled_copy_A, tApA(_, kk), tAgA(_, _, kk, 0), tAsA(_, _, kk, pipe));
      } else {
        copy_if(gmem_tiled_copy_A, tApA, tAgA(_, _, _, k), tAsA(_, _, _, pipe));
      }
    };
    auto issueB = [&](int k, int pipe) {
      if (k == 0) {
        CUTLASS_PRAGMA_UNROLL
        for (int kk = 0; kk < size<2>(tBsB); ++kk)
          if (get<1>(tBcB(0, 0, kk)) >= -residue_k)
            copy_if(gmem_tiled_copy_B, tBpB(_, kk), tBgB(_, _, kk, 0), tBsB(_, _, kk, pipe));
      } else {
        copy_if(gmem_tiled_copy_B, tBpB, tBgB(_, _, _, k), tBsB(_, _, _, pipe));
      }
    };

    // PROLOGUE: k-tiles 0 .. Stages-2 into pipes 0 .. Stages-2, one cp.async group each (empty past the last
    // k-tile, so that the group count the main loop waits on stays CUTLASS's).
    const int k_tiles = k_tile_count;
    if (order == LoadOrder::WeightsFirst) {
      CUTLASS_PRAGMA_UNROLL
      for (int pipe = 0; pipe < Stages - 1; ++pipe)
        if (pipe < k_tiles) issueB(pipe, pipe);
    }
    CUTLASS_PRAGMA_UNROLL
    for (int pipe = 0; pipe < Stages - 1; ++pipe) {
      if (pipe < k_tiles) {
        waitForKTile(pipe);
        issueA(pipe, pipe);
        if (order != LoadOrder::WeightsFirst) issueB(pipe, pipe);
      }
      cp_async_fence();
    }
    int k_tile_next = Stages - 1;

    // MMA partitioning and shared->register copies (ldmatrix), as CUTLASS's collective.
    TiledMma tiled_mma;
    auto thr_mma = tiled_mma.get_thread_slice(thread_idx);
    Tensor tCrA = thr_mma.partition_fragment_A(sA(_, _, 0));  // (MMA,MMA_M,MMA_K)
    Tensor tCrB = thr_mma.partition_fragment_B(sB(_, _, 0));  // (MMA,MMA_N,MMA_K)
    CUTE_STATIC_ASSERT_V(size<1>(tCrA) == size<1>(accum));
    CUTE_STATIC_ASSERT_V(size<1>(tCrB) == size<2>(accum));
    auto smem_tiled_copy_A = make_tiled_copy_A(SmemCopyAtomA{}, tiled_mma);
    auto smem_thr_copy_A = smem_tiled_copy_A.get_thread_slice(thread_idx);
    Tensor tCsA = smem_thr_copy_A.partition_S(sA);            // (CPY,CPY_M,CPY_K,PIPE)
    Tensor tCrA_copy_view = smem_thr_copy_A.retile_D(tCrA);  // (CPY,CPY_M,CPY_K)
    auto smem_tiled_copy_B = make_tiled_copy_B(SmemCopyAtomB{}, tiled_mma);
    auto smem_thr_copy_B = smem_tiled_copy_B.get_thread_slice(thread_idx);
    Tensor tCsB = smem_thr_copy_B.partition_S(sB);            // (CPY,CPY_N,CPY_K,PIPE)
    Tensor tCrB_copy_view = smem_thr_copy_B.retile_D(tCrB);  // (CPY,CPY_N,CPY_K)

    int smem_pipe_read = 0;
    int smem_pipe_write = Stages - 1;
    Tensor tCsA_p = tCsA(_, _, _, smem_pipe_read);
    Tensor tCsB_p = tCsB(_, _, _, smem_pipe_read);
    auto K_BLOCK_MAX = size<2>(tCrA);

    if (K_BLOCK_MAX > 1) {
      cp_async_wait<Stages - 2>();  // k-tile 0 has landed
      __syncthreads();
      copy(smem_tiled_copy_A, tCsA_p(_, _, Int<0>{}), tCrA_copy_view(_, _, Int<0>{}));
      copy(smem_tiled_copy_B, tCsB_p(_, _, Int<0>{}), tCrB_copy_view(_, _, Int<0>{}));
    }

    // MAIN LOOP: one iteration per k-tile computed; at its first k-block the k-tile Stages-1 ahead is issued.
    int remaining = k_tiles - (Stages - 1);  // k-tiles not yet issued
    CUTLASS_PRAGMA_NO_UNROLL
    for (; remaining > -(Stages - 1); --remaining) {
      for_each(make_int_sequence<K_BLOCK_MAX>{}, [&](auto k_block) {
        if (k_block == K_BLOCK_MAX - 1) {
          tCsA_p = tCsA(_, _, _, smem_pipe_read);
          tCsB_p = tCsB(_, _, _, smem_pipe_read);
          cp_async_wait<Stages - 2>();
          __syncthreads();
        }
        auto k_block_next = (k_block + Int<1>{}) % K_BLOCK_MAX;
        copy(smem_tiled_copy_A, tCsA_p(_, _, k_block_next), tCrA_copy_view(_, _, k_block_next));
        copy(smem_tiled_copy_B, tCsB_p(_, _, k_block_next), tCrB_copy_view(_, _, k_block_next));
        if (k_block == 0) {
          if (remaining > 0) {
            if (order == LoadOrder::WeightsFirst) issueB(k_tile_next, smem_pipe_write);
            waitForKTile(k_tile_next);  // uniform across the block: `remaining` is
            issueA(k_tile_next, smem_pipe_write);
            if (order != LoadOrder::WeightsFirst) issueB(k_tile_next, smem_pipe_write);
          }
          cp_async_fence();
          ++k_tile_next;
          smem_pipe_write = smem_pipe_read;
          smem_pipe_read = smem_pipe_read + 1 == Stages ? 0 : smem_pipe_read + 1;
        }
        cute::transform(tCrA(_, _, k_block), TransformA{});
        cute::transform(tCrB(_, _, k_block), TransformB{});
        cute::gemm(tiled_mma, accum, tCrA(_, _, k_block), tCrB(_, _, k_block), accum);
      });
    }

    cp_async_wait<0>();
    __syncthreads();
  }
};

}  // namespace cusync::cutlass_sm80
