// The prompt attention stage on CUTLASS's Hopper flash attention (attention_fmha_kernel.cuh), type-erased like the
// GEMMs so that the example neither includes CUTLASS nor recompiles the kernel: one launch function per model, T
// policy and QKV tiling, defined in attention_fmha.cu. Compiled only where the nvidia-cutlass package's examples/88_hopper_fmha is
// found (CUSYNC_HAVE_CUTLASS_FMHA, examples/attention/CMakeLists.txt). Host header.
#pragma once

#include <cstdint>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "attention_policies.h"
#include "cusync/block_trace.h"
#include "cusync/launch.cuh"
#include "cusync/stage_view.cuh"
#include "cusync/typed_stage_view.cuh"

#ifndef CUSYNC_HAVE_CUTLASS_FMHA
#define CUSYNC_HAVE_CUTLASS_FMHA 0
#endif

// A stress build (CUSYNC_CHAIN_DELAY_NS defined: random delays before the stage's wait and post) compiles its own
// launch functions beside the library's: an inline namespace keeps the two apart at link time, and a translation unit
// calls the ones it was compiled for.
#if defined(CUSYNC_CHAIN_DELAY_NS)
#define CUSYNC_FMHA_BUILD_NAMESPACE with_stress_delays
#else
#define CUSYNC_FMHA_BUILD_NAMESPACE without_stress_delays
#endif

namespace cusync::examples::attention {
inline namespace CUSYNC_FMHA_BUILD_NAMESPACE {

// What the kernel reads besides CUTLASS's own arguments (attention_fmha_kernel.cuh).
struct PromptFmhaArgs {
  const __half* qkv = nullptr;  // [tokens, 3 * heads * 128]
  __half* kCache = nullptr;     // [B, heads, capacity, 128]
  __half* vCache = nullptr;
  std::uint32_t heads = 0;
  std::uint32_t sequenceLength = 0;  // S, a multiple of 128
  std::uint32_t cacheCapacity = 0;   // >= S
  std::uint32_t qkvTileRows = 0;     // rows of a QKV GEMM tile
  std::uint32_t qkvTileColumns = 0;  // columns of a QKV GEMM tile: 128 (one head) or narrower (qkv_head_tiles.h)
  bool triggerDependents = false;    // a PDL producer: let the output GEMM launch once every block is resident
  bool waitForPriorGrid = false;     // PDL grid sync: griddepcontrol.wait (the whole QKV GEMM) before reading
  BlockTrace* trace = nullptr;       // diagnostics: a record per block at trace[blockIdx.x] (block_trace.h)
  std::uint32_t traceStage = 0;
};

// One launch of the stage: every pointer is the chain's, shapes in elements.
struct PromptFmhaLaunch {
  PromptFmhaArgs kernel;  // the cache append, the waits' geometry and PDL
  __half* t = nullptr;    // [tokens, heads * 128]
  float* lse = nullptr;   // [B, heads, S]: the softmax's log-sum-exp, which CUTLASS's epilogue writes
  std::uint32_t batch = 0;
  std::uint32_t blocks = 0;  // the stage's blocks: one per head tile
};

// Launches the stage posting under Policies<M, Prompt>::T<K>, waiting under the QKV tiling Q's producer policy
// (unless `input` is unsynchronized). Throws cusync::Error if CUTLASS refuses the problem.
template <Model M, TPolicyKind K, QkvTiling Q>
void launchPromptFmha(const PromptFmhaLaunch& launch,
                      TypedStageView<typename Policies<M, Phase::Prompt>::template T<K>> stage,
                      InputView<typename QkvPolicies<M, Phase::Prompt, Q>::Producer> input, cudaStream_t stream,
                      LaunchOrdering ordering);

}  // namespace CUSYNC_FMHA_BUILD_NAMESPACE
}  // namespace cusync::examples::attention
