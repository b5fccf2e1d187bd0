// The one-token GEMV (M = 1) with whole weight rows per block, a launch per stage: each block owns a few output
// features, and its 256 threads read each of their weight rows in 4 KB contiguous pieces (thread t: k = 2048 j + 8 t),
// kUnroll pieces per row in flight; the token's activations come straight from L1/L2, with no shared-memory staging
// and no barrier before the first load; each row is summed across the block once, at the end, and written through the
// activation (no split-K, no atomics). Device code; host side in examples/mlp/skinny_mlp.cuh (configuration
// gemv_rows_p<blocks per SM>).
//
// Why: bench/mlp/gemv_probe.cu (session 26, call 3, H200) streamed every MLP weight matrix at 0.98-1.03 of a one-pass
// read in this shape, against 0.85-0.95 for the register GEMV of skinny_gemv_chain_kernel.cuh, whose warps read
// 512-byte pieces of 4 rows each, split K to approach its rate and pay split-K arrivals for it. Small blocks, many of
// them (thousands per stage), also leave no stage tail of one unlucky block: the hardware hands the last ones out to
// whichever SM frees first.
//
// Synchronization: stage 1 reads every stage-0 output (GEMM 2 is unsplit along K), so its wait is the whole first
// grid: launched with programmatic dependent launch, each block waits in griddepcontrol.wait (SkinnyChainParams::
// secondWaitsForWholeGrid) before it reads the activations; or the launches are stream-ordered. Progress: every
// stage-0 block triggers the dependent launch first and waits for nothing.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/block_trace.cuh"
#include "cusync/fast_silu.cuh"
#include "cusync/gelu.cuh"
#include "cusync/half_dot.cuh"
#include "cusync/paired_weight_rows.h"
#include "cusync/skinny_chain_kernel.cuh"
#include "cusync/stage_view.cuh"

namespace cusync {

inline constexpr int kRowGemvThreads = 256;

// Output features per block of a stage whose blocks load kRows weight rows: a paired SwiGLU output needs two (its
// gate row and its up row). Host + device.
template <int kRows>
CUSYNC_HOST_DEVICE constexpr int rowGemvOutputsPerBlock(SkinnyActivation activation) {
  return activation == SkinnyActivation::PairedSwiGlu ? kRows / 2 : kRows;
}

namespace detail {

// Stage 0's tokens never change in a launch: the non-coherent path. Stage 1's were written by the stage-0 grid, which
// may still have been running when this block started (PDL), so never through the non-coherent path (data read-only
// for the kernel's whole life); but every read of them follows the whole-grid wait (griddepcontrol.wait makes the
// first grid's writes visible to this grid) or a stream-ordered launch, so ordinary loads cached in L1 see them. L1
// matters: the blocks on one SM walk K in the same order at about the same time, and at 8 tokens a block reads as many
// token bytes as weight bytes (session 30, call 4, measured L2-only loads against these).
__device__ __forceinline__ uint4 loadTokenPiece(const __half* a, std::uint32_t s, std::size_t offset) {
  const uint4* p = reinterpret_cast<const uint4*>(a + offset);
  return s == 0 ? __ldg(p) : __ldca(p);
}

}  // namespace detail

template <class Policy, int kRows, int kUnroll, int kBlocksPerSm>
__global__ void __launch_bounds__(kRowGemvThreads, kBlocksPerSm)
    rowGemvStageKernel(const __grid_constant__ SkinnyChainParams<Policy> p, std::uint32_t s) {
  static_assert(kRows % 2 == 0, "a paired SwiGLU block loads whole (gate, up) pairs");
  constexpr int kPiece = kRowGemvThreads * 8;  // k per block-wide load of one row
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  BlockTrace* const trace = p.traces[s];
  std::uint64_t traceStart = 0, traceWaited = 0;  // thread 0's, for the block trace
  if (trace != nullptr && t == 0) traceStart = detail::globalTimerNs();
  triggerDependentLaunch();
  const SkinnyGemm& g = p.gemms[s];
  const bool paired = g.activation == SkinnyActivation::PairedSwiGlu;
  const std::uint32_t outputs = rowGemvOutputsPerBlock<kRows>(g.activation);
  const std::uint32_t firstOutput = blockIdx.x * outputs;
  // Row r of the block: output firstOutput + r; paired, rows [0, kRows / 2) are the outputs' gate rows and
  // [kRows / 2, kRows) their up rows (pairedWeightRow with one output per "tile").
  const __half* rows[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const std::uint32_t row = !paired ? firstOutput + r
                                      : pairedWeightRow(firstOutput + std::uint32_t(r % (kRows / 2)),
                                                        std::uint32_t(r / (kRows / 2)), 1u, g.pairedGroupRows);
    rows[r] = g.w + std::size_t(row) * g.k + 8 * t;
  }
  // Pieces of kPiece k, the last one short where k is not a multiple (threads past k load nothing and add zeros), in
  // batches of kUnroll loaded together: one round trip per batch, so a short K (LLaMA's GEMM 2, 2752) is one batch.
  const int pieces = (g.k + kPiece - 1) / kPiece;
  uint4 v[kUnroll][kRows];
  const auto loadBatch = [&](int first) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const bool inside = (first + u) * kPiece + 8 * t < g.k;
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        v[u][r] = inside ? __ldcs(reinterpret_cast<const uint4*>(rows[r] + (first + u) * kPiece)) : uint4{};
    }
  };
  // The first batch loads before the wait: weights depend on nothing, so a stage-1 block started by PDL streams them
  // while stage 0's last blocks finish.
  loadBatch(0);
  if (s == 1 && p.secondWaitsForWholeGrid) waitForPriorGrids();
  if (trace != nullptr && t == 0) traceWaited = detail::globalTimerNs();

  float acc[kRows] = {};
  for (int j = 0; j < pieces; j += kUnroll) {  // v holds pieces [j, j + kUnroll)
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int k = (j + u) * kPiece + 8 * t;
      const uint4 x = k < g.k ? detail::loadTokenPiece(g.a, s, std::size_t(k)) : uint4{};
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] = detail::dot8(acc[r], v[u][r], x);
    }
    if (j + kUnroll < pieces) loadBatch(j + kUnroll);
  }

  __shared__ float warpSums[kRows][kRowGemvThreads / 32];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float sum = detail::warpSum(acc[r]);
    if (lane == 0) warpSums[r][warp] = sum;
  }
  __syncthreads();
  if (t < int(outputs)) {
    const auto rowSum = [&](int r) {
      float v = 0.0f;
#pragma unroll
      for (int w = 0; w < kRowGemvThreads / 32; ++w) v += warpSums[r][w];
      return v;
    };
    float v = rowSum(t);
    if (paired)
      v = fastSilu(v) * rowSum(t + kRows / 2);
    else if (g.activation == SkinnyActivation::Gelu)
      v = geluFast(v);
    g.d[firstOutput + std::uint32_t(t)] = __float2half(v);
  }
  if (trace != nullptr && t == 0) recordBlockTrace(trace, s, blockIdx.x, traceStart, traceWaited);
}

}  // namespace cusync
