// The op's plans for a few tokens, five GEMV chains (examples/mlp/skinny_mlp.cuh), each a launch per GEMM with GEMM 2
// launched with programmatic dependent launch:
// - gemv_packed_mma16_p3 and _p4 (SkinnyPath::GemvPackedMma16, 3 or 4 blocks per SM), M = 1-16 (past 8 tokens two
//   token tiles per weight fragment, loaded half a share at a time): 16 whole weight rows per block on tensor cores
//   over weights packed once in mma fragment order (runtime/include/cusync/packed_gemv_layout.h); the caller passes
//   the packed copies (cusync_mlp_pack_weights) in W1's and W2's place. At M = 1-8, H200: GPT-3 70.0-71.3 us (p3)
//   against 70.5 for gemv_rows_p4 at M = 1 and 85.0-85.8 for cuBLASLt; LLaMA 33.6-34.6 (p4) against 35.6 and
//   42.5-43.2 (docs/BENCHMARKS.md, issue 12, session 30, call 6).
// - gemv_rows_mma_p2 (SkinnyPath::GemvRowsMma), M = 1-8: as gemv_rows_p4, 8 whole weight rows per block multiplied by
//   the tokens on tensor cores. At M = 2-4: 75.9-78.2 us (GPT-3) and 42.8-45.3 (LLaMA) against 94.7-100.3 and
//   51.4-51.9 for the op's fused chain split at small M and 84.8-86.0 and 42.8-43.2 for cuBLASLt, H200
//   (docs/BENCHMARKS.md, issue 12, session 27, call 4).
// - gemv_rows_p4 (SkinnyPath::GemvRows), M = 1: a few whole weight rows per block, unsplit; GEMM 2 waits for the
//   whole first grid, which it reads. The fastest at M = 1: 70.9 against 79.9 us (GPT-3) and 37.5 against 41.9
//   (LLaMA) for gemv_32_p4 split 2x1, H200 (docs/BENCHMARKS.md, issue 12, session 26, call 5).
// - gemv_32_p4 (SkinnyPath::GemvPdl), M = 1: a block per 32-row unit. Split along K, GEMM 2 waits tile by tile for
//   the GEMM-1 tiles its k-range reads, under the TileSync policy cusyncgen proves from
//   examples/mlp/gpt3_mlp_skinny.dep (GELU) and llama_mlp_skinny.dep (SwiGLU); unsplit, for the whole first grid
//   (gemvWaitsForWholeGrid says why).
// Include from a .cu file: it instantiates the kernels. Host code.
//
// Why: at M = 1 the fused chain runs 64-row wgmma tiles with 63 empty rows and split-K fix-ups; the GEMV chains
// stream the weights through registers. Measured with the same interleaved timing (gemv_32_p4): 113.0 against 117.0
// us (GPT-3) and 56.8 against 66.3 us (LLaMA) on the H100 (docs/BENCHMARKS.md, issue 12, session 20 call 5 and
// session 3), 83.3 against 95.3 and 44.3 against 55.1 us on the H200 (session 25, call 2; both tile by tile).
//
// SwiGLU: the row-major GEMVs read the op's paired W1 in place (gate and up rows paired in groups of 64, cusync_mlp.h)
// through SkinnyGemm::pairedGroupRows; the packed GEMV reads a copy packed with the same pairing.
//
// Counters between runs: as for the fused chain (mlp_plan.h). GEMM 2's blocks take the launch's iteration from the
// stage's 64-bit tile counter, its waits are wrap-safe, and split-K parts leave their fp32 partials and arrival
// counts at zero (SkinnySplitState).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "gpt3_mlp_skinny.h"   // generated and proven by cusyncgen from examples/mlp/gpt3_mlp_skinny.dep
#include "llama_mlp_skinny.h"  // ... and from examples/mlp/llama_mlp_skinny.dep
#include "mlp_plan.h"
#include "skinny_mlp.cuh"

