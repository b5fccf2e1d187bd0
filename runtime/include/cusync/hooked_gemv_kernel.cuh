// A tile-synchronized GEMM stage for a few tokens (M <= kGemvMaxTokens): D = A x W^T with the weights W [N, K]
// streamed through registers on the CUDA cores, one block per work unit (a TileN-column tile, or a split-K part of
// one). It is the hooked CUTLASS GEMM's counterpart where wgmma would pad M to 64 rows: it takes its unit from the
// stage's counter, waits for the producer tiles its k-range of A reads, and posts its tile under the stage's
// policy, so a chain can swap it in for the CUTLASS GEMM without changing a policy or a wait.
//
// Why its own kernel: in token generation the attention chain's GEMMs are weight streams (GPT-3's QKV GEMM reads
// 113 MB of weights for one token), where the hooked 64-row CUTLASS tiles lost 4-5 us each to cuBLAS's 8-token-wide
// tiles (docs/BENCHMARKS.md, issue 14, session 7 call 4), and the MLP's one-token GEMV of this shape streamed at
// 0.93-0.98 of a one-pass read (session 8). Its inner loop is that GEMV's: each warp owns kGemvRowsPerLoad whole
// rows at a time and loads 512 contiguous bytes of a row per instruction, kGemvUnroll loads per row in flight; the
// unit's slice of the tokens' activations is staged once in shared memory.
//
// Per unit:
//   1. every warp issues its first weight loads, which need nothing from the producer (weights before the wait);
//      a waiting stage may instead copy the unit's whole weight slab into shared memory (stageWeights), so that its
//      weights stream while the producer computes: in token generation the output GEMM's blocks are resident
//      during the attention stage, which reads little from memory;
//   2. warp 0 waits until the producer tiles covering A's rows [0, M) and the unit's k-range are posted
//      (warpWaitPostedColumns: acquire in every lane, the barrier extends it to the block);
//   3. the block stages the activations, streams its rows, and sums each row over its lanes;
//   4. split-K: each part writes its fp32 sums to its own slot; the part that arrives last adds the slots in part
//      order (the result does not depend on the order of arrival), resets the tile's arrival counter and finishes
//      the tile;
//   5. the tile is stored and, after a block barrier, posted by thread 0 (release).
// Steps 1-2 and 4-5, and the progress argument, are shared with the tensor-core stage (hooked_gemv_unit.cuh). Device
// code; the host side is examples/gemm/hooked_gemv.cuh.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/async_copy.cuh"
#include "cusync/gemv_stage_shape.h"
#include "cusync/half_dot.cuh"
#include "cusync/hooked_gemv_unit.cuh"

namespace cusync {

namespace detail {

// Rows [row0, row0 + kGemvRowsPerLoad) of W, steps [step, step + kGemvUnroll) of the unit's k-range, this lane's
// 16 bytes of each; zeros past the k-range (a short last step).
template <int kRows, int kUnroll>
__device__ __forceinline__ void loadGemvWeights(uint4 (&w)[kUnroll][kRows], const __half* rows, std::size_t k,
                                                int step, int kLength, int lane) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const bool valid = (step + u) * kGemvStep + 8 * lane < kLength;
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      w[u][r] = valid ? __ldcs(reinterpret_cast<const uint4*>(rows + std::size_t(r) * k + (step + u) * kGemvStep))
                      : make_uint4(0u, 0u, 0u, 0u);
  }
}

// The same batch from a unit's weight slab staged in shared memory ([row of the tile][k-range / 8] vectors).
template <int kRows, int kUnroll>
__device__ __forceinline__ void loadStagedGemvWeights(uint4 (&w)[kUnroll][kRows], const uint4* slab, int row0,
                                                      int vectorsPerRow, int step, int kLength, int lane) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const bool valid = (step + u) * kGemvStep + 8 * lane < kLength;
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      w[u][r] = valid ? slab[(row0 + r) * vectorsPerRow + (step + u) * 32 + lane] : make_uint4(0u, 0u, 0u, 0u);
  }
}

}  // namespace detail

// Blocks per SM the registers are budgeted for: kBlocksPerSm, or three quarters of it from three tokens on, where
// 4 x 3-4 fp32 accumulators and the loads in flight spill at 64 registers (4 blocks of 256 threads).
constexpr int gemvBlocksPerSmAt(int tokens, int blocksPerSm) {
  return tokens <= 2 || blocksPerSm < 4 ? blocksPerSm : (blocksPerSm * 3 + 3) / 4;
}

