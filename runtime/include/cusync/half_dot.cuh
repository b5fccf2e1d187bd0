// The CUDA-core arithmetic of the GEMV kernels (skinny_chain_kernel.cuh, skinny_gemv_chain_kernel.cuh,
// hooked_gemv_kernel.cuh): fp16 weights and activations, 16 bytes at a time, multiplied and summed in fp32 (fp16
// sums over thousands of products would lose the reference's accuracy). Device code.
#pragma once

#include <cuda_fp16.h>

namespace cusync::detail {

// The sum of `v` over the warp's lanes, in every lane.
__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// acc += w . x over one 16-byte (8-half) vector.
__device__ __forceinline__ float dot8(float acc, uint4 w, uint4 x) {
  const __half2* wh = reinterpret_cast<const __half2*>(&w);
  const __half2* xh = reinterpret_cast<const __half2*>(&x);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float2 wf = __half22float2(wh[j]), xf = __half22float2(xh[j]);
    acc = fmaf(wf.x, xf.x, fmaf(wf.y, xf.y, acc));
  }
  return acc;
}

}  // namespace cusync::detail
