// The GEMV probes' data (gemv_probe.cu, few_token_gemv_probe.cu): deterministic fp16 values from a hash of the
// index, and the float reference Y = X W^T over a few token rows. Device code.
#pragma once

#include <cstddef>

#include <cuda_fp16.h>

// p[i] for i < n: small values (|v| <= 0.025, so sums over K = 12288 stay well inside fp16) from a hash of i and seed.
__global__ void probeFill(__half* p, std::size_t n, unsigned seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    p[i] = __float2half((float(h & 0xffff) / 65535.f - 0.5f) * 0.05f);
  }
}

// y [tokens, n] in fp32 from W [n, k] and x [tokens, k]: a block per row of W (at most 1024 threads), every token.
__global__ void probeReference(const __half* w, const __half* x, float* y, int n, int k, int tokens) {
  const int row = blockIdx.x;
  __shared__ float part[32];
  for (int token = 0; token < tokens; ++token) {
    float acc = 0;
    for (int i = threadIdx.x; i < k; i += blockDim.x)
      acc += __half2float(w[std::size_t(row) * k + i]) * __half2float(x[std::size_t(token) * k + i]);
    for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
      float sum = 0;
      for (int i = 0; i < int(blockDim.x / 32); ++i) sum += part[i];
      y[std::size_t(token) * n + row] = sum;
    }
    __syncthreads();
  }
}
