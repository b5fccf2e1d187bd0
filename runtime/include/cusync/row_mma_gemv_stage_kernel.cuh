// The GEMV of 1-8 tokens with whole weight rows per block on tensor cores, a launch per stage: each block owns 8
// weight rows (8 outputs, or 4 paired SwiGLU outputs: 4 gate rows and their 4 up rows), reads them exactly as the
// CUDA-core whole-rows GEMV does (row_gemv_stage_kernel.cuh: every block-wide load is 4 KB of one row, thread t at
// k = 2048 j + 8 t), and multiplies them by the tokens with mma.sync m16n8k16 (tokens as A, weight rows as B) after
// a warp-private transpose through shared memory; the warps' sums meet once, at the end, and are written through the
// activation (no split-K, no atomics). Device code; host side in examples/mlp/skinny_mlp.cuh (configuration
// gemv_rows_mma_p<blocks per SM>).
//
// Why tensor cores: the CUDA-core whole-rows GEMV multiplies in fp32, so its instructions per weight byte grow with
// the tokens; past one token the issue rate, not memory, bounds it (session 26, call 8; session 27, call 1: at 2
// tokens 1.11x cuBLASLt's time). One m16n8k16 multiplies 256 weight bytes by up to 8 tokens. Measured (session 27,
// call 4, H200, GPT-3 / LLaMA MLP): 75.9 / 42.8 us at M = 2 and 78.2 / 45.3 at M = 4, against cuBLASLt's 85.2 / 42.8
// and 86.0 / 43.2; at M = 1 the CUDA-core kernel stays faster (70.7 against 75.1 for GPT-3).
//
// Why the transpose: an mma fragment spreads 8 weight rows over a warp's lanes (row = lane / 4), so fragments loaded
// straight from global memory read 64 contiguous bytes per row per instruction, where the CUDA-core kernel's read
// 4 KB of one row. Here the global loads keep the 4 KB shape; each warp writes its 512-byte share of the 8 rows to its
// own shared memory and reads it back in fragment order (no block barrier). The tokens' chunks of a piece take the
// same way: loaded with the weights (one coalesced 16-byte load per thread and token, all in flight together) and
// transposed beside them. Loaded in fragment order beside each mma instead, they sat on its chain, an L1/L2 round trip
// per two chunks: with the weights in fragment order too (call 2) GPT-3 at M = 1 took 96.8 us, with only the weights
// transposed (call 3) 103.0; with both transposed (call 4) 75.1. The 64-byte shape's own cost was not measured apart.
//
// Fragment order: mma_gemv_fragments.cuh.
//
// Synchronization: as the CUDA-core whole-rows GEMV. Stage 1 reads every stage-0 output, so it waits for the whole
// first grid (griddepcontrol.wait, SkinnyChainParams::secondWaitsForWholeGrid) after its first weight batch is in
// flight, or the launches are stream-ordered. Progress: every stage-0 block triggers the dependent launch first and
// waits for nothing.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/block_trace.cuh"
#include "cusync/row_mma_gemv_products.cuh"
#include "cusync/paired_weight_rows.h"
#include "cusync/row_gemv_outputs.cuh"
#include "cusync/row_gemv_stage_kernel.cuh"  // detail::loadTokenPiece
#include "cusync/skinny_chain_kernel.cuh"

namespace cusync {

// kUnroll: 4 KB pieces of each of the block's 8 rows loaded together per batch (a thread holds 8 kUnroll weight
// chunks). kTokens: the most tokens (p.m) the instance takes (a thread holds kTokens kUnroll token chunks).
template <class Policy, int kUnroll, int kBlocksPerSm, int kTokens>
__global__ void __launch_bounds__(kRowMmaGemvThreads, kBlocksPerSm)
    rowMmaGemvStageKernel(const __grid_constant__ SkinnyChainParams<Policy> p, std::uint32_t s) {
  constexpr int kRows = kRowMmaGemvRows;
  constexpr int kPiece = kRowMmaGemvThreads * 8;  // k of one block-wide load of one row
  const int tid = threadIdx.x;
  BlockTrace* const trace = p.traces[s];
  std::uint64_t traceStart = 0, traceWaited = 0;  // thread 0's, for the block trace
  if (trace != nullptr && tid == 0) traceStart = detail::globalTimerNs();
  triggerDependentLaunch();
  const SkinnyGemm& gemm = p.gemms[s];
  const bool paired = gemm.activation == SkinnyActivation::PairedSwiGlu;
  const int k = gemm.k;
  // Unpaired, the block's rows are outputs [8 b, 8 b + 8); paired, rows 0-3 are the gate rows of outputs
  // [4 b, 4 b + 4) and rows 4-7 their up rows. The rows of each half are contiguous in W.
  const __half* halves[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const std::uint32_t row = paired ? pairedWeightRow(blockIdx.x, std::uint32_t(h * kRows / 2), kRows / 2,
                                                       gemm.pairedGroupRows)
                                     : blockIdx.x * kRows + std::uint32_t(h * kRows / 2);
    halves[h] = gemm.w + std::size_t(row) * std::size_t(k) + 8 * tid;
  }
  const auto rowChunk = [&](int r, int piece) {
    return reinterpret_cast<const uint4*>(halves[r / (kRows / 2)] + std::size_t(r % (kRows / 2)) * std::size_t(k) +
                                          std::size_t(piece) * kPiece);
  };
  const auto tokenChunk = [&](int token, std::size_t offset) {
    return detail::loadTokenPiece(gemm.a, s, std::size_t(token) * std::size_t(k) + offset);
  };
  extern __shared__ __align__(16) uint4 shared[];
  // Stage 1 reads stage 0's outputs: its blocks, started early by PDL, wait for the whole first grid once their first
  // weight batch is in flight (while stage 0's last blocks finish).
  detail::rowMmaGemvProducts<kUnroll, kTokens>(k, p.m, shared, rowChunk, tokenChunk, [&] {
    if (s == 1 && p.secondWaitsForWholeGrid) waitForPriorGrids();
    if (trace != nullptr && tid == 0) traceWaited = detail::globalTimerNs();
  });
  __syncthreads();
  detail::storeRowGemvOutputs<kRowMmaGemvWarps>(rowMmaGemvWarpSums<kTokens>(shared), p.m, gemm);
  if (trace != nullptr && tid == 0) recordBlockTrace(trace, s, blockIdx.x, traceStart, traceWaited);
}

}  // namespace cusync
