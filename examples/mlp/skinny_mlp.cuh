// An MLP for a few tokens (M <= 8) as a fused chain of two skinny GEMMs (runtime/include/cusync/skinny_chain_kernel.cuh):
// one persistent launch whose blocks draw both GEMMs' units from one queue, tile-synchronized under the policy
// cusyncgen proves from gpt3_mlp_skinny.dep / llama_mlp_skinny.dep; or the same kernel launched once per GEMM in
// stream order. GPT-3 (GELU) or LLaMA (paired SwiGLU, gate and up rows paired per kTileN / 2). Include from a .cu
// file: it instantiates the kernel.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "common/device_buffers.cuh"
#include "cusync/error.h"
#include "cusync/fused_chain.cuh"
#include "cusync/skinny_chain_kernel.cuh"
#include "cusync/stage.cuh"
#include "cusync/tensor_map.h"
#include "fused_mlp.h"   // MlpOperands
#include "fused_split.h"

namespace cusync::examples {

// The split-K buffers of one skinny stage: fp32 partial sums [m, n], zero between runs, and an arrival counter per
// tile. Allocated only when the stage is split.
struct SkinnySplitState {
  std::unique_ptr<DeviceBuffer<float>> partials;
  std::unique_ptr<DeviceBuffer<std::uint32_t>> arrivals;
  SkinnySplitState(Stage& stage, int m, int n, std::uint32_t parts) {
    stage.setBlocksPerTile(parts);
    if (parts <= 1) return;
    partials = std::make_unique<DeviceBuffer<float>>(std::size_t(m) * n);
    arrivals = std::make_unique<DeviceBuffer<std::uint32_t>>(stage.grid().tileCount());
    CUSYNC_CUDA_CHECK(cudaMemset(partials->get(), 0, partials->bytes()));
    CUSYNC_CUDA_CHECK(cudaMemset(arrivals->get(), 0, arrivals->bytes()));
  }
  float* partialsPointer() const { return partials ? partials->get() : nullptr; }
  std::uint32_t* arrivalsPointer() const { return arrivals ? arrivals->get() : nullptr; }
};

// `Policy`: the TileSync policy of the skinny spec (gpt3_mlp_skinny.h or llama_mlp_skinny.h); `pairedSwiGlu`:
// LLaMA's GEMM 1 over paired gate/up rows (W1 [2 * intermediate, hidden], paired per kTileN / 2 rows).
// kOneTokenGemv: the kernel's M = 1 path (CUDA cores, warps owning whole rows; configurations gemv_*); kSlots: the
// depth of each block's ring of 20 KB slots (configuration suffix _r<slots>).
template <class Policy, bool kOneTokenGemv = false, int kSlots = 4>
class SkinnyMlpChain {
 public:
  static constexpr int kMaxTokens = kOneTokenGemv ? 1 : skinny::kTokens;
  static constexpr int kTileN = 32;
  static constexpr int kThreads = kSkinnyThreads;
  static constexpr int kSharedBytes = skinnySharedBytes<kTileN, kSlots>();

  static std::string configName() {
    return std::string(kOneTokenGemv ? "gemv_" : "skinny_") + std::to_string(kTileN) + "_r" + std::to_string(kSlots);
  }

