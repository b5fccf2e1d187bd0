// SiLU, x sigmoid(x) = x / (1 + e^-x), as every SwiGLU kernel computes it (the fused chain's epilogue, the skinny
// chains, the LLaMA example's SwiGLU stage). Device code.
//
// Why not `x / (1.0f + __expf(-x))`: without fast-math, `/` is the IEEE-rounded division, a reciprocal refined by
// FMAs plus a range check and slow path, per element. The fused chain's SwiGLU epilogue runs it 44-88 times per math
// thread on 8 math warps, 2 per scheduler, with little to overlap it: session 10's unit traces (H100) put 6.3 us of
// tail on a 128x176 GEMM-1 unit and 8.8 us on a 256x176 one, 6-10% of the unit. __fdividef is the reciprocal
// approximation and one multiply (2 ulp). Its limits are right here: for x < -88, e^-x overflows to infinity and
// the quotient is -0; where 1 + e^-x lies in (2^126, 2^128) __fdividef returns 0, and SiLU is below 1e-36 there.
// Measured (session 10, device call 7, H100, the same LLaMA configurations in builds with either division, two rounds
// interleaved): 2-3% faster chains at M = 512-2048 (176 | 256 at 512: 115.0 -> 111.6 us), beyond the GELU
// chains' run-to-run spread in the same builds.
#pragma once

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

namespace cusync {

#if defined(__CUDACC__)
__device__ __forceinline__ float fastSilu(float x) {
  return __fdividef(x, 1.0f + __expf(-x));
}

// Two fp16 values at once, for an epilogue that reads fp16-rounded GEMM outputs (the staged epilogue):
// x sigmoid(x) = x/2 (1 + tanh(x/2)), one tanh.approx.f16x2 per pair where fastSilu takes an exponential and a
// reciprocal per value, plus the conversions.
__device__ __forceinline__ __half2 fastSiluHalf2(__half2 x) {
  const __half2 halfX = __hmul2(__float2half2_rn(0.5f), x);
  __half2 t;
  asm("tanh.approx.f16x2 %0, %1;"
      : "=r"(reinterpret_cast<unsigned&>(t))
      : "r"(reinterpret_cast<const unsigned&>(halfX)));
  return __hfma2(halfX, t, halfX);
}
#endif

}  // namespace cusync
