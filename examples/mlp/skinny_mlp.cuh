// An MLP for a few tokens (M <= 8) as a chain of two skinny GEMMs, tile-synchronized under the policy cusyncgen
// proves from gpt3_mlp_skinny.dep / llama_mlp_skinny.dep, or the same kernels stream-ordered. Paths (SkinnyPath):
// one persistent launch drawing both GEMMs' units from one queue, on a TMA ring (runtime/include/cusync/
// skinny_chain_kernel.cuh, mma.sync or a one-token GEMV) or streaming through registers (skinny_gemv_chain_kernel.cuh);
// or a launch per GEMM with a block per unit, the second launched with PDL and waiting tile by tile (session 8); or a
// launch per GEMM with a few whole weight rows per block (row_gemv_stage_kernel.cuh, one token;
// row_mma_gemv_stage_kernel.cuh on tensor cores for 1-8 tokens), the second waiting for the whole first grid, which
// is what it reads; or the same over weights packed once in mma fragment order (packed_mma16_gemv_stage_kernel.cuh,
// the fastest at M = 1-8 since session 30). GPT-3 (GELU) or LLaMA (paired SwiGLU, gate and up rows paired per
// kTileN / 2). Include from a .cu file: it instantiates the kernels.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include "common/device_buffers.cuh"
#include "cusync/error.h"
#include "cusync/fused_chain.cuh"
#include "cusync/launch.cuh"
#include "cusync/packed_gemv_pack.cuh"
#include "cusync/packed_mma16_gemv_stage_kernel.cuh"
#include "cusync/row_gemv_stage_kernel.cuh"
#include "cusync/row_mma_gemv_stage_kernel.cuh"
#include "cusync/skinny_chain_kernel.cuh"
#include "cusync/skinny_gemv_chain_kernel.cuh"
#include "cusync/stage.cuh"
#include "cusync/tensor_map.h"
#include "fused_split.h"
#include "mlp_operands.h"

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

// The kernels a skinny chain can run on.
enum class SkinnyPath {
  MmaRing,     // skinny_chain_kernel.cuh, mma.sync, M <= 8 (configurations skinny_32_r<slots>)
  GemvRing,    // skinny_chain_kernel.cuh, CUDA cores, M = 1 (gemv_32_r<slots>)
  GemvStream,  // skinny_gemv_chain_kernel.cuh, persistent, M = 1 (gemv_32_s<blocks per SM>)
  GemvPdl,     // skinny_gemv_chain_kernel.cuh, a launch per stage, one unit per block, the second launched with PDL
               // and waiting tile by tile (gemv_32_p<blocks per SM>)
  GemvRows,    // row_gemv_stage_kernel.cuh, a launch per stage, kGemvRows whole weight rows per block, M = 1, unsplit;
               // synchronized, the second launched with PDL and waiting for the whole first grid (gemv_rows_p<blocks
               // per SM>)
  GemvRowsMma,  // row_mma_gemv_stage_kernel.cuh, as GemvRows but 8 weight rows per block multiplied on tensor cores,
                // M <= 8; the fastest at M = 2-4 until session 30 (session 27; gemv_rows_mma_p<blocks per SM>)
  GemvPackedMma16,  // packed_mma16_gemv_stage_kernel.cuh, as GemvRowsMma with 16 whole weight rows per block read
                    // from W packed once in mma fragment order (the chain's own copy, packGemvWeights), the weights as
                    // the mma's A operand, M <= 16 (past 8 tokens each A fragment multiplies two token tiles, at
                    // most 3 blocks per SM); the fastest at M = 1-8 (session 30, calls 4-6;
                    // gemv_packed_mma16_p<blocks per SM>)
};

