// The tensor-core whole-rows GEMV of 1-8 tokens with 16 weight rows per block, a launch per stage: as
// row_mma_gemv_stage_kernel.cuh (whole rows read along K in 4 KB block-wide pieces, warp-private transposes into
// mma.sync fragments, no split-K), but a block of 16 warps is two sets of 8, one per 8-row half, and the two warps
// of a 256-k share (warps s and s + 8) load and transpose that share's tokens once, each half of them, into one buffer
// both multiply from. Device code; host side in examples/mlp/skinny_mlp.cuh (configuration gemv_rows_mma16_p1).
//
// Why: in the 8-row block every block reads every token's chunk of each piece it multiplies, as many bytes as its
// weights at 8 tokens (8 rows x 4 KB of weights, 8 tokens x 4 KB), all through the same load pipes and registers;
// GPT-3's MLP took 92.7 us at M = 8 against 78.3 at M = 4 and LLaMA's 52.4 against 44.1 (session 29, call 4, H200).
// Sharing a share's tokens between two 8-row warps halves the token bytes per weight byte, and each thread holds
// half the token chunks. Two 16-warp blocks do not fit an SM's registers: one block per SM holds the same 16 warps
// as the 8-row kernel's two blocks (gemv_rows_mma_p2).
//
// Pair barriers: named barrier 1 + s (64 threads, warps s and s + 8) twice per piece: before the share's token
// buffer is rewritten (both warps' reads of the last piece done) and after (both halves of the tokens written).
// Both warps of a pair take the same pieces (a share past K skips them in both), so they meet the same barriers.
//
// Synchronization with the producer stage: as the 8-row kernel (stage 1 waits for the whole first grid once its
// first weight batch is in flight).
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/block_trace.cuh"
#include "cusync/fast_silu.cuh"
#include "cusync/gelu.cuh"
#include "cusync/mma_gemv_fragments.cuh"
#include "cusync/paired_weight_rows.h"
#include "cusync/row_gemv_stage_kernel.cuh"  // rowGemvOutputsPerBlock, detail::loadTokenPiece
#include "cusync/row_mma_gemv_products.cuh"  // kRowMmaGemvRows, kRowMmaGemvMaxTokens
#include "cusync/skinny_chain_kernel.cuh"

