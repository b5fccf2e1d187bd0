// The tensor-core whole-rows GEMV as persistent blocks that each stream an equal share of the stage's weights, a
// launch per stage: the stage's work is its 8-row groups' 4 KB block-wide pieces (group by group, piece by piece
// along K), and block b of B takes pieces [b W / B, (b + 1) W / B) of the W in all, stream-K style. Each warp copies
// its 512-byte share of every piece by cp.async into a ring of kSlots transpose slots that runs on across group
// boundaries, and multiplies it by the tokens on mma.sync (the fragments of row_mma_gemv_products.cuh). At the end of
// each group in its share a block sums its warps (one block barrier): a group whose pieces it all had is written
// through the activation; a group split between blocks is added into fp32 partials, and the block that adds its last
// pieces (an arrival counter weighted by pieces) writes it. Device code; host side in examples/mlp/skinny_mlp.cuh
// (configuration gemv_rows_mma_s<slots>).
//
// Why (session 29, call 2, H200, block traces of LLaMA's MLP at M = 2 on gemv_rows_mma_p2): a block of 8 whole rows
// per launch streams at the rate its bytes in flight allow (7-8 us per 128 KB GEMM-1 block), so the stage moves in
// rounds: GEMM 1's 688 blocks fill 264 slots 2.6 times and its last round ran 160 blocks for 7 us while GEMM 2's
// blocks waited; GEMM 2's 1024 short blocks (44 KB) each pay a ramp-up and a cross-warp reduction, 3.2 us per block,
// 80% of the read rate. The chain took 41.7 us against a 29.8 us floor. Equal shares end together (no round tail),
// and the ring runs on from one group to the next (no per-group ramp).
//
// Synchronization: as the other whole-rows GEMVs. Stage 1 reads every stage-0 output, so each stage-1 block issues its
// first kSlots pieces and then waits for the whole first grid (griddepcontrol.wait, SkinnyChainParams::
// secondWaitsForWholeGrid), or the launches are stream-ordered. Progress: every stage-0 block triggers the dependent
// launch first and waits for nothing; a stage-1 block waits only for stage 0's grid, which was all resident before the
// dependent launch could start (every stage-0 block had triggered it). A split group's arrivals never wait.
//
// Partials and arrivals: SkinnyGemm::partials [m][n] and SkinnyGemm::arrivals (one per 8-row group), zero between
// runs: the last arrival reads the group's partials, zeroes them and takes the counter back to 0.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/async_copy.cuh"
#include "cusync/block_trace.cuh"
#include "cusync/fast_silu.cuh"
#include "cusync/gelu.cuh"
#include "cusync/mma_gemv_fragments.cuh"
#include "cusync/paired_weight_rows.h"
#include "cusync/row_gemv_stage_kernel.cuh"  // rowGemvOutputsPerBlock, detail::loadTokenPiece
#include "cusync/row_mma_gemv_products.cuh"
#include "cusync/skinny_chain_kernel.cuh"

