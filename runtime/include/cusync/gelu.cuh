// The GELU of the GELU MLP: one definition for every kernel, epilogue and reference in cusync. Host and device code.
//
// GPT-3 computes GELU as GPT-2 does, with the tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
// and so do cuBLASLt's GELU epilogue and torch._addmm_activation (the anchors cuBLASLt and torch-addmm-gelu). In a
// kernel it is one MUFU tanh and five FMAs; the exact form's erff is a 12-term polynomial on both sides of a branch.
// The fused chain's GEMM-1 units spent 3.7 us in epilogue and post per 128x128 tile with erf against 0.95 us for
// GEMM 2's identity epilogue (docs/BENCHMARKS.md, session 3 traces). Measured in one call on the H100 (session 10,
// the same configurations in an erf and a tanh build): the tanh chain is 3.5-7.5% faster from M = 512 up.
// A build with CUSYNC_GELU_ERF defined (CMake option CUSYNC_GELU_ERF) computes the exact (erf) form everywhere.
#pragma once

#include <cmath>
#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

namespace cusync {

#if defined(CUSYNC_GELU_ERF)
inline constexpr bool kGeluTanh = false;
#else
inline constexpr bool kGeluTanh = true;
#endif

// torch's name of the form (F.gelu's `approximate`), for references and baselines that must compute the same.
inline constexpr const char* kGeluApproximation = kGeluTanh ? "tanh" : "none";

// The reference: fp32 with the math library's tanh / erf.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline float geluReference(float v) {
  if constexpr (kGeluTanh)
    return 0.5f * v * (1.0f + std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
  else
    return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
}

#if defined(__CUDACC__)
// In kernels: the tanh form with the hardware's tanh.approx.f32 (relative error about 2^-11, an fp16 ulp), as
// CUTLASS's GELU_taylor<float> computes it, so every path of the MLP (CUTLASS epilogues, the skinny chains) agrees.
__device__ __forceinline__ float geluFast(float v) {
  if constexpr (kGeluTanh) {
    float t;
    asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(v * (0.7978845608028654f + 0.0356774081363001f * v * v)));
    return 0.5f * (v + v * t);
  } else {
    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  }
}

// Two fp16 values at once, for an epilogue that reads fp16-rounded GEMM outputs (the staged epilogue): the tanh form
// in half2 arithmetic, one tanh.approx.f16x2 per pair where geluFast takes a tanh and two conversions per value.
// Tanh builds only (the exact form has no half2 counterpart here; callers convert and use geluFast). Where
// v * v overflows (|v| >= 256) the tanh is +-1 and the result v or 0, as in fp32.
__device__ __forceinline__ __half2 geluFastHalf2(__half2 v) {
  const __half2 inner = __hmul2(v, __hfma2(__hmul2(__float2half2_rn(0.0356774081363001f), v), v,
                                           __float2half2_rn(0.7978845608028654f)));
  __half2 t;
  asm("tanh.approx.f16x2 %0, %1;"
      : "=r"(reinterpret_cast<unsigned&>(t))
      : "r"(reinterpret_cast<const unsigned&>(inner)));
  return __hmul2(__float2half2_rn(0.5f), __hfma2(v, t, v));
}
#endif

}  // namespace cusync
