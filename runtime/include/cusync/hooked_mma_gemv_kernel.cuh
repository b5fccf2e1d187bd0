// The hooked GEMV stage on tensor cores: D = A x W^T for a few tokens (M <= kGemvMaxTokens), one block per work unit
// (a TileN-column tile, or a split-K part of one), taking, waiting and posting exactly as the CUDA-core stage
// (hooked_gemv_kernel.cuh; the shared steps in hooked_gemv_unit.cuh), so a chain swaps one for the other without
// changing a policy or a wait. Only the multiply differs: rows in groups of 8, each multiplied by the tokens with
// mma.sync m16n8k16 (mma_gemv_fragments.cuh) instead of fp32 dot products.
//
// Why: at 4 tokens the CUDA-core stage's fp32 products, not memory, bound it, and the attention chain's token
// generation at B = 4 ran its GEMMs on 64-row wgmma tiles instead, 3-8% behind cuBLASLt's (docs/BENCHMARKS.md,
// issue 14, session 23). The MLP's tensor-core GEMV (row_mma_gemv_stage_kernel.cuh) made the same step there: GPT-3
// at 2-4 tokens 9-11% under cuBLASLt (session 27).
//
// Per unit:
//   1. The unit's work is items of 8 rows x 256 k (4 KB of weights), in group-major order; warp w takes a contiguous
//      range of them. Each warp streams its items' weights with cp.async into a ring of kStages 4 KB slots of its own
//      shared memory, each row's 512 bytes written to its transposed slots (transposeSlot), so the weights in flight
//      hold no registers (the MLP kernel's register transpose could keep only 4 KB per warp in flight before it
//      spilled). The first kStages items are issued before the wait: they need nothing from the producer.
//   2. Warp 0 waits for A's producer tiles of the unit's k-range (as the CUDA-core stage).
//   3. The block stages the tokens' k-range in shared memory (rows padded by 4 vectors, so that the two tokens of a
//      fragment read's 8-lane phase hit distinct banks); each warp then multiplies its items from the ring, refilling
//      each slot as soon as it is read, with no block barrier in the loop.
//   4. Where a row group's items span several warps, each writes its sums to its own slots (warpSums); the block adds
//      them in warp order, so the result does not depend on timing.
//   5. Split-K, store and post as the CUDA-core stage.
// Device code; the host side is examples/gemm/hooked_gemv.cuh (MmaStages > 0).
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/async_copy.cuh"
#include "cusync/gemv_stage_shape.h"
#include "cusync/hooked_gemv_unit.cuh"
#include "cusync/mma_gemv_fragments.cuh"

