// The GEMV of 1-16 tokens on tensor cores over packed weights, a launch per stage: each block owns 16 weight rows (16
// outputs, or 8 paired SwiGLU outputs) over the whole of K, as the whole-rows tensor-core GEMV does
// (row_mma_gemv_stage_kernel.cuh), but reads W from a copy packed once in mma fragment order (packed_gemv_layout.h,
// packed_gemv_pack.cuh): every lane loads its own A fragments (16 weight rows) with coalesced 16-byte loads and its
// token's B fragments (8 token columns) straight from row-major activations beside them; nothing passes through
// shared memory until the warps' sums meet at the end. Device code; host side in examples/mlp/skinny_mlp.cuh
// (configuration gemv_packed_mma16_p<blocks per SM>).
//
// Why packed: the whole-rows kernel keeps W row-major and transposes every piece of weights and tokens through each
// warp's shared memory. At 8 tokens that moves about 6 bytes through L1/shared memory per weight byte, and ncu put its
// L1 throughput (76-77%) above its DRAM (58%) and L2 (68-69%) throughputs; loading fragments straight from row-major W
// (8 rows x 64 bytes per instruction) streams at half the read rate (docs/BENCHMARKS.md, issue 12, session 30, calls
// 1-2). Why 16 rows with the weights as A: session 30's first packed kernel took 8 rows per block as the mma's B
// operand, so each mma multiplied 16 token rows of which 8 were empty and each lane loaded a token chunk per 16 bytes
// of weights; here lane (g, t) loads 16 bytes of rows g and g + 8 and one token chunk per step, halving the token loads
// and the mmas per weight byte, and a warp's 4 KB share (128 k of 16 rows) holds 8 weight and 4 token registers of 16
// bytes against 8 and 8. Chains at M = 1-8, H200 (session 30, call 6): GPT-3 70.0-71.3 us against the 8-row kernel's
// 71.5-74.8 and cuBLASLt's 85.0-85.8; LLaMA 33.6-34.6 against 36.2-38.8 and 42.5-43.2. At M = 9-16 (two token tiles,
// half shares; session 32, call 5): GPT-3 at 3 blocks per SM 72.9-73.6 against cuBLASLt's 86.4-87.2, LLaMA at 4
// 35.0-35.7 against 43.0-43.9.
//
// Fragments (packed_gemv_layout.h at 16 rows): A = {row g .x, row g + 8 .x, row g .y, row g + 8 .y} then .z/.w; B =
// {token g .x, .y} then .z/.w; C: c0, c1 = row g, tokens 2t, 2t + 1; c2, c3 = row g + 8. A paired SwiGLU block's
// rows 0-7 are the gate rows of its 8 outputs and rows 8-15 their up rows.
//
// Synchronization: as the whole-rows GEMVs. Stage 1 reads every stage-0 output, so it waits for the whole first grid
// (griddepcontrol.wait, SkinnyChainParams::secondWaitsForWholeGrid) once its first weight share is in flight, or the
// launches are stream-ordered. Progress: every stage-0 block triggers the dependent launch first and waits for nothing.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/block_trace.cuh"
#include "cusync/mma_gemv_fragments.cuh"
#include "cusync/packed_gemv_layout.h"
#include "cusync/row_gemv_outputs.cuh"
#include "cusync/skinny_chain_kernel.cuh"