  SkinnyMlpChain(int m, int hidden, int intermediate, bool pairedSwiGlu, FusedSplit split, int smCount,
                 bool streamOrdered)
      : m_(m), hidden_(hidden), intermediate_(intermediate), paired_(pairedSwiGlu),
        first_("gemm1", GridShape{std::uint32_t(gemm1Rows() / kTileN), 1, 1}),
        second_("gemm2", GridShape{std::uint32_t(hidden / kTileN), 1, 1}),
        firstSplit_(first_, m, gemm1Rows(), split.firstParts),
        secondSplit_(second_, m, hidden, split.secondParts) {
    const std::string why = whyNot(m, hidden, intermediate, pairedSwiGlu, split);
    if (!why.empty()) throw Error("skinny MLP chain " + configName() + ": " + why);
    if (!streamOrdered) {
      first_.setOutputPolicy<Policy>();
      gemm0Output_ = first_.inputFor<Policy>(second_);
    }
    const auto kernel = skinnyChainKernel<Policy, kTileN, kOneTokenGemv, kSlots>;
    CUSYNC_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
    int perSm = 0;
    CUSYNC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kThreads, kSharedBytes));
    if (perSm == 0) throw Error("skinny MLP chain " + configName() + ": no block fits an SM");
    const std::uint32_t slots = std::uint32_t(smCount) * std::uint32_t(perSm);
    occupancy_ = perSm;
    const ChainStage firstStage{&first_, PartOrder::PartsOfATileTogether, true};
    const ChainStage secondStage{&second_, PartOrder::KRangesInTurn, true};
    const std::uint32_t units1 = first_.workUnitsPerLaunch(), units2 = second_.workUnitsPerLaunch();
    if (!streamOrdered) {
      launches_.push_back(std::make_unique<FusedChain>(std::vector<ChainStage>{firstStage, secondStage},
                                                       std::min(slots, units1 + units2)));
    } else {
      launches_.push_back(std::make_unique<FusedChain>(
          std::vector<ChainStage>{firstStage, {&second_, PartOrder::KRangesInTurn, false}}, std::min(slots, units1)));
      launches_.push_back(std::make_unique<FusedChain>(
          std::vector<ChainStage>{{&first_, PartOrder::PartsOfATileTogether, false}, secondStage},
          std::min(slots, units2)));
    }
  }

  // Why a shape cannot run (empty when it can): the kernel's tiles, k-blocks and token count.
  static std::string whyNot(int m, int hidden, int intermediate, bool pairedSwiGlu, FusedSplit split) {
    const int gemm1Rows = (pairedSwiGlu ? 2 : 1) * intermediate;
    if (m < 1 || m > kMaxTokens) return "M = " + std::to_string(m) + " is outside 1.." + std::to_string(kMaxTokens);
    if (gemm1Rows % kTileN != 0 || hidden % kTileN != 0)
      return "GEMM widths " + std::to_string(gemm1Rows) + " and " + std::to_string(hidden) +
             " are not multiples of the tile's " + std::to_string(kTileN) + " rows";
    if (hidden % skinny::kKStep != 0 || intermediate % skinny::kKStep != 0)
      return "K = " + std::to_string(hidden) + " and " + std::to_string(intermediate) + " must be multiples of " +
             std::to_string(skinny::kKStep);
    if (split.firstParts > std::uint32_t(hidden / skinny::kKStep) ||
        split.secondParts > std::uint32_t(intermediate / skinny::kKStep))
      return "split " + split.label() + " has more parts than k-blocks";
    return "";
  }

  int occupancy() const { return occupancy_; }
  const Stage& first() const { return first_; }
  const Stage& second() const { return second_; }

  void enqueue(const MlpOperands& operands, cudaStream_t stream) const {
    SkinnyChainParams<Policy> p;
    p.m = m_;
    p.gemms[0] = SkinnyGemm{operands.x,          operands.w1, operands.intermediate, firstSplit_.partialsPointer(),
                            firstSplit_.arrivalsPointer(), gemm1Rows(), hidden_,
                            paired_ ? SkinnyActivation::PairedSwiGlu : SkinnyActivation::Gelu};
    p.gemms[1] = SkinnyGemm{operands.intermediate, operands.w2, operands.y, secondSplit_.partialsPointer(),
                            secondSplit_.arrivalsPointer(), hidden_, intermediate_, SkinnyActivation::Identity};
    p.stages[0] = first_.view();
    p.stages[1] = second_.view();
    p.gemm0Output = gemm0Output_;
    p.producerColumnsPerTile = std::uint32_t(paired_ ? kTileN / 2 : kTileN);
    for (int s = 0; s < kSkinnyChainStages; ++s) {
      const SkinnyGemm& g = p.gemms[s];
      p.weightMaps[s] = rowMajorHalfTensorMap(g.w, std::uint64_t(g.n), std::uint64_t(g.k), kTileN, kSkinnyChunk);
      p.activationMaps[s] = rowMajorHalfTensorMap(g.a, std::uint64_t(m_), std::uint64_t(g.k), skinny::kTokens,
                                                  kSkinnyChunk);
    }
    for (const auto& launch : launches_) {
      p.queue = launch->queue();
      skinnyChainKernel<Policy, kTileN, kOneTokenGemv, kSlots>
          <<<launch->persistentBlocks(), kThreads, kSharedBytes, stream>>>(p);
      CUSYNC_CUDA_CHECK(cudaGetLastError());
    }
  }

 private:
  int gemm1Rows() const { return (paired_ ? 2 : 1) * intermediate_; }

  int m_, hidden_, intermediate_;
  bool paired_;
  Stage first_, second_;
  SkinnySplitState firstSplit_, secondSplit_;
  InputView<Policy> gemm0Output_;  // null when stream-ordered
  int occupancy_ = 0;
  std::vector<std::unique_ptr<FusedChain>> launches_;
};

}  // namespace cusync::examples
