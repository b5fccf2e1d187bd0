// The GEMV of 1-8 tokens on tensor cores over packed weights, a launch per stage: each block owns 8 weight rows (8
// outputs, or 4 paired SwiGLU outputs) over the whole of K, as the whole-rows tensor-core GEMV does
// (row_mma_gemv_stage_kernel.cuh), but reads W from a copy packed once in mma fragment order (packed_gemv_layout.h,
// packed_gemv_pack.cuh): every lane loads its own B fragments with coalesced 16-byte loads, and its token's A
// fragments straight from row-major activations beside them; nothing passes through shared memory until the warps'
// sums meet at the end. Device code; host side in examples/mlp/skinny_mlp.cuh (configuration
// gemv_packed_mma_p<blocks per SM>).
//
// Why: the whole-rows kernel keeps W row-major and transposes every piece of weights and tokens through each warp's
// shared memory. At 8 tokens that moves about 6 bytes through L1/shared memory per weight byte (global loads of
// weights and tokens, then both written and read back), and ncu put its L1 throughput (76-77%) above its DRAM (58%)
// and L2 (68-69%) throughputs (session 30, calls 1-2, GPT-3 GEMM 1); here it is 2 bytes. Measured alone
// (bench/mlp/few_token_gemv_probe.cu, session 30 call 2, H200, us, GPT-3 GEMM 1 / GEMM 2 / LLaMA GEMM 1 / GEMM 2):
// m = 8: 37.0 / 37.1 / 23.2 / 12.1 against the whole-rows kernel's 43.3 / 45.1 / 29.5 / 17.0 and cuBLAS's 43.2 / 40.9 /
// 26.7 / (8.7, its 45 MB of weights L2-resident across the probe's replays); m = 1: 36.1 / 36.4 / 22.7 / 11.9 against
// 37.5 / 37.6 / 24.7 / 13.6. One-pass read of the same weights: 35.1 / 35.1 / 21.6 / 11.4.
//
// Synchronization: as the whole-rows GEMVs. Stage 1 reads every stage-0 output, so it waits for the whole first grid
// (griddepcontrol.wait, SkinnyChainParams::secondWaitsForWholeGrid) once its first weight share is in flight, or the
// launches are stream-ordered. Progress: every stage-0 block triggers the dependent launch first and waits for nothing.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/block_trace.cuh"
#include "cusync/fast_silu.cuh"
#include "cusync/gelu.cuh"
#include "cusync/mma_gemv_fragments.cuh"
#include "cusync/packed_gemv_layout.h"
#include "cusync/row_gemv_stage_kernel.cuh"  // rowGemvOutputsPerBlock
#include "cusync/skinny_chain_kernel.cuh"

namespace cusync {

inline constexpr int kPackedGemvWarps = 8;
inline constexpr int kPackedGemvThreads = kPackedGemvWarps * 32;
inline constexpr int kPackedGemvMaxTokens = 8;  // mma A rows that carry tokens (of 16)

// p.gemms[s].w holds W packed (packed_gemv_layout.h, pairing included), not W.
template <class Policy, int kBlocksPerSm>
__global__ void __launch_bounds__(kPackedGemvThreads, kBlocksPerSm)
    packedMmaGemvStageKernel(const __grid_constant__ SkinnyChainParams<Policy> p, std::uint32_t s) {
  constexpr int kRows = kPackedGemvRows;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, g = lane / 4, t = lane % 4;
  // Thread 0's times for the block trace, kept in shared memory: 80 registers (3 blocks per SM) hold the loop, and
  // values live across it spilled.
  __shared__ std::uint64_t traceTimes[2];
  const bool tracing = p.traces[s] != nullptr && tid == 0;
  if (tracing) traceTimes[0] = detail::globalTimerNs();
  triggerDependentLaunch();
  const SkinnyGemm& gemm = p.gemms[s];
  const bool paired = gemm.activation == SkinnyActivation::PairedSwiGlu;
  const int k = gemm.k, shares = packedGemvShares(k);
  const uint4* const packed = reinterpret_cast<const uint4*>(gemm.w) + std::size_t(blockIdx.x) * shares * 256 + lane;
  // Lane (g, t) carries token g (A row g) at k = 256 share + 32 q + 8 t; rows g >= m multiply zeros. Its loads stop
  // at kLeft (0 without a token): one register for K, t and m, as the loop needs all 80 at 3 blocks per SM.
  const __half* const tokenBase = gemm.a + std::size_t(g) * std::size_t(k) + 8 * t;
  const int kLeft = g < p.m ? k - 8 * t : 0;
  uint4 weights[8], tokens[8];
  const auto loadWeights = [&](int share) {
#pragma unroll
    for (int q = 0; q < 8; ++q) weights[q] = __ldcs(packed + (std::size_t(share) * 8 + q) * 32);
  };
  const auto loadTokens = [&](int share) {
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      const int at = kPackedGemvShareK * share + kPackedGemvStepK * q;
      // Both stages' tokens through L1 (detail::loadTokenPiece says why that is sound for stage 1); one load form
      // for both keeps the loop free of a per-stage branch.
      tokens[q] = at < kLeft ? __ldca(reinterpret_cast<const uint4*>(tokenBase + at)) : uint4{};
    }
  };

  // Warp w multiplies shares w, w + 8, ...; its first share's weights load before the wait (they depend on nothing).
  int share = warp;
  if (share < shares) loadWeights(share);
  // Stage 1 reads stage 0's outputs: its blocks, started early by PDL, wait for the whole first grid.
  if (s == 1 && p.secondWaitsForWholeGrid) waitForPriorGrids();
  if (tracing) traceTimes[1] = detail::globalTimerNs();
  float acc[4] = {};
  for (; share < shares; share += kPackedGemvWarps) {
    loadTokens(share);
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      detail::mmaTokensByRows(acc, tokens[q].x, tokens[q].y, weights[q].x, weights[q].y);
      detail::mmaTokensByRows(acc, tokens[q].z, tokens[q].w, weights[q].z, weights[q].w);
    }
    if (share + kPackedGemvWarps < shares) loadWeights(share + kPackedGemvWarps);
  }

  // acc[0..1]: token g, rows 2t and 2t + 1 (c2, c3 belong to the empty token rows 8-15).
  __shared__ float warpSums[kPackedGemvWarps][kPackedGemvMaxTokens][kRows];
  warpSums[warp][g][2 * t] = acc[0];
  warpSums[warp][g][2 * t + 1] = acc[1];
  __syncthreads();
  // Thread i < 64 sums row i % 8 for token i / 8.
  const int outToken = tid / kRows, row = tid % kRows;
  const auto rowSum = [&](int r) {
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < kPackedGemvWarps; ++w) sum += warpSums[w][outToken][r];
    return sum;
  };
  const int outputs = rowGemvOutputsPerBlock<kRows>(gemm.activation);
  if (outToken < p.m && row < outputs) {
    float y = rowSum(row);
    if (paired)
      y = fastSilu(y) * rowSum(row + kRows / 2);
    else if (gemm.activation == SkinnyActivation::Gelu)
      y = geluFast(y);
    const std::size_t width = paired ? std::size_t(gemm.n / 2) : std::size_t(gemm.n);  // D's row length
    gemm.d[std::size_t(outToken) * width + blockIdx.x * std::uint32_t(outputs) + std::uint32_t(row)] =
        __float2half(y);
  }
  if (p.traces[s] != nullptr && tid == 0) recordBlockTrace(p.traces[s], s, blockIdx.x, traceTimes[0], traceTimes[1]);
}

}  // namespace cusync
