// The hooked GEMV stage over packed weights: D = A x W^T for a few tokens, each block computing 16 output columns over
// the whole of K from W packed once in mma fragment order (packed_gemv_layout.h at 16 rows; the MLP's fastest
// few-token GEMV, packed_mma16_gemv_stage_kernel.cuh), TileN / 16 blocks per tile of the stage's policy. Hooked as the
// whole-rows stage (hooked_rows_mma_gemv_kernel.cuh): hooked_gemv_unit.cuh takes the unit and waits, each block of a
// tile counts its arrival once its columns are stored and the last to arrive posts the tile, so a chain swaps it in
// without changing a policy (the stage's parts are its column groups, Stage::setBlocksPerTile).
//
// Why: in the MLP (session 30, H200) packing the weights took the few-token GEMV chain from 75.5-95.5 us (GPT-3,
// M = 1-8, the whole-rows kernel this stage's sibling runs) to 70.5-71.9, 1.06-1.08x the one-pass-read floor.
//
// Waiting: a block needs A's whole rows [0, M) x [0, K), so it waits for every producer tile of A's row tile (for the
// output GEMM: the whole attention output), after its first weight share is in flight. A was written by other SMs
// during this launch: read from L2.
//
// No L2 prefetch of the weights before the wait: asking L2 for the slab's other shares, and for the slabs of the
// blocks that start later, gained nothing and cost 2.2-2.7 us at GPT-3 4 x 1024, where the prefetches competed with
// the QKV stage's stream (docs/BENCHMARKS.md, issue 14, sessions 33 and 35; removed in session 35).
//
// Posting, progress: as hooked_rows_mma_gemv_kernel.cuh (stores, block barrier, thread 0's fence and arrival; the
// last arrival posts; a block never waits for a block of its own stage). Device code; the host side is
// examples/gemm/hooked_gemv.cuh (PackedRows).
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/hooked_gemv_unit.cuh"
#include "cusync/packed_gemv_layout.h"
#include "cusync/packed_mma16_gemv_stage_kernel.cuh"  // kPacked16Gemv*, detail::mmaM16N8K16

namespace cusync {

template <class InputPolicy, class OutputPolicy, int kTileN, int kBlocksPerSm>
__global__ void __launch_bounds__(kPacked16GemvThreads, kBlocksPerSm)
    hookedPackedGemvKernel(const __grid_constant__ HookedGemvParams<InputPolicy> p) {
  constexpr int kRows = kPacked16GemvRows;
  constexpr int kSteps = packedGemvShareK(kRows) / kPackedGemvStepK;  // 4
  static_assert(kTileN % kRows == 0, "whole 16-column groups per tile");
  static_assert(kPacked16GemvThreads == kGemvThreads, "the shared unit steps count the GEMV stages' threads");
  // One token tile: the sums hold 8 tokens, and the stage is launched for at most kGemvMaxTokens.
  static_assert(kGemvMaxTokens <= kPacked16GemvTokensPerTile, "the decode GEMV's tokens fit one token tile");
  const GemvUnitStart start = detail::startGemvUnit(p);
  const WorkUnit unit = start.unit;  // part: the column group of the tile
  const TileCoord tile = unit.ticket.tile;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, g = lane / 4, t = lane % 4;
  const int k = p.k, shares = packedGemvShares(k, kRows);
  const std::uint32_t firstColumn = tile.x * std::uint32_t(kTileN) + unit.part * std::uint32_t(kRows);
  const uint4* const packed =
      reinterpret_cast<const uint4*>(p.w) + std::size_t(firstColumn / kRows) * shares * 256 + lane;
  const __half* const tokenBase = p.a + std::size_t(g) * std::size_t(k) + 8 * t;
  const int kLeft = g < p.m ? k - 8 * t : 0;
  uint4 weights[2 * kSteps], tokens[kSteps];
  const auto loadWeights = [&](int share) {
#pragma unroll
    for (int i = 0; i < 2 * kSteps; ++i) weights[i] = __ldcs(packed + (std::size_t(share) * 8 + i) * 32);
  };
  const auto loadTokens = [&](int share) {
#pragma unroll
    for (int q = 0; q < kSteps; ++q) {
      const int at = packedGemvShareK(kRows) * share + kPackedGemvStepK * q;
      tokens[q] = at < kLeft ? __ldcg(reinterpret_cast<const uint4*>(tokenBase + at)) : uint4{};
    }
  };

  int share = warp;
  if (share < shares) loadWeights(share);
  detail::waitForGemvInput(p, unit, GemvKRange{0, p.k});
  __syncthreads();  // warp 0's acquire, for every thread's reads of A
  std::uint64_t traceWaited = 0;
  if (p.trace != nullptr && tid == 0) traceWaited = detail::globalTimerNs();
  float acc[4] = {};
  for (; share < shares; share += kPacked16GemvWarps) {
    loadTokens(share);
#pragma unroll
    for (int q = 0; q < kSteps; ++q) {
      const uint4 rowG = weights[2 * q], rowG8 = weights[2 * q + 1], x = tokens[q];
      detail::mmaM16N8K16(acc, rowG.x, rowG8.x, rowG.y, rowG8.y, x.x, x.y);
      detail::mmaM16N8K16(acc, rowG.z, rowG8.z, rowG.w, rowG8.w, x.z, x.w);
    }
    if (share + kPacked16GemvWarps < shares) loadWeights(share + kPacked16GemvWarps);
  }

  __shared__ float warpSums[kPacked16GemvWarps][kPacked16GemvTokensPerTile][kRows];
  warpSums[warp][2 * t][g] = acc[0];
  warpSums[warp][2 * t + 1][g] = acc[1];
  warpSums[warp][2 * t][g + 8] = acc[2];
  warpSums[warp][2 * t + 1][g + 8] = acc[3];
  detail::storeColumnsAndArrive<OutputPolicy, kPacked16GemvWarps, kRows>(p, unit, warpSums, firstColumn,
                                                                          start.traceStart, traceWaited);
}

}  // namespace cusync