// Weight rows a gemv_rows block loads (2 outputs of a paired SwiGLU GEMM 1, 4 of the others) and 16-byte pieces of
// each in flight per thread: bench/mlp/gemv_probe.cu's R = 4, U = 2, B = 4, within 2% of a one-pass read on every
// MLP matrix on the H200 (session 26, call 3).
inline constexpr int kGemvRows = 4;
inline constexpr int kGemvRowsUnroll = 2;
// 4 KB pieces of each weight row per batch in gemv_rows_mma: 1 (a thread holds 8 weight chunks and up to 8 token
// chunks). At 2 blocks of 256 threads per SM (gemv_rows_mma_p2) no instance spills (93-122 registers); at 3, capped
// at 80, the 8-token instance spilled 176 bytes and ran 1.5x slower at M = 8 (session 27, call 4).
inline constexpr int kGemvRowsMmaUnroll = 1;

// `Policy`: the TileSync policy of the skinny spec (gpt3_mlp_skinny.h or llama_mlp_skinny.h); `pairedSwiGlu` (a
// constructor argument): LLaMA's GEMM 1 over paired gate/up rows (W1 [2 * intermediate, hidden], paired per
// kTileN / 2 rows, or per `pairedGroupRows` on the GEMV paths: paired_weight_rows.h). kDepth: the ring paths' slots of
// 20 KB per block; the other paths' blocks per SM.
template <class Policy, SkinnyPath kPath_ = SkinnyPath::MmaRing, int kDepth = 4>
class SkinnyMlpChain {
 public:
  static constexpr SkinnyPath kPath = kPath_;
  static constexpr int kMaxTokens = kPath == SkinnyPath::MmaRing         ? skinny::kTokens
                                    : kPath == SkinnyPath::GemvRowsMma   ? kRowMmaGemvMaxTokens
                                    : kPath == SkinnyPath::GemvPackedMma16 ? kPacked16GemvMaxTokens
                                                                         : 1;
  static constexpr int kTileN = 32;
  static constexpr bool kRing = kPath == SkinnyPath::MmaRing || kPath == SkinnyPath::GemvRing;
  static constexpr bool kRowsMma = kPath == SkinnyPath::GemvRowsMma;
  // The packed-weights GEMV: its blocks read the chain's packed copy of W1 and W2 (packWeights).
  static constexpr bool kPacked = kPath == SkinnyPath::GemvPackedMma16;
  // Weight rows per block of the packed GEMV (the packed layout's block height, packed_gemv_layout.h).
  static constexpr int kPackedRows = kPacked16GemvRows;
  // The whole-rows GEMVs (CUDA cores or tensor cores, row-major or packed weights): unsplit, a block per few whole
  // weight rows.
  static constexpr bool kRows = kPath == SkinnyPath::GemvRows || kRowsMma || kPacked;
  // A launch per GEMM (no queue): the block-per-unit and the whole-rows GEMVs.
  static constexpr bool kLaunchPerGemm = kPath == SkinnyPath::GemvPdl || kRows;
  static constexpr int kThreads = kRing      ? kSkinnyThreads
                                  : kRowsMma ? kRowMmaGemvThreads
                                  : kPacked  ? kPacked16GemvThreads
                                  : kRows    ? kRowGemvThreads
                                             : kSkinnyConsumerWarps * 32;

  static std::string configName() {
    if (kRowsMma) return "gemv_rows_mma_p" + std::to_string(kDepth);
    if (kPacked) return "gemv_packed_mma16_p" + std::to_string(kDepth);
    if (kRows) return "gemv_rows_p" + std::to_string(kDepth);
    return std::string(kPath == SkinnyPath::MmaRing ? "skinny_" : "gemv_") + std::to_string(kTileN) +
           (kRing ? "_r" : kPath == SkinnyPath::GemvStream ? "_s" : "_p") + std::to_string(kDepth);
  }