namespace cusync {

inline constexpr int kPacked16GemvRows = 16;
inline constexpr int kPacked16GemvWarps = 8;
inline constexpr int kPacked16GemvThreads = kPacked16GemvWarps * 32;
inline constexpr int kPacked16GemvTokensPerTile = 8;  // mma B columns
inline constexpr int kPacked16GemvMaxTokenTiles = 2;
inline constexpr int kPacked16GemvMaxTokens = kPacked16GemvTokensPerTile * kPacked16GemvMaxTokenTiles;

// Token tiles (mma B operands of 8 tokens) of the instance that runs m tokens: 1 up to 8 tokens, 2 up to 16.
constexpr int packed16GemvTokenTiles(int m) {
  return (m + kPacked16GemvTokensPerTile - 1) / kPacked16GemvTokensPerTile;
}

// mma steps of 32 k whose weights and tokens a warp loads at once: a whole share (4) with one token tile, half of one
// with two. With two token tiles each lane holds 4 more token registers of 16 bytes per step and 4 more sums, which at
// 4 blocks of 256 threads (64 registers a thread) do not fit beside a whole share's weights (8 registers of 16 bytes);
// half a share fits in 64 with no spills. It keeps 2 KB per warp in flight, 48-64 KB per SM at 3-4 blocks, still
// above the read rate's latency product (about 35 KB per SM at 4.5 TB/s and 1 us). Session 32 (calls 3 and 5, H200),
// M = 9-16: whole shares at 3 blocks per SM took 80.6-83.9 us (GPT-3) and 43.5-44.1 (LLaMA, whose GEMM 2 of 512 blocks
// then needs two waves); half shares 72.9-73.6 and 37.3-38.0 at 3 blocks per SM, 74.1-75.8 and 35.0-35.7 at 4.
constexpr int packed16GemvStepsPerLoad(int tokenTiles) { return tokenTiles > 1 ? 2 : 4; }

// p.gemms[s].w holds W packed in 16-row blocks (packed_gemv_layout.h, pairing included), not W. kTokenTiles token
// tiles of 8 share each A fragment: tile j's B columns are tokens 8 j + g.
template <class Policy, int kBlocksPerSm, int kTokenTiles = 1>
__global__ void __launch_bounds__(kPacked16GemvThreads, kBlocksPerSm)
    packedMma16GemvStageKernel(const __grid_constant__ SkinnyChainParams<Policy> p, std::uint32_t s) {
  static_assert(kTokenTiles >= 1 && kTokenTiles <= kPacked16GemvMaxTokenTiles);
  // storeRowGemvOutputs gives each (token, row) output a thread.
  static_assert(kPacked16GemvTokensPerTile * kTokenTiles * kPacked16GemvRows <= kPacked16GemvThreads);
  constexpr int kRows = kPacked16GemvRows;
  constexpr int kSteps = packedGemvShareK(kRows) / kPackedGemvStepK;  // 4
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, g = lane / 4, t = lane % 4;
  __shared__ std::uint64_t traceTimes[2];  // thread 0's, for the block trace (kept out of the loop's registers)
  const bool tracing = p.traces[s] != nullptr && tid == 0;
  if (tracing) traceTimes[0] = detail::globalTimerNs();
  triggerDependentLaunch();
  const SkinnyGemm& gemm = p.gemms[s];
  const int k = gemm.k, shares = packedGemvShares(k, kRows);
  const uint4* const packed = reinterpret_cast<const uint4*>(gemm.w) + std::size_t(blockIdx.x) * shares * 256 + lane;
  // Lane (g, t) carries token 8 j + g of tile j (B column g; columns past m multiply zeros) at k = 128 share + 32 q +
  // 8 t; its loads stop at kLeft[j] (0 without a token).
  // (Tile j's tokens lie 8 k further per tile: one base pointer, so that the two-tile instance fits 3 blocks per SM.)
  const __half* const tokenBase = gemm.a + std::size_t(g) * std::size_t(k) + 8 * t;
  const std::size_t tileStride = std::size_t(kPacked16GemvTokensPerTile) * std::size_t(k);
  int kLeft[kTokenTiles];
#pragma unroll
  for (int j = 0; j < kTokenTiles; ++j) kLeft[j] = kPacked16GemvTokensPerTile * j + g < p.m ? k - 8 * t : 0;
  // A share's weights and tokens arrive in kLoads loads of kLoadSteps mma steps each (packed16GemvStepsPerLoad).
  constexpr int kLoadSteps = packed16GemvStepsPerLoad(kTokenTiles);
  constexpr int kLoads = kSteps / kLoadSteps;
  static_assert(kSteps % kLoadSteps == 0);
  uint4 weights[2 * kLoadSteps], tokens[kTokenTiles][kLoadSteps];
  const auto loadWeights = [&](int share, int load) {
#pragma unroll
    for (int i = 0; i < 2 * kLoadSteps; ++i)
      weights[i] = __ldcs(packed + (std::size_t(share) * 8 + 2 * kLoadSteps * load + i) * 32);
  };
  const auto loadTokens = [&](int share, int load) {
#pragma unroll
    for (int j = 0; j < kTokenTiles; ++j)
#pragma unroll
      for (int q = 0; q < kLoadSteps; ++q) {
        const int at = packedGemvShareK(kRows) * share + kPackedGemvStepK * (kLoadSteps * load + q);
        // Both stages' tokens through L1 (detail::loadTokenPiece says why that is sound for stage 1).
        tokens[j][q] = at < kLeft[j] ? __ldca(reinterpret_cast<const uint4*>(tokenBase + j * tileStride + at))
                                     : uint4{};
      }
  };

  int share = warp;
  if (share < shares) loadWeights(share, 0);
  if (s == 1 && p.secondWaitsForWholeGrid) waitForPriorGrids();
  if (tracing) traceTimes[1] = detail::globalTimerNs();
  float acc[kTokenTiles][4] = {};
  for (; share < shares; share += kPacked16GemvWarps) {
#pragma unroll
    for (int load = 0; load < kLoads; ++load) {
      loadTokens(share, load);
#pragma unroll
      for (int q = 0; q < kLoadSteps; ++q) {
        const uint4 rowG = weights[2 * q], rowG8 = weights[2 * q + 1];
#pragma unroll
        for (int j = 0; j < kTokenTiles; ++j) {
          const uint4 x = tokens[j][q];
          // 16 weight rows (A) by 8 token columns (B).
          detail::mmaM16N8K16(acc[j], rowG.x, rowG8.x, rowG.y, rowG8.y, x.x, x.y);
          detail::mmaM16N8K16(acc[j], rowG.z, rowG8.z, rowG.w, rowG8.w, x.z, x.w);
        }
      }
      // The next load's weights: the rest of this share, or the warp's next share.
      if (load + 1 < kLoads)
        loadWeights(share, load + 1);
      else if (share + kPacked16GemvWarps < shares)
        loadWeights(share + kPacked16GemvWarps, 0);
    }
  }

  __shared__ float warpSums[kPacked16GemvWarps][kPacked16GemvTokensPerTile * kTokenTiles][kRows];
#pragma unroll
  for (int j = 0; j < kTokenTiles; ++j) {
    const int token = kPacked16GemvTokensPerTile * j + 2 * t;
    warpSums[warp][token][g] = acc[j][0];
    warpSums[warp][token + 1][g] = acc[j][1];
    warpSums[warp][token][g + 8] = acc[j][2];
    warpSums[warp][token + 1][g + 8] = acc[j][3];
  }
  __syncthreads();
  detail::storeRowGemvOutputs<kPacked16GemvWarps>(warpSums, p.m, gemm);
  if (p.traces[s] != nullptr && tid == 0) recordBlockTrace(p.traces[s], s, blockIdx.x, traceTimes[0], traceTimes[1]);
}

}  // namespace cusync
