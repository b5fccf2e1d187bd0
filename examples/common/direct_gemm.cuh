// A GEMM with no library behind it, for references that must launch no cuBLAS kernel: compute-sanitizer's racecheck
// reports hazards inside cuBLAS's own nvjet kernels, and excluding them by name makes the sanitizer fail
// (docs/GPU_NOTES.md), so a run whose reference uses cuBLAS cannot show that cusync's kernels are clean.
// D[m, n] = A[m, k] W[n, k]^T in cublas_gemm.cuh's layout (A row-major, W a Linear layer's [n, k] weight, D
// row-major), fp16 in, fp32 accumulation, D rounded to the nearest fp16 as cuBLASLt rounds its fp32 result
// (CUBLAS_COMPUTE_32F with an fp16 D, alpha 1, beta 0). One thread per output element, no shared memory: far slower
// than cuBLAS (milliseconds expected for GPT-3's GEMMs at M = 256; not timed), but simple enough to trust. Host and
// device code.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cusync/error.h"

namespace cusync::examples {

namespace detail {
// The thread block of directGemmKernel: 16 output columns x 16 output rows. A warp spans two rows and sixteen
// columns, so each load of A serves sixteen threads and the sixteen rows of W it reads stay in L1 for the block.
// Consecutive blocks take consecutive row tiles of the same columns (blockIdx.x runs over rows), so the blocks of a
// wave share the rows of W they read: W is the larger operand (GPT-3's W1: 150 MB; X: 6 MB at M = 256).
inline constexpr int kDirectGemmBlockColumns = 16;
inline constexpr int kDirectGemmBlockRows = 16;

// A template so that a header can define it (see wait_kernel.cuh). `vectorized`: k is a multiple of 8 and A and W
// are 16-byte aligned, so each row is read 8 halves (16 bytes) at a time; otherwise one half at a time. The sum runs
// over k in order either way.
template <int = 0>
__global__ void directGemmKernel(const __half* a, const __half* w, __half* d, int m, int n, int k, bool vectorized) {
  const int column = blockIdx.y * blockDim.x + threadIdx.x;
  const int row = blockIdx.x * blockDim.y + threadIdx.y;
  if (row >= m || column >= n) return;
  const __half* aRow = a + std::size_t(row) * k;
  const __half* wRow = w + std::size_t(column) * k;
  float sum = 0.0f;
  int i = 0;
  if (vectorized) {
    for (; i + 8 <= k; i += 8) {
      const uint4 aVector = *reinterpret_cast<const uint4*>(aRow + i);
      const uint4 wVector = *reinterpret_cast<const uint4*>(wRow + i);
      const __half2* aPairs = reinterpret_cast<const __half2*>(&aVector);
      const __half2* wPairs = reinterpret_cast<const __half2*>(&wVector);
      for (int pair = 0; pair < 4; ++pair) {
        const float2 aValues = __half22float2(aPairs[pair]), wValues = __half22float2(wPairs[pair]);
        sum = fmaf(aValues.x, wValues.x, sum);
        sum = fmaf(aValues.y, wValues.y, sum);
      }
    }
  }
  for (; i < k; ++i) sum = fmaf(__half2float(aRow[i]), __half2float(wRow[i]), sum);
  d[std::size_t(row) * n + column] = __float2half_rn(sum);
}
}  // namespace detail

// Enqueues D = A W^T on `stream` (sizes as in CublasLtGemm: D is m x n, the sum runs over k).
inline void directGemm(const __half* a, const __half* w, __half* d, int m, int n, int k, cudaStream_t stream) {
  const auto aligned = [](const __half* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  const bool vectorized = k % 8 == 0 && aligned(a) && aligned(w);
  const dim3 block(detail::kDirectGemmBlockColumns, detail::kDirectGemmBlockRows);
  const dim3 grid((m + block.y - 1) / block.y, (n + block.x - 1) / block.x);
  detail::directGemmKernel<><<<grid, block, 0, stream>>>(a, w, d, m, n, k, vectorized);
  CUSYNC_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cusync::examples