  SkinnyMlpChain(int m, int hidden, int intermediate, bool pairedSwiGlu, FusedSplit split, int smCount,
                 bool streamOrdered, std::uint32_t pairedGroupRows = kTileN / 2)
      : m_(m), hidden_(hidden), intermediate_(intermediate), paired_(pairedSwiGlu), pairedGroupRows_(pairedGroupRows),
        first_("gemm1", GridShape{std::uint32_t(gemm1Rows() / kTileN), 1, 1}),
        second_("gemm2", GridShape{std::uint32_t(hidden / kTileN), 1, 1}),
        firstSplit_(first_, m, gemm1Rows(), split.firstParts),
        secondSplit_(second_, m, hidden, split.secondParts) {
    const std::string why = whyNot(m, hidden, intermediate, pairedSwiGlu, split, pairedGroupRows);
    if (!why.empty()) throw Error("skinny MLP chain " + configName() + ": " + why);
    if (!streamOrdered && !kRows) {
      first_.setOutputPolicy<Policy>();
      gemm0Output_ = first_.inputFor<Policy>(second_);
    }
    // The whole-rows GEMV, synchronized: its unsplit GEMM 2 reads every GEMM-1 output, so the dependency's wait is the
    // whole first grid (griddepcontrol.wait; no semaphores).
    if (!streamOrdered && kRows) pdlGridSync_ = true;
    // The register paths stage a unit's activations: the longest k-range of either stage. The CUDA-core whole-rows
    // GEMV stages nothing; the tensor-core one its warps' transpose buffers, which grow with the instance's tokens;
    // the packed one only its warps' sums (static).
    const int longestKRange = std::max(longestPart(hidden, split.firstParts), longestPart(intermediate, split.secondParts));
    sharedBytes_ = kRing       ? skinnySharedBytes<kTileN, kDepth>()
                   : kRowsMma ? rowMmaGemvSharedBytes(tokensOfInstance(m))
                   : kRows    ? 0
                              : 2 * longestKRange;
    const int perSm = blocksPerSm(sharedBytes_, m);  // also lets the kernel launch with sharedBytes_
    if (perSm == 0) throw Error("skinny MLP chain " + configName() + ": no block fits an SM");
    const std::uint32_t slots = std::uint32_t(smCount) * std::uint32_t(perSm);
    occupancy_ = perSm;
    streamOrdered_ = streamOrdered;
    if constexpr (kLaunchPerGemm) return;  // no queue: a launch per stage
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
  static std::string whyNot(int m, int hidden, int intermediate, bool pairedSwiGlu, FusedSplit split,
                            std::uint32_t pairedGroupRows = kTileN / 2) {
    const int gemm1Rows = (pairedSwiGlu ? 2 : 1) * intermediate;
    if (pairedSwiGlu && pairedGroupRows != kTileN / 2) {
      if (kRing)
        return "the TMA ring paths read a paired tile as one box: gate and up rows must pair per " +
               std::to_string(kTileN / 2) + " rows, not " + std::to_string(pairedGroupRows);
      if (pairedGroupRows == 0 || pairedGroupRows % (kTileN / 2) != 0 || intermediate % int(pairedGroupRows) != 0)
        return "gate/up pairing groups of " + std::to_string(pairedGroupRows) + " rows must be a multiple of " +
               std::to_string(kTileN / 2) + " that divides the intermediate size " + std::to_string(intermediate);
    }
    if (m < 1 || m > kMaxTokens) return "M = " + std::to_string(m) + " is outside 1.." + std::to_string(kMaxTokens);
    if (kRows) {
      if (split.firstParts != 1 || split.secondParts != 1) return "the whole-rows GEMV does not split K";
      const int firstOutputs = outputsPerBlock(pairedSwiGlu ? SkinnyActivation::PairedSwiGlu : SkinnyActivation::Gelu);
      const int secondOutputs = outputsPerBlock(SkinnyActivation::Identity);
      if (intermediate % firstOutputs != 0 || hidden % secondOutputs != 0)
        return "GEMM widths " + std::to_string(intermediate) + " and " + std::to_string(hidden) +
               " are not multiples of a block's " + std::to_string(firstOutputs) + " and " +
               std::to_string(secondOutputs) + " outputs";
      if (hidden % 8 != 0 || intermediate % 8 != 0) return "K must be a multiple of 8 (16-byte loads)";
      // The default groups too: a block holds fewer paired outputs than a group, so the width check alone passes an
      // intermediate size whose last group is cut short, whose up rows W1 does not have.
      if (pairedSwiGlu && intermediate % int(pairedGroupRows) != 0)
        return "gate/up pairing groups of " + std::to_string(pairedGroupRows) + " rows do not divide the "
               "intermediate size " + std::to_string(intermediate);
      return "";
    }
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

  // The PDL grid-sync baseline of the launch-per-GEMM path: a stream-ordered chain (no semaphores) whose second
  // launch starts early by PDL and waits for the whole first grid (griddepcontrol.wait) instead of tile by tile.
  void setPdlGridSync(bool enabled) {
    if (kRows && !streamOrdered_) return;  // synchronized, it already waits for the whole first grid
    if (enabled && (!kLaunchPerGemm || !streamOrdered_))
      throw Error("skinny MLP chain " + configName() +
                  ": the PDL grid-sync baseline needs a stream-ordered launch-per-GEMM chain");
    pdlGridSync_ = enabled;
  }

  // The launch-per-GEMM path: each GEMM-2 block asks L2 to prefetch the first `bytesPerRow` of each of its weight
  // rows before it waits for GEMM 1 (SkinnyChainParams::consumerL2PrefetchBytes); 0, the default: none.
  void setConsumerL2Prefetch(std::uint32_t bytesPerRow) {
    if (bytesPerRow != 0 && kPath != SkinnyPath::GemvPdl)
      throw Error("skinny MLP chain " + configName() + ": L2 prefetch of the consumer's weights needs a gemv_*_p chain");
    consumerL2PrefetchBytes_ = bytesPerRow;
  }

  // The launch-per-GEMM path: the order of GEMM 2's blocks when it is split along K (hardware order follows it).
  // PartsOfATileTogether (the default) puts a tile's k-ranges together, so the GEMM-2 blocks that become resident
  // while GEMM 1's last blocks still run need every GEMM-1 column. KRangesInTurn puts every tile's first k-range
  // first: those blocks read only the GEMM-1 columns of GEMM 1's first blocks (hardware order, column by column),
  // done by then when GEMM 1 runs in more than one round, so they start while GEMM 1 finishes. Any order is
  // deadlock-free here: GEMM 1 waits for nothing and PDL starts GEMM 2's blocks only once every GEMM-1 block runs.
  void setSecondPartOrder(PartOrder order) {
    if (order != PartOrder::PartsOfATileTogether && kPath != SkinnyPath::GemvPdl)
      throw Error("skinny MLP chain " + configName() + ": GEMM 2's part order is a gemv_*_p chain's choice");
    second_.setPartOrder(order);
  }

  // The launch-per-GEMM path, diagnostics: each launch's blocks write a record (block_trace.h) at first[blockIdx.x]
  // and second[blockIdx.x], as many as the stage's work units; null: none.
  void setBlockTraces(BlockTrace* first, BlockTrace* second) {
    if ((first != nullptr || second != nullptr) && !kLaunchPerGemm)
      throw Error("skinny MLP chain " + configName() + ": block traces need a launch-per-GEMM chain");
    traces_[0] = first;
    traces_[1] = second;
  }

  int occupancy() const { return occupancy_; }
  // Blocks of a launch-per-GEMM stage's launch (its block traces have as many records): a block per work unit, or
  // for the whole-rows GEMVs a block per outputsPerBlock outputs.
  std::uint32_t blocksOfStage(int s) const {
    const Stage& stage = s == 0 ? first_ : second_;
    if (!kRows) return stage.workUnitsPerLaunch();
    const int outputs = s == 0 ? (paired_ ? intermediate_ : gemm1Rows()) : hidden_;
    const SkinnyActivation activation =
        s == 0 && paired_ ? SkinnyActivation::PairedSwiGlu : SkinnyActivation::Identity;
    return std::uint32_t(outputs / outputsPerBlock(activation));
  }
  // Output features per block of a whole-rows GEMV stage with this activation.
  static constexpr int outputsPerBlock(SkinnyActivation activation) {
    return rowGemvOutputsPerBlock<kRowsMma ? kRowMmaGemvRows : kPacked ? kPackedRows : kGemvRows>(activation);
  }
  // Blocks of this chain's kernel for m tokens that fit on an SM of the current device with `sharedBytes` of dynamic
  // shared memory (the register paths' activation slice grows with the k-range; the tensor-core whole-rows GEMV's
  // transpose buffers with the tokens). The kernel's dynamic shared memory limit is raised to `sharedBytes` first:
  // below it (48 KB by default) the occupancy query answers 0, and the PyTorch op asks before any chain exists.
  // Raised, never lowered: the attribute belongs to the kernel, and chains of one kernel with different splits
  // (different sizes) may all be alive and launched in turn (mlp_fused_example --interleave); set to each new
  // chain's size, it made the larger ones' launches fail with cudaErrorInvalidValue (session 20).
  // (KernelOccupancy::allowSharedMemory's rule, for a kernel chosen at run time.)
  static int blocksPerSm(int sharedBytes, int m = 1) {
    const auto kernel = kernelFor(m);
    cudaFuncAttributes attributes{};
    CUSYNC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    if (attributes.maxDynamicSharedSizeBytes < sharedBytes)
      CUSYNC_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, sharedBytes));
    int blocks = 0;
    CUSYNC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kThreads, sharedBytes));
    return blocks;
  }
  // Blocks per SM of the instance for kMaxTokens, with the shared memory that instance always takes (the tensor-core
  // whole-rows GEMV's transpose buffers) and no k-range activation slice (the register paths', which grows with the
  // split: a chain checks its real occupancy when it is built). What the PyTorch op reports for a configuration.
  static int blocksPerSmAtMostTokens() {
    return blocksPerSm(kRowsMma ? rowMmaGemvSharedBytes(tokensOfInstance(kMaxTokens)) : 0, kMaxTokens);
  }
  const Stage& first() const { return first_; }
  const Stage& second() const { return second_; }

  // The packed-weights path: packs W1 and W2 of `operands` into the chain's own copies (packed_gemv_layout.h), in
  // `stream`. enqueue does it itself the first time it sees these weights outside a graph capture; call it again
  // after changing the weights in place (the copies are not refreshed otherwise).
  void packWeights(const MlpOperands& operands, cudaStream_t stream) const {
    if constexpr (kPacked) {
      const int widths[2] = {gemm1Rows(), hidden_}, depths[2] = {hidden_, intermediate_};
      const __half* weights[2] = {operands.w1, operands.w2};
      for (int s = 0; s < 2; ++s) {
        if (!packed_[s])
          packed_[s] = std::make_unique<DeviceBuffer<uint4>>(packedGemvVectors(widths[s], depths[s], kPackedRows));
        packGemvWeights(weights[s], packed_[s]->get(), widths[s], depths[s],
                        s == 0 && paired_ ? pairedGroupRows_ : 0u, stream, kPackedRows);
        packedFrom_[s] = weights[s];
      }
    } else {
      (void)operands;
      (void)stream;
    }
  }

  // The packed-weights path: the caller packs (packGemvWeights, pairing W1 per pairedGroupRows when paired) and passes
  // the packed copies as the operands' w1 and w2; the chain keeps none of its own. The PyTorch op's mode: it packs
  // once per weight tensor, not per chain.
  void setWeightsPrepacked() {
    if (!kPacked)
      throw Error("skinny MLP chain " + configName() + ": only gemv_packed_mma* chains read packed weights");
    prepacked_ = true;
  }

  void enqueue(const MlpOperands& operands, cudaStream_t stream) const {
    if constexpr (kPacked)
      if (!prepacked_ && (operands.w1 != packedFrom_[0] || operands.w2 != packedFrom_[1])) {
        cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
        CUSYNC_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
        if (capture != cudaStreamCaptureStatusNone)
          throw Error("skinny MLP chain " + configName() +
                      ": these weights are not packed yet; run the chain (or packWeights) once outside the capture");
        packWeights(operands, stream);
      }
    SkinnyChainParams<Policy> p;
    p.m = m_;
    p.gemms[0] = SkinnyGemm{operands.x,          operands.w1, operands.intermediate, firstSplit_.partialsPointer(),
                            firstSplit_.arrivalsPointer(), gemm1Rows(), hidden_,
                            paired_ ? SkinnyActivation::PairedSwiGlu : SkinnyActivation::Gelu};
    p.gemms[0].pairedGroupRows = paired_ ? pairedGroupRows_ : 0u;
    p.gemms[1] = SkinnyGemm{operands.intermediate, operands.w2, operands.y, secondSplit_.partialsPointer(),
                            secondSplit_.arrivalsPointer(), hidden_, intermediate_, SkinnyActivation::Identity};
    p.stages[0] = first_.view();
    p.stages[1] = second_.view();
    p.gemm0Output = gemm0Output_;
    p.producerColumnsPerTile = std::uint32_t(paired_ ? kTileN / 2 : kTileN);
    if constexpr (kPacked)  // the kernel reads the packed copies in W's place
      if (!prepacked_) {
        p.gemms[0].w = reinterpret_cast<const __half*>(packed_[0]->get());
        p.gemms[1].w = reinterpret_cast<const __half*>(packed_[1]->get());
      }
    p.secondWaitsForWholeGrid = pdlGridSync_;
    p.consumerL2PrefetchBytes = consumerL2PrefetchBytes_;
    p.traces[0] = traces_[0];
    p.traces[1] = traces_[1];
    if constexpr (kRing)  // only the ring paths copy by TMA
      for (int s = 0; s < kSkinnyChainStages; ++s) {
        const SkinnyGemm& g = p.gemms[s];
        p.weightMaps[s] = rowMajorHalfTensorMap(g.w, std::uint64_t(g.n), std::uint64_t(g.k), kTileN, kSkinnyChunk);
        p.activationMaps[s] = rowMajorHalfTensorMap(g.a, std::uint64_t(m_), std::uint64_t(g.k), skinny::kTokens,
                                                    kSkinnyChunk);
      }
    if constexpr (kLaunchPerGemm) {
      launchKernel(kernelFor(m_), dim3(blocksOfStage(0)), dim3(kThreads), sharedBytes_, stream,
                   LaunchOrdering::StreamOrder, p, 0u);
      launchKernel(kernelFor(m_), dim3(blocksOfStage(1)), dim3(kThreads), sharedBytes_, stream,
                   streamOrdered_ && !pdlGridSync_ ? LaunchOrdering::StreamOrder : LaunchOrdering::Programmatic, p,
                   1u);
    } else {
      for (const auto& launch : launches_) {
        p.queue = launch->queue();
        kernelFor(m_)<<<launch->persistentBlocks(), kThreads, sharedBytes_, stream>>>(p);
        CUSYNC_CUDA_CHECK(cudaGetLastError());
      }
    }
  }

 private:
  int gemm1Rows() const { return (paired_ ? 2 : 1) * intermediate_; }
  static auto kernel() {
    if constexpr (kPath == SkinnyPath::GemvStream)
      return skinnyGemvChainKernel<Policy, kTileN, 2, kDepth>;
    else if constexpr (kPath == SkinnyPath::GemvPdl)
      return skinnyGemvStageKernel<Policy, kTileN, 2, kDepth>;
    else if constexpr (kRowsMma)
      static_assert(!kRowsMma, "kernelFor picks the tensor-core whole-rows GEMV's instance by token count");
    else if constexpr (kPacked)
      static_assert(!kPacked, "kernelFor picks the packed GEMV's instance by token count");
    else if constexpr (kRows)
      return rowGemvStageKernel<Policy, kGemvRows, kGemvRowsUnroll, kDepth>;
    else
      return skinnyChainKernel<Policy, kTileN, kPath == SkinnyPath::GemvRing, kDepth>;
  }
  // The kernel that runs m tokens: the tensor-core whole-rows GEMV has an instance per token bound (1, 2, 4, 8: each
  // holds and transposes only the token rows it may have), the packed one per token tile count (8 or 16 tokens); the
  // other paths one.
  static constexpr int tokensOfInstance(int m) { return m <= 1 ? 1 : m <= 2 ? 2 : m <= 4 ? 4 : 8; }
  static auto kernelFor(int m) {
    if constexpr (kRowsMma) {
      constexpr auto instance = [](auto tokens) {
        return rowMmaGemvStageKernel<Policy, kGemvRowsMmaUnroll, kDepth, decltype(tokens)::value>;
      };
      switch (tokensOfInstance(m)) {
        case 1: return instance(std::integral_constant<int, 1>{});
        case 2: return instance(std::integral_constant<int, 2>{});
        case 4: return instance(std::integral_constant<int, 4>{});
        default: return instance(std::integral_constant<int, 8>{});
      }
    } else if constexpr (kPacked) {
      // One token tile up to 8 tokens, two up to 16 (each A fragment multiplied by both).
      return packed16GemvTokenTiles(m) == 1 ? packedMma16GemvStageKernel<Policy, kDepth, 1>
                                            : packedMma16GemvStageKernel<Policy, kDepth, 2>;
    } else {
      (void)m;
      return kernel();
    }
  }
  // The longest k-range of a part, in k (kBlocksOfPart's balanced split).
  static int longestPart(int k, std::uint32_t parts) {
    const int kBlocks = k / skinny::kKStep;
    return (kBlocks + int(parts) - 1) / int(parts) * skinny::kKStep;
  }

  int m_, hidden_, intermediate_;
  bool paired_;
  std::uint32_t pairedGroupRows_;
  Stage first_, second_;
  SkinnySplitState firstSplit_, secondSplit_;
  InputView<Policy> gemm0Output_;  // null when stream-ordered
  int occupancy_ = 0, sharedBytes_ = 0;
  bool streamOrdered_ = false;
  bool pdlGridSync_ = false;
  std::uint32_t consumerL2PrefetchBytes_ = 0;
  BlockTrace* traces_[2] = {nullptr, nullptr};
  std::vector<std::unique_ptr<FusedChain>> launches_;
  // The packed-weights path: W1 and W2 in the kernel's layout, and the weights they were packed from (a cache of the
  // operands, filled by packWeights, hence mutable).
  mutable std::unique_ptr<DeviceBuffer<uint4>> packed_[2];
  mutable const __half* packedFrom_[2] = {nullptr, nullptr};
  bool prepacked_ = false;  // setWeightsPrepacked: the operands' w1 and w2 are packed copies
};