namespace cusync {

inline constexpr int kRowMmaGemvPairShares = 8;                          // 256-k shares of a 2048-k piece
inline constexpr int kRowMmaGemvPairWarps = 2 * kRowMmaGemvPairShares;  // a warp per (half, share)
inline constexpr int kRowMmaGemvPairThreads = kRowMmaGemvPairWarps * 32;
inline constexpr int kRowMmaGemvPairRows = 2 * kRowMmaGemvRows;  // weight rows per block

// Dynamic shared memory of a block of up to `tokens` tokens: per warp its 8 rows' transposed 512-byte shares, per
// share the transposed tokens, then the warps' sums [warp][token][row]. Host + device.
CUSYNC_HOST_DEVICE constexpr int rowMmaGemvPairSharedBytes(int tokens) {
  return kRowMmaGemvPairWarps * kRowMmaGemvRows * 512 + kRowMmaGemvPairShares * tokens * 512 +
         kRowMmaGemvPairWarps * kRowMmaGemvMaxTokens * kRowMmaGemvRows * int(sizeof(float));
}

namespace detail {

__device__ __forceinline__ void pairBarrier(int share) {
  asm volatile("bar.sync %0, %1;" ::"r"(1 + share), "n"(64) : "memory");
}

}  // namespace detail

template <class Policy, int kTokens>
__global__ void __launch_bounds__(kRowMmaGemvPairThreads, 1)
    rowMmaGemvPairStageKernel(const __grid_constant__ SkinnyChainParams<Policy> p, std::uint32_t s) {
  constexpr int kRows = kRowMmaGemvRows;  // per warp
  constexpr int kPiece = kRowMmaGemvPairShares * 256;
  // Token rows each warp of a pair loads: half 0 the first kMine, half 1 the rest.
  constexpr int kMine = (kTokens + 1) / 2;
  static_assert(kTokens >= 1 && kTokens <= kRowMmaGemvMaxTokens, "the mma's A tile carries up to 8 tokens");
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, g = lane / 4, t = lane % 4;
  const int half = warp / kRowMmaGemvPairShares, share = warp % kRowMmaGemvPairShares;
  BlockTrace* const trace = p.traces[s];
  std::uint64_t traceStart = 0, traceWaited = 0;  // thread 0's, for the block trace
  if (trace != nullptr && tid == 0) traceStart = detail::globalTimerNs();
  triggerDependentLaunch();
  const SkinnyGemm& gemm = p.gemms[s];
  const bool paired = gemm.activation == SkinnyActivation::PairedSwiGlu;
  const int k = gemm.k, m = p.m;
  // This warp's 8 rows: unpaired, rows [16 b + 8 half, + 8); paired, half 0 the gate rows of outputs [8 b, 8 b + 8)
  // and half 1 their up rows (each contiguous in W).
  const std::uint32_t firstRow = paired ? pairedWeightRow(blockIdx.x, std::uint32_t(half * kRows), kRows,
                                                          gemm.pairedGroupRows)
                                        : blockIdx.x * kRowMmaGemvPairRows + std::uint32_t(half * kRows);
  const int shareStart = share * 256;
  const __half* const rows = gemm.w + std::size_t(firstRow) * std::size_t(k) + shareStart + 8 * lane;
  const int pieces = shareStart < k ? (k - shareStart + kPiece - 1) / kPiece : 0;  // the pair's pieces

  extern __shared__ __align__(16) uint4 shared[];
  uint4* const mine = shared + warp * kRows * 32;  // this warp's 8 rows of the piece, transposed
  uint4* const tokens = shared + kRowMmaGemvPairWarps * kRows * 32 + share * kTokens * 32;  // the share's tokens
  auto* const warpSums = reinterpret_cast<float(*)[kRowMmaGemvMaxTokens][kRows]>(
      shared + kRowMmaGemvPairWarps * kRows * 32 + kRowMmaGemvPairShares * kTokens * 32);

  uint4 v[kRows], x[kMine];
  const auto loadPiece = [&](int piece) {
    const int offset = piece * kPiece + shareStart + 8 * lane;
    const bool inside = offset < k;
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      v[r] = inside ? __ldcs(reinterpret_cast<const uint4*>(rows + std::size_t(r) * std::size_t(k) +
                                                            std::size_t(piece) * kPiece))
                    : uint4{};
  };
  const auto loadTokens = [&](int piece) {
    const std::size_t offset = std::size_t(piece) * kPiece + shareStart + 8 * lane;
#pragma unroll
    for (int i = 0; i < kMine; ++i) {
      const int token = half * kMine + i;
      x[i] = token < m && offset < std::size_t(k)
                 ? detail::loadTokenPiece(gemm.a, s, std::size_t(token) * std::size_t(k) + offset)
                 : uint4{};
    }
  };

  const bool hasToken = g < m;  // lanes of token rows g >= m multiply zeros (A rows past the tokens)
  float acc[4] = {};
  if (pieces > 0) loadPiece(0);  // before the wait: the weights depend on nothing
  if (s == 1 && p.secondWaitsForWholeGrid) waitForPriorGrids();
  if (trace != nullptr && tid == 0) traceWaited = detail::globalTimerNs();
  if (pieces > 0) loadTokens(0);
  for (int piece = 0; piece < pieces; ++piece) {
    detail::pairBarrier(share);  // both warps' reads of the last piece's tokens (and this warp's rows) are done
#pragma unroll
    for (int r = 0; r < kRows; ++r) mine[detail::transposeSlot(r, lane)] = v[r];
#pragma unroll
    for (int i = 0; i < kMine; ++i) {
      const int token = half * kMine + i;
      if (token < m && token < kTokens) tokens[detail::transposeSlot(token, lane)] = x[i];
    }
    if (piece + 1 < pieces) {  // the next piece streams while this one is multiplied
      loadPiece(piece + 1);
      loadTokens(piece + 1);
    }
    detail::pairBarrier(share);  // both halves of the share's tokens written
#pragma unroll 2
    for (int j = 0; j < 8; ++j) {
      const uint4 w = mine[detail::transposeSlot(g, t + 4 * j)];
      const uint4 a = hasToken ? tokens[detail::transposeSlot(g, t + 4 * j)] : uint4{};
      detail::mmaTokensByRows(acc, a.x, a.y, w.x, w.y);
      detail::mmaTokensByRows(acc, a.z, a.w, w.z, w.w);
    }
  }
  // acc[0..1]: token g, rows 2t and 2t + 1 of this warp's half.
  warpSums[warp][g][2 * t] = acc[0];
  warpSums[warp][g][2 * t + 1] = acc[1];
  __syncthreads();

  // Thread i < 16 m: token i / 16, block row i % 16 (half row / 8), summed over that half's warps in warp order.
  const int outToken = tid / kRowMmaGemvPairRows, row = tid % kRowMmaGemvPairRows;
  const auto rowSum = [&](int blockRow) {
    const int h = blockRow / kRows, r = blockRow % kRows;
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < kRowMmaGemvPairShares; ++w) sum += warpSums[h * kRowMmaGemvPairShares + w][outToken][r];
    return sum;
  };
  const int outputs = rowGemvOutputsPerBlock<kRowMmaGemvPairRows>(gemm.activation);
  if (outToken < m && row < outputs) {
    float y = rowSum(row);
    if (paired)
      y = fastSilu(y) * rowSum(row + kRows);  // gate row `row` of half 0, its up row of half 1
    else if (gemm.activation == SkinnyActivation::Gelu)
      y = geluFast(y);
    const std::size_t width = paired ? std::size_t(gemm.n / 2) : std::size_t(gemm.n);  // D's row length
    gemm.d[std::size_t(outToken) * width + blockIdx.x * std::uint32_t(outputs) + std::uint32_t(row)] =
        __float2half(y);
  }
  if (trace != nullptr && tid == 0) recordBlockTrace(trace, s, blockIdx.x, traceStart, traceWaited);
}

}  // namespace cusync