namespace cusync {

inline constexpr int kMmaGemvGroupRows = 8;            // weight rows of an item: one mma B tile
inline constexpr int kMmaGemvItemVectors = 8 * 32;     // 16-byte vectors of an item: 8 rows x 512 bytes
inline constexpr int kMmaGemvTokenPadVectors = 4;      // per staged token row (bank spread, step 3)

// Dynamic shared memory of a block: the warps' rings, then `tokens` staged token rows of the longest k-range.
CUSYNC_HOST_DEVICE constexpr int hookedMmaGemvSharedBytes(int stages, int tokens, int longestPart) {
  return kGemvWarps * stages * kMmaGemvItemVectors * 16 + tokens * (longestPart / 8 + kMmaGemvTokenPadVectors) * 16;
}

template <class InputPolicy, class OutputPolicy, int kTokens, int kTileN, int kBlocksPerSm, int kStages>
__global__ void __launch_bounds__(kGemvThreads, kBlocksPerSm)
    hookedMmaGemvKernel(const __grid_constant__ HookedGemvParams<InputPolicy> p) {
  static_assert(kTokens >= 1 && kTokens <= kGemvMaxTokens && kTokens <= 8, "the mma's A tile carries up to 8 tokens");
  static_assert(kTileN % kMmaGemvGroupRows == 0, "whole row groups per tile");
  static_assert(kStages >= 1, "a ring of at least one slot");
  constexpr int kGroups = kTileN / kMmaGemvGroupRows;
  extern __shared__ __align__(16) uint4 dynamicShared[];
  uint4* const activations = dynamicShared + kGemvWarps * kStages * kMmaGemvItemVectors;  // behind the rings
  __shared__ float warpSums[kGemvWarps][kTokens][kTileN];
  __shared__ float tileSums[kTokens * kTileN];  // [token][column of the tile]

  const GemvUnitStart start = detail::startGemvUnit(p);
  const WorkUnit unit = start.unit;
  const std::uint64_t traceStart = start.traceStart;
  const TileCoord tile = unit.ticket.tile;
  const GemvKRange range = detail::kRangeOfGemvUnit(p, unit);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const std::size_t k = std::size_t(p.k);

  // 1. This warp's items [first, last): item i is row group i / steps, k-step i % steps of the unit's k-range.
  const int steps = (range.length + kGemvStep - 1) / kGemvStep;
  const int items = kGroups * steps;
  const int perWarp = (items + kGemvWarps - 1) / kGemvWarps;
  const int first = min(warp * perWarp, items), last = min(first + perWarp, items);
  uint4* const ring = dynamicShared + warp * kStages * kMmaGemvItemVectors;
  const __half* const unitRows = p.w + std::size_t(tile.x) * kTileN * k + range.begin + 8 * lane;
  // One commit group per call, empty past the last item, so that waiting for all but the kStages - 1 most recent
  // groups always means the item about to be multiplied.
  const auto issue = [&](int item) {
    if (item < last) {
      const int group = item / steps, step = item % steps;
      const bool inside = step * kGemvStep + 8 * lane < range.length;  // a short last step: zeros past the range
      const __half* rows = unitRows + std::size_t(group * kMmaGemvGroupRows) * k + step * kGemvStep;
      uint4* const slot = ring + ((item - first) % kStages) * kMmaGemvItemVectors;
#pragma unroll
      for (int r = 0; r < kMmaGemvGroupRows; ++r)
        detail::copyAsync16OrZero(slot + detail::transposeSlot(r, lane), inside ? rows + std::size_t(r) * k : p.w,
                                  inside);
    }
    detail::commitAsyncCopies();
  };
#pragma unroll
  for (int i = 0; i < kStages; ++i) issue(first + i);

  // 2. A's producer tiles: rows [0, m), the unit's k-range.
  detail::waitForGemvInput(p, unit, range);
  __syncthreads();  // warp 0's acquire, for every thread's reads of A
  const std::uint64_t traceWaited = p.trace != nullptr ? detail::globalTimerNs() : 0;

  // 3. The tokens' k-range, then this warp's items.
  const int vectorsPerToken = range.length / 8;
  const int tokenStride = vectorsPerToken + kMmaGemvTokenPadVectors;
  detail::stageGemvActivations<kTokens>(activations, tokenStride, p.a, k, range, kGemvThreads);
  __syncthreads();

  // Two accumulator sets, one per mma of a 16-byte chunk: two dependent chains of 8 mmas per item instead of one of
  // 16, since a warp multiplies its items one after another.
  float acc[2][4] = {};
  int accGroup = first / steps;
  // Lane (g, t) holds token g's sums of the group's rows 2t and 2t + 1; lanes of tokens past kTokens hold zeros.
  const auto flush = [&](int group) {
    if (g < kTokens) {
      warpSums[warp][g][group * kMmaGemvGroupRows + 2 * t] = acc[0][0] + acc[1][0];
      warpSums[warp][g][group * kMmaGemvGroupRows + 2 * t + 1] = acc[0][1] + acc[1][1];
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[0][i] = acc[1][i] = 0.0f;
  };
  for (int item = first; item < last; ++item) {
    const int group = item / steps, step = item % steps;
    if (group != accGroup) {
      flush(accGroup);
      accGroup = group;
    }
    detail::waitAsyncCopiesPending<kStages - 1>();
    __syncwarp();  // every lane's copies of this item
    const uint4* const slot = ring + ((item - first) % kStages) * kMmaGemvItemVectors;
    const int stepVector = step * 32;  // the item's first vector of the tokens' k-range
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int chunk = t + 4 * j;
      const uint4 w = slot[detail::transposeSlot(g, chunk)];
      const uint4 a = g < kTokens && stepVector + chunk < vectorsPerToken
                          ? activations[g * tokenStride + stepVector + chunk]
                          : uint4{};
      detail::mmaTokensByRows(acc[0], a.x, a.y, w.x, w.y);
      detail::mmaTokensByRows(acc[1], a.z, a.w, w.z, w.w);
    }
    __syncwarp();  // every lane's reads of the slot before it is refilled
    issue(item + kStages);
  }
  if (first < last) flush(accGroup);
  __syncthreads();

  // 4. Column c's sum over the warps whose items cover its row group, in warp order.
  for (int i = threadIdx.x; i < kTokens * kTileN; i += kGemvThreads) {
    const int token = i / kTileN, column = i % kTileN, group = column / kMmaGemvGroupRows;
    const int warpBegin = group * steps / perWarp, warpEnd = ((group + 1) * steps - 1) / perWarp;
    float sum = 0.0f;
    for (int w = warpBegin; w <= warpEnd; ++w) sum += warpSums[w][token][column];
    tileSums[i] = sum;
  }
  __syncthreads();

  // 5. Split-K by last arrival, store and post.
  detail::finishGemvTile<OutputPolicy, kTokens, kTileN>(p, unit, tileSums, kGemvThreads, traceStart,
                                                        traceWaited);
}

}  // namespace cusync