template <class InputPolicy, class OutputPolicy, int kTokens, int kTileN, int kBlocksPerSm>
__global__ void __launch_bounds__(kGemvThreads, gemvBlocksPerSmAt(kTokens, kBlocksPerSm))
    hookedGemvKernel(const __grid_constant__ HookedGemvParams<InputPolicy> p) {
  static_assert(kTokens >= 1 && kTokens <= kGemvMaxTokens, "the GEMV's token counts");
  static_assert(kTileN % (kGemvWarps * kGemvRowsPerLoad) == 0, "whole row groups per tile");
  constexpr int kRows = kGemvRowsPerLoad, kUnroll = kGemvUnroll;
  constexpr int kGroupRows = kGemvWarps * kRows;  // rows the block streams at once
  constexpr int kGroups = kTileN / kGroupRows;
  extern __shared__ uint4 dynamicShared[];  // activations [token][the unit's k-range / 8], then the staged slab
  uint4* const activations = dynamicShared;
  uint4* const slab = dynamicShared + p.activationVectors;  // [row of the tile][the unit's k-range / 8]
  __shared__ float tileSums[kTokens * kTileN];  // [token][column of the tile]

  const GemvUnitStart start = detail::startGemvUnit(p);
  const WorkUnit unit = start.unit;
  const std::uint64_t traceStart = start.traceStart;
  const TileCoord tile = unit.ticket.tile;
  const GemvKRange range = detail::kRangeOfGemvUnit(p, unit);
  const int kBegin = range.begin, kLength = range.length;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::size_t k = std::size_t(p.k);
  auto rowsOfGroup = [&](int group) {
    return p.w + (std::size_t(tile.x) * kTileN + group * kGroupRows + warp * kRows) * k + kBegin + 8 * lane;
  };

  // 1. The weights need nothing from the producer: the whole slab (staged) or the first loads are in flight during
  // the wait.
  const int vectorsPerRow = kLength / 8;
  const bool staged = p.stageWeights;
  uint4 w[kUnroll][kRows];
  if (staged) {
    const __half* unitRows = p.w + std::size_t(tile.x) * kTileN * k + kBegin;
    for (int i = threadIdx.x; i < kTileN * vectorsPerRow; i += kGemvThreads) {
      const int row = i / vectorsPerRow, j = i % vectorsPerRow;
      detail::copyAsync16(slab + i, unitRows + std::size_t(row) * k + 8 * j);
    }
    detail::commitAsyncCopies();
  } else {
    detail::loadGemvWeights<kRows, kUnroll>(w, rowsOfGroup(0), k, 0, kLength, lane);
  }

  // 2. A's producer tiles: rows [0, m), the unit's k-range.
  detail::waitForGemvInput(p, unit, range);
  __syncthreads();  // warp 0's acquire, for every thread's reads of A
  const std::uint64_t traceWaited = p.trace != nullptr ? detail::globalTimerNs() : 0;

  // 3. The tokens' k-range (from L2: A was written by other SMs during this launch's lifetime), then the rows.
  const int vectorsPerToken = kLength / 8;
  detail::stageGemvActivations<kTokens>(activations, vectorsPerToken, p.a, k, range, kGemvThreads);
  if (staged) detail::waitAsyncCopies();  // this thread's copies; the barrier makes every thread's visible
  __syncthreads();

  const int steps = (kLength + kGemvStep - 1) / kGemvStep;
#pragma unroll 1
  for (int group = 0; group < kGroups; ++group) {
    const __half* rows = rowsOfGroup(group);
    float acc[kRows][kTokens] = {};
#pragma unroll 1
    for (int step = 0; step < steps; step += kUnroll) {
      if (staged)
        detail::loadStagedGemvWeights<kRows, kUnroll>(w, slab, group * kGroupRows + warp * kRows, vectorsPerRow, step,
                                                      kLength, lane);
      else if (group != 0 || step != 0)
        detail::loadGemvWeights<kRows, kUnroll>(w, rows, k, step, kLength, lane);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if ((step + u) * kGemvStep + 8 * lane >= kLength) continue;  // past the k-range: this lane has no data
#pragma unroll
        for (int t = 0; t < kTokens; ++t) {
          const uint4 x = activations[t * vectorsPerToken + (step + u) * 32 + lane];
#pragma unroll
          for (int r = 0; r < kRows; ++r) acc[r][t] = detail::dot8(acc[r][t], w[u][r], x);
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int t = 0; t < kTokens; ++t) {
        const float v = detail::warpSum(acc[r][t]);
        if (lane == 0) tileSums[t * kTileN + group * kGroupRows + warp * kRows + r] = v;
      }
  }
  __syncthreads();

  // 4-5. Split-K by last arrival, store and post.
  detail::finishGemvTile<OutputPolicy, kTokens, kTileN>(p, unit, tileSums, kGemvThreads, traceStart,
                                                        traceWaited);
}

}  // namespace cusync
