// The hooked GEMV stage with whole weight rows per block, on tensor cores: D = A x W^T for a few tokens, each block
// computing 8 output columns over the whole of K (row_mma_gemv_products.cuh: the MLP's fastest few-token GEMV,
// 4 KB block-wide row pieces, no split-K, no staged activations), TileN / 8 blocks per tile of the stage's policy.
// Each block of a tile counts its arrival once its columns are stored; the last to arrive posts the tile. Hooked like
// the other GEMV stages (hooked_gemv_unit.cuh takes the unit and waits), so a chain swaps it in without changing a
// policy: the stage runs TileN / 8 "parts" per tile (Stage::setBlocksPerTile), each a column group, not a k-range.
//
// Why: alone at M = 4 (session 28, call 2, H200) the tile-per-block GEMV stages, CUDA-core or tensor-core, took
// 1.2-1.3x cuBLASLt's time on the attention chain's QKV GEMMs and 1.8-2.2x on its output GEMMs: split along K to
// fill the GPU, each unit stages its slice of the tokens in shared memory behind a barrier and ends in a split-K
// fix-up; the whole-rows shape streamed the MLP's weights at 1.14x the one-pass-read floor and beat cuBLASLt there.
//
// Waiting: a block needs A's whole rows [0, M) x [0, K), so it waits for every producer tile of A's row tile (for the
// output GEMM: the whole attention output), after its first weight batch is in flight.
//
// Posting: the block's stores, a block barrier, then thread 0's fence and arrival on the tile's counter; the last
// arrival fences again (acquire: every other block's stores, through their fences) and posts (release), so a
// consumer that sees the post sees the whole tile. The last arrival takes the counter back to 0 for the next launch.
// Progress: a block waits only for tiles of an earlier stage, as the other GEMV stages (hooked_gemv_unit.cuh), and
// never for a block of its own stage: the arrival is a count, not a wait. Device code; the host side is
// examples/gemm/hooked_gemv.cuh (RowsMma).
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/hooked_gemv_unit.cuh"
#include "cusync/row_mma_gemv_products.cuh"

namespace cusync {

template <class InputPolicy, class OutputPolicy, int kTokens, int kTileN, int kBlocksPerSm, int kUnroll>
__global__ void __launch_bounds__(kRowMmaGemvThreads, kBlocksPerSm)
    hookedRowsMmaGemvKernel(const __grid_constant__ HookedGemvParams<InputPolicy> p) {
  constexpr int kRows = kRowMmaGemvRows;
  constexpr int kPiece = kRowMmaGemvThreads * 8;  // k of one block-wide load of one row
  static_assert(kTileN % kRows == 0, "whole column groups per tile");
  static_assert(kRowMmaGemvThreads == kGemvThreads, "the shared unit steps count the GEMV stages' threads");
  extern __shared__ __align__(16) uint4 shared[];  // rowMmaGemvSharedBytes(kTokens)
  const GemvUnitStart start = detail::startGemvUnit(p);
  const WorkUnit unit = start.unit;  // part: the column group of the tile
  const std::uint64_t traceStart = start.traceStart;
  std::uint64_t traceWaited = 0;
  const TileCoord tile = unit.ticket.tile;
  const int tid = threadIdx.x;
  const std::size_t k = std::size_t(p.k);
  const std::size_t firstColumn = std::size_t(tile.x) * kTileN + std::size_t(unit.part) * kRows;
  const __half* const rows = p.w + firstColumn * k + 8 * tid;
  const auto rowChunk = [&](int r, int piece) {
    return reinterpret_cast<const uint4*>(rows + std::size_t(r) * k + std::size_t(piece) * kPiece);
  };
  // A was written by other SMs during this launch's lifetime (its producer's tiles): read it from L2.
  const auto tokenChunk = [&](int token, std::size_t offset) {
    return __ldcg(reinterpret_cast<const uint4*>(p.a + std::size_t(token) * k + offset));
  };
  detail::rowMmaGemvProducts<kUnroll, kTokens>(p.k, p.m, shared, rowChunk, tokenChunk, [&] {
    detail::waitForGemvInput(p, unit, GemvKRange{0, p.k});
    __syncthreads();  // warp 0's acquire, for every thread's reads of A
    if (p.trace != nullptr && tid == 0) traceWaited = detail::globalTimerNs();
  });
  detail::storeColumnsAndArrive<OutputPolicy, kRowMmaGemvWarps, kRows>(p, unit, rowMmaGemvWarpSums<kTokens>(shared),
                                                                        firstColumn, traceStart, traceWaited);
}

}  // namespace cusync