// A type as a value, for forEachSkinnyPath's visitor (std::type_identity is C++20; the examples are C++17).
template <class Chain>
struct SkinnyChainType {
  using type = Chain;
};

// Calls visit(SkinnyChainType<Chain>{}) for each skinny chain the examples build, one per path: what
// mlp_fused_example runs and selects by name, and what mlp_skinny_stress stresses. Session 8 (docs/BENCHMARKS.md):
// gemv_32_p4 is the fastest at M = 1; the others are kept to compare against it (ring depth 9 measured no faster
// than 4 and is not built).
template <class Policy, class Visit>
void forEachSkinnyPath(Visit&& visit) {
  visit(SkinnyChainType<SkinnyMlpChain<Policy, SkinnyPath::MmaRing, 4>>{});
  visit(SkinnyChainType<SkinnyMlpChain<Policy, SkinnyPath::GemvRing, 4>>{});
  visit(SkinnyChainType<SkinnyMlpChain<Policy, SkinnyPath::GemvStream, 4>>{});
  visit(SkinnyChainType<SkinnyMlpChain<Policy, SkinnyPath::GemvPdl, 4>>{});
  visit(SkinnyChainType<SkinnyMlpChain<Policy, SkinnyPath::GemvRows, 4>>{});
  visit(SkinnyChainType<SkinnyMlpChain<Policy, SkinnyPath::GemvRowsMma, 2>>{});
  // 3 blocks per SM the faster for GPT-3's shapes, 4 for LLaMA's (session 30, call 6).
  visit(SkinnyChainType<SkinnyMlpChain<Policy, SkinnyPath::GemvPackedMma16, 3>>{});
  visit(SkinnyChainType<SkinnyMlpChain<Policy, SkinnyPath::GemvPackedMma16, 4>>{});
}

}  // namespace cusync::examples