namespace cusync::python {

template <class Policy>
using GemvTileChain = examples::SkinnyMlpChain<Policy, examples::SkinnyPath::GemvPdl, 4>;
using GemvTileGeluChain = GemvTileChain<generated::gpt3_mlp_skinny::Dep_dep_g1_TileSync>;
using GemvTileSwiGluChain = GemvTileChain<generated::llama_mlp_skinny::Dep_dep_g1_TileSync>;
template <class Policy>
using GemvRowsChain = examples::SkinnyMlpChain<Policy, examples::SkinnyPath::GemvRows, 4>;
using GemvRowsGeluChain = GemvRowsChain<generated::gpt3_mlp_skinny::Dep_dep_g1_TileSync>;
using GemvRowsSwiGluChain = GemvRowsChain<generated::llama_mlp_skinny::Dep_dep_g1_TileSync>;
template <class Policy>
using GemvRowsMmaChain = examples::SkinnyMlpChain<Policy, examples::SkinnyPath::GemvRowsMma, 2>;
using GemvRowsMmaGeluChain = GemvRowsMmaChain<generated::gpt3_mlp_skinny::Dep_dep_g1_TileSync>;
using GemvRowsMmaSwiGluChain = GemvRowsMmaChain<generated::llama_mlp_skinny::Dep_dep_g1_TileSync>;
template <class Policy, int kBlocksPerSm>
using GemvPackedChain = examples::SkinnyMlpChain<Policy, examples::SkinnyPath::GemvPackedMma16, kBlocksPerSm>;
template <int kBlocksPerSm>
using GemvPackedGeluChain = GemvPackedChain<generated::gpt3_mlp_skinny::Dep_dep_g1_TileSync, kBlocksPerSm>;
template <int kBlocksPerSm>
using GemvPackedSwiGluChain = GemvPackedChain<generated::llama_mlp_skinny::Dep_dep_g1_TileSync, kBlocksPerSm>;

// The configurations' names, as the library lists them after the fused chain's (the examples' names for these
// chains).
inline std::string gemvTileConfigName() { return GemvTileGeluChain::configName(); }
inline std::string gemvRowsConfigName() { return GemvRowsGeluChain::configName(); }
inline std::string gemvRowsMmaConfigName() { return GemvRowsMmaGeluChain::configName(); }
template <int kBlocksPerSm>
inline std::string gemvPackedConfigName() { return GemvPackedGeluChain<kBlocksPerSm>::configName(); }

// Gate rows per pairing group of the op's SwiGLU W1 (cusync_mlp.h, python/cusync/op.py's PAIRED_ROWS).
inline constexpr std::uint32_t kOpPairedGroupRows = 64;

// Why the GEMV chain `Chain` cannot run this call (empty when it can).
template <class Chain>
std::string whyNotGemv(int m, int hidden, int intermediate, bool swiGlu, examples::FusedSplit split) {
  return Chain::whyNot(m, hidden, intermediate, swiGlu, split, swiGlu ? kOpPairedGroupRows : Chain::kTileN / 2);
}

// How GEMM 2 waits. Split along K, each GEMM-2 unit waits tile by tile for the GEMM-1 tiles its k-range reads.
// Unsplit, every unit reads every GEMM-1 tile: the tile dependency is then total, and the hardware's wait for the
// whole first grid (PDL grid sync, griddepcontrol.wait) is the same wait, exact, without semaphores. Measured at
// M = 1 on the H200, interleaved, tile by tile against grid sync: 83.7 against 80.4 us (GPT-3), 44.1 against 41.8
// (LLaMA); the semaphore spin's back-off (32, 256, 1024 ns) and RowSync's single semaphore changed nothing, so the
// cost is not the polling (docs/BENCHMARKS.md, issue 12, session 25, calls 5-6).
// The whole-rows chains always wait for the whole first grid: that is their synchronized mode (skinny_mlp.cuh).
inline bool gemvWaitsForWholeGrid(examples::FusedSplit split) { return split.secondParts == 1; }

template <class Chain>
class GemvMlpPlan final : public MlpPlan {
 public:
  GemvMlpPlan(int m, int hidden, int intermediate, bool swiGlu, examples::FusedSplit split, int smCount)
      : chain_(m, hidden, intermediate, swiGlu, split, smCount,
               /*streamOrdered=*/!Chain::kRows && gemvWaitsForWholeGrid(split),
               swiGlu ? kOpPairedGroupRows : Chain::kTileN / 2) {
    chain_.setPdlGridSync(gemvWaitsForWholeGrid(split));
    if constexpr (Chain::kPacked) chain_.setWeightsPrepacked();  // cusync_mlp_run gets the packed copies
  }

  std::uint32_t workUnits() const override { return chain_.blocksOfStage(0) + chain_.blocksOfStage(1); }
  // Not persistent: a block per unit (per few rows). The larger of the two launches.
  std::uint32_t persistentBlocks() const override { return std::max(chain_.blocksOfStage(0), chain_.blocksOfStage(1)); }
  void enqueue(const MlpOperands& operands, cudaStream_t stream) const override { chain_.enqueue(operands, stream); }
  // A GEMM-2 unit always waits for its whole k-range, in one warp, before its block reads any of it.
  void setWaitForWholeUnit(bool) override {}

 private:
  Chain chain_;
};

}  // namespace cusync::python