namespace cusync {

// Dynamic shared memory of a streaming block of up to `tokens` tokens and `slots` ring slots: per warp the token rows
// and the ring (rowMmaGemvWarpBufferChunks), then two buffers of the warps' sums (a group's, while the next group's
// are written), then a group's 64 finished sums and the last-arrival flag. Host + device.
CUSYNC_HOST_DEVICE constexpr int rowMmaGemvStreamSharedBytes(int tokens, int slots) {
  return kRowMmaGemvWarps * rowMmaGemvWarpBufferChunks(tokens, slots) * 16 +
         2 * kRowMmaGemvWarps * kRowMmaGemvMaxTokens * kRowMmaGemvRows * int(sizeof(float)) +
         kRowMmaGemvMaxTokens * kRowMmaGemvRows * int(sizeof(float)) + 16;
}

// Where block b's share of `work` pieces over `blocks` blocks starts (it ends where block b + 1's starts). Host +
// device.
CUSYNC_HOST_DEVICE constexpr std::uint32_t rowMmaGemvStreamShareStart(std::uint32_t work, std::uint32_t block,
                                                                      std::uint32_t blocks) {
  return std::uint32_t(std::uint64_t(work) * block / blocks);
}

template <class Policy, int kTokens, int kSlots, int kBlocksPerSm>
__global__ void __launch_bounds__(kRowMmaGemvThreads, kBlocksPerSm)
    rowMmaGemvStreamKernel(const __grid_constant__ SkinnyChainParams<Policy> p, std::uint32_t s) {
  constexpr int kRows = kRowMmaGemvRows;
  constexpr int kPiece = kRowMmaGemvThreads * 8;  // k of one block-wide load of one row
  constexpr int kWarps = kRowMmaGemvWarps;
  static_assert(kSlots >= 1, "a ring of at least one slot");
  static_assert(kTokens >= 1 && kTokens <= kRowMmaGemvMaxTokens, "the mma's A tile carries up to 8 tokens");
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, g = lane / 4, t = lane % 4;
  BlockTrace* const trace = p.traces[s];
  std::uint64_t traceStart = 0, traceWaited = 0;  // thread 0's, for the block trace
  if (trace != nullptr && tid == 0) traceStart = detail::globalTimerNs();
  triggerDependentLaunch();
  const SkinnyGemm& gemm = p.gemms[s];
  const bool paired = gemm.activation == SkinnyActivation::PairedSwiGlu;
  const int k = gemm.k, m = p.m;
  const std::uint32_t piecesPerGroup = std::uint32_t((k + kPiece - 1) / kPiece);
  const std::uint32_t work = std::uint32_t(gemm.n / kRows) * piecesPerGroup;
  const std::uint32_t first = rowMmaGemvStreamShareStart(work, blockIdx.x, gridDim.x);
  const std::uint32_t last = rowMmaGemvStreamShareStart(work, blockIdx.x + 1, gridDim.x);

  extern __shared__ __align__(16) uint4 shared[];
  uint4* const tokens = shared + warp * rowMmaGemvWarpBufferChunks(kTokens, kSlots);
  uint4* const ring = tokens + kTokens * 32;
  auto* const warpSums = reinterpret_cast<float(*)[kWarps][kRowMmaGemvMaxTokens][kRows]>(
      shared + kWarps * rowMmaGemvWarpBufferChunks(kTokens, kSlots));  // [parity][warp][token][row]
  auto* const finished = reinterpret_cast<float(*)[kRows]>(warpSums + 2);  // [token][row], a split group's sums
  auto* const lastArrival = reinterpret_cast<std::uint32_t*>(finished + kRowMmaGemvMaxTokens);

  // Weight row r (of 8) of group `group`: unpaired, rows [8 group, 8 group + 8); paired, rows 0-3 the gate rows of
  // outputs [4 group, 4 group + 4), rows 4-7 their up rows (each half contiguous in W).
  const auto rowStart = [&](std::uint32_t group, int r) {
    const std::uint32_t half = std::uint32_t(r / (kRows / 2));
    const std::uint32_t row = paired ? pairedWeightRow(group, half * (kRows / 2), kRows / 2, gemm.pairedGroupRows)
                                     : group * kRows + half * (kRows / 2);
    return gemm.w + (std::size_t(row) + std::size_t(r % (kRows / 2))) * std::size_t(k);
  };
  // A piece's share of this warp starts inside K (no block barrier depends on it: a warp past K only skips).
  const auto warpInside = [&](std::uint32_t piece) { return int(piece) * kPiece + warp * 256 < k; };
  // Flattened piece i into slot (i - first) % kSlots: one commit group per piece, empty where this warp's share is
  // past K or i is past the block's share, so that piece i's group is complete once kSlots - 1 newer ones are pending.
  const auto issue = [&](std::uint32_t i) {
    if (i < last) {
      const std::uint32_t group = i / piecesPerGroup, piece = i % piecesPerGroup;
      if (warpInside(piece)) {
        uint4* const slot = ring + int((i - first) % kSlots) * kRows * 32;
        const int offset = int(piece) * kPiece + 8 * tid;
        const bool inside = offset < k;
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          const __half* const row = rowStart(group, r);
          detail::copyAsync16OrZero(slot + detail::transposeSlot(r, lane), inside ? row + offset : row, inside);
        }
      }
    }
    detail::commitAsyncCopies();
  };
  uint4 x[kTokens];
  const auto loadTokens = [&](std::uint32_t piece) {
    const std::size_t offset = std::size_t(piece) * kPiece + 8 * tid;
#pragma unroll
    for (int token = 0; token < kTokens; ++token)
      x[token] = token < m && offset < std::size_t(k)
                     ? detail::loadTokenPiece(gemm.a, s, std::size_t(token) * std::size_t(k) + offset)
                     : uint4{};
  };

  // Writes the 8 x m sums of `group` (thread i < 64: token i / 8, row i % 8; sum(token, r) gives any row's) through
  // the activation.
  const int outToken = tid / kRows, outRow = tid % kRows;
  const int outputs = rowGemvOutputsPerBlock<kRows>(gemm.activation);
  const auto store = [&](std::uint32_t group, auto sum) {
    if (outToken < m && outRow < outputs) {
      float y = sum(outToken, outRow);
      if (paired)
        y = fastSilu(y) * sum(outToken, outRow + kRows / 2);
      else if (gemm.activation == SkinnyActivation::Gelu)
        y = geluFast(y);
      const std::size_t width = paired ? std::size_t(gemm.n / 2) : std::size_t(gemm.n);  // D's row length
      gemm.d[std::size_t(outToken) * width + group * std::uint32_t(outputs) + std::uint32_t(outRow)] =
          __float2half(y);
    }
  };

