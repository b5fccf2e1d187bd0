// The tensor-core whole-rows GEMVs' last step (row_mma_gemv_stage_kernel.cuh, packed_mma16_gemv_stage_kernel.cuh):
// the warps' partial sums, left in shared memory as [warp][token][row], summed per (token, row), passed through the
// stage's activation and written to D. Thread i < kTokens * kRows takes row i % kRows of token i / kRows; a paired
// SwiGLU block's rows [0, kRows / 2) are gate rows and [kRows / 2, kRows) the same outputs' up rows, so it writes
// kRows / 2 outputs. The caller has synchronized the block after the sums were stored. Device code.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>

#include "cusync/fast_silu.cuh"
#include "cusync/gelu.cuh"
#include "cusync/row_gemv_stage_kernel.cuh"  // rowGemvOutputsPerBlock
#include "cusync/skinny_chain_kernel.cuh"    // SkinnyGemm

namespace cusync::detail {

template <int kWarps, int kTokens, int kRows>
__device__ __forceinline__ void storeRowGemvOutputs(const float (*warpSums)[kTokens][kRows], int m,
                                                    const SkinnyGemm& gemm) {
  const int outToken = int(threadIdx.x) / kRows, row = int(threadIdx.x) % kRows;
  const auto rowSum = [&](int r) {
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += warpSums[w][outToken][r];
    return sum;
  };
  const bool paired = gemm.activation == SkinnyActivation::PairedSwiGlu;
  const int outputs = rowGemvOutputsPerBlock<kRows>(gemm.activation);
  if (outToken < m && row < outputs) {
    float y = rowSum(row);
    if (paired)
      y = fastSilu(y) * rowSum(row + kRows / 2);
    else if (gemm.activation == SkinnyActivation::Gelu)
      y = geluFast(y);
    const std::size_t width = paired ? std::size_t(gemm.n / 2) : std::size_t(gemm.n);  // D's row length
    gemm.d[std::size_t(outToken) * width + blockIdx.x * std::uint32_t(outputs) + std::uint32_t(row)] =
        __float2half(y);
  }
}

}  // namespace cusync::detail