  const bool hasToken = g < m;  // lanes of token rows g >= m multiply zeros (A rows past the tokens)
  float acc[4] = {};
  int parity = 0;
  std::uint32_t group = first / piecesPerGroup, piece = first % piecesPerGroup;  // of piece i, below
  std::uint32_t groupFirstPiece = piece;  // the current group's first piece in this share
#pragma unroll
  for (int j = 0; j < kSlots; ++j) issue(first + std::uint32_t(j));
  if (s == 1 && p.secondWaitsForWholeGrid) waitForPriorGrids();  // stage 1 reads every stage-0 output
  if (trace != nullptr && tid == 0) traceWaited = detail::globalTimerNs();
  if (first < last) loadTokens(piece);
  for (std::uint32_t i = first; i < last; ++i) {
    const bool inside = warpInside(piece);
    __syncwarp();  // the previous piece's token fragment reads are done
    if (inside) {
#pragma unroll
      for (int token = 0; token < kTokens; ++token)
        if (token < m) tokens[detail::transposeSlot(token, lane)] = x[token];
    }
    if (i + 1 < last) loadTokens(piece + 1 == piecesPerGroup ? 0u : piece + 1);  // in flight while this multiplies
    detail::waitAsyncCopiesPending<kSlots - 1>();                            // this lane's copies of piece i
    __syncwarp();                                                            // every lane's copies and token stores
    if (inside) {
      const uint4* const slot = ring + int((i - first) % kSlots) * kRows * 32;
#pragma unroll 2
      for (int j = 0; j < 8; ++j) {
        const uint4 w = slot[detail::transposeSlot(g, t + 4 * j)];
        const uint4 a = hasToken ? tokens[detail::transposeSlot(g, t + 4 * j)] : uint4{};
        detail::mmaTokensByRows(acc, a.x, a.y, w.x, w.y);
        detail::mmaTokensByRows(acc, a.z, a.w, w.z, w.w);
      }
    }
    __syncwarp();  // every lane's fragment reads of the slot before it is refilled
    issue(i + kSlots);
    if (piece + 1 != piecesPerGroup && i + 1 != last) {
      ++piece;
      continue;
    }

    // The end of a group in this share: the warps' sums meet (acc[0..1]: token g, rows 2t and 2t + 1).
    warpSums[parity][warp][g][2 * t] = acc[0];
    warpSums[parity][warp][g][2 * t + 1] = acc[1];
    acc[0] = acc[1] = acc[2] = acc[3] = 0.0f;
    __syncthreads();  // this group's sums written; the group before's reads of the other buffer are done
    const auto blockSum = [&](int token, int r) {
      float sum = 0.0f;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) sum += warpSums[parity][w][token][r];
      return sum;
    };
    const std::uint32_t covered = piece + 1 - groupFirstPiece;
    if (covered == piecesPerGroup) {
      store(group, blockSum);
    } else {
      // Split between blocks: add this share's sums, then arrive weighted by the pieces it covered.
      float* const partials = gemm.partials + std::size_t(group) * kRows;  // [token][n], this group's 8 columns
      if (outToken < m) atomicAdd(partials + std::size_t(outToken) * gemm.n + outRow, blockSum(outToken, outRow));
      __syncthreads();  // every thread's additions before thread 0's release
      if (tid == 0) {
        __threadfence();
        const std::uint32_t before = atomicAdd(gemm.arrivals + group, covered);
        const bool lastOne = before + covered == piecesPerGroup;
        if (lastOne) {
          atomicSub(gemm.arrivals + group, piecesPerGroup);  // back to 0 for the next launch
          __threadfence();                                    // acquire: the other shares' additions
        }
        *lastArrival = lastOne;
      }
      __syncthreads();
      if (*lastArrival) {
        if (outToken < m) {
          float* const mine = partials + std::size_t(outToken) * gemm.n + outRow;
          finished[outToken][outRow] = __ldcg(mine);
          *mine = 0.0f;  // zero for the next launch
        }
        __syncthreads();
        store(group, [&](int token, int r) { return finished[token][r]; });
      }
      // `finished` and `lastArrival` are read again only after the next group's barriers.
    }
    parity ^= 1;
    ++group;
    piece = groupFirstPiece = 0;
  }
  detail::waitAsyncCopies();  // only empty groups can remain
  if (trace != nullptr && tid == 0)
    recordBlockTrace(trace, s, std::uint32_t(first / piecesPerGroup), traceStart, traceWaited);
}

}  // namespace cusync
