// The attention block as a chain of three stages (QKV GEMM -> attention -> output GEMM) and the variants the example
// runs side by side with the same kernels, plus the buffers and the reference every variant is checked against.
// Host code with small kernels; include from one .cu file per program.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "attention_fmha.h"
#include "attention_gemm_split.h"
#include "attention_gemms.h"
#include "attention_kernels.cuh"
#include "attention_policies.h"
#include "attention_problem.h"
#include "common/cublas_gemm.cuh"
#include "common/device_buffers.cuh"
#include "common/kernel_occupancy.cuh"
#include "cusync/cusync.cuh"
#include "cusync/packed_gemv_pack.cuh"
#include "decode_attention_form.h"

namespace cusync::examples::attention {

// ---- Buffers and reference ---------------------------------------------------------------------------------------

// Blocks of the packed GEMV stage's weights (hooked_packed_gemv_kernel.cuh): whole 16-row blocks.
inline constexpr int kPackedWeightRows = 16;

// Whether the packed GEMV stage can read this problem's weights: token generation (the only phase with GEMV stages)
// over matrices of whole 16-row blocks.
inline bool packsWeights(const AttentionProblem& p, int n, int k) {
  return p.phase == Phase::Decode && n % kPackedWeightRows == 0 && k % 8 == 0;
}
// The weights packed for the packed GEMV stage (packed_gemv_layout.h at 16 rows); a placeholder vector where it cannot
// read them (prompt processing would otherwise hold a second copy of every weight, 151 MB for GPT-3).
inline std::size_t packedWeightVectors(const AttentionProblem& p, int n, int k) {
  return packsWeights(p, n, k) ? packedGemvVectors(n, k, kPackedWeightRows) : 1;
}

struct AttentionBuffers {
  DeviceBuffer<__half> x, wqkv, wo, qkv, t, y, kCache, vCache;
  DeviceBuffer<__half> qkvReference, tReference, yReference;
  DeviceBuffer<__half> appended, appendedReference;  // the caches' new positions [S', S'+S) as [tokens, 2 * H/8]
  // Wqkv and Wo packed for the packed GEMV stage, refreshed with every new weights (prepareAttentionReference).
  DeviceBuffer<uint4> wqkvPacked, woPacked;
  explicit AttentionBuffers(const AttentionProblem& p)
      : x(std::size_t(p.tokens()) * p.shape.hidden),
        wqkv(std::size_t(p.qkvColumns()) * p.shape.hidden),
        wo(std::size_t(p.shape.hidden) * p.tColumns()),
        qkv(std::size_t(p.tokens()) * p.qkvColumns()),
        t(std::size_t(p.tokens()) * p.tColumns()),
        y(std::size_t(p.tokens()) * p.shape.hidden),
        kCache(std::size_t(p.batch) * p.shape.heads * p.cacheCapacity() * kHeadDim),
        vCache(std::size_t(p.batch) * p.shape.heads * p.cacheCapacity() * kHeadDim),
        qkvReference(qkv.size()),
        tReference(t.size()),
        yReference(y.size()),
        appended(std::size_t(p.tokens()) * 2 * p.tColumns()),
        appendedReference(appended.size()),
        wqkvPacked(packedWeightVectors(p, p.qkvColumns(), p.shape.hidden)),
        woPacked(packedWeightVectors(p, p.shape.hidden, p.tColumns())) {}
};

namespace detail {

// The caches' positions [S', S'+S) of every (sequence, head): poisoned (NaN) before a checked run, or gathered as
// [token, K or V, head, dimension] to be compared with the K and V columns of the reference QKV.
template <int = 0>
__global__ void appendedRegion(__half* kCache, __half* vCache, __half* gathered, std::uint32_t tokens,
                               std::uint32_t heads, std::uint32_t sequenceLength, std::uint32_t cached,
                               std::uint32_t capacity, bool poison) {
  const std::size_t count = std::size_t(tokens) * 2 * heads * kHeadDim;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint32_t d = i % kHeadDim, head = (i / kHeadDim) % heads, part = (i / (kHeadDim * heads)) % 2;
    const std::uint32_t token = i / (2 * heads * kHeadDim);
    const std::uint32_t sequence = token / sequenceLength, position = cached + token % sequenceLength;
    __half* cache = (part == 0 ? kCache : vCache) +
                    ((std::size_t(sequence) * heads + head) * capacity + position) * kHeadDim + d;
    if (poison) *cache = __ushort_as_half(0x7E00);
    else gathered[i] = *cache;
  }
}

// The K and V columns of QKV, as appendedRegion gathers the caches.
template <int = 0>
__global__ void keyValueColumns(const __half* qkv, __half* out, std::uint32_t tokens, std::uint32_t heads) {
  const std::size_t width = std::size_t(2) * heads * kHeadDim;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < tokens * width;
       i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = qkv[(i / width) * 3 * heads * kHeadDim + heads * kHeadDim + i % width];
}

}  // namespace detail

inline void poisonAppended(AttentionBuffers& b, const AttentionProblem& p, cudaStream_t stream) {
  detail::appendedRegion<><<<512, 256, 0, stream>>>(b.kCache.get(), b.vCache.get(), nullptr, p.tokens(),
                                                    p.shape.heads, p.sequence, p.cached, p.cacheCapacity(), true);
  CUSYNC_CUDA_CHECK(cudaGetLastError());
}
inline void gatherAppended(AttentionBuffers& b, const AttentionProblem& p, cudaStream_t stream) {
  detail::appendedRegion<><<<512, 256, 0, stream>>>(b.kCache.get(), b.vCache.get(), b.appended.get(), p.tokens(),
                                                    p.shape.heads, p.sequence, p.cached, p.cacheCapacity(), false);
  CUSYNC_CUDA_CHECK(cudaGetLastError());
}

// Fresh inputs: X uniform in [-1, 1); weights scaled so that QKV entries have a standard deviation near 1.3 and the
// scores q.k / sqrt(128) near 1.8 (softmax far from uniform, so that a wrong score shows); cached K and V of the
// same spread. Then the reference: cuBLASLt QKV GEMM, fp32 attention (referenceAttentionKernel) from the caches as
// they are now, cuBLASLt output GEMM.
inline void prepareAttentionReference(AttentionBuffers& b, const AttentionProblem& p, std::uint64_t seed,
                                      cublasLtHandle_t lt, void* workspace, std::size_t workspaceBytes,
                                      cudaStream_t stream) {
  fillRandom(b.x, seed * 7 + 1, 1.0f, stream);
  fillRandom(b.wqkv, seed * 7 + 2, 4.0f / std::sqrt(float(p.shape.hidden)), stream);
  fillRandom(b.wo, seed * 7 + 3, 1.0f / std::sqrt(float(p.tColumns())), stream);
  // The packed copies the packed GEMV stage reads, from these weights (where they are whole 16-row blocks).
  if (packsWeights(p, p.qkvColumns(), p.shape.hidden))
    packGemvWeights(b.wqkv.get(), b.wqkvPacked.get(), p.qkvColumns(), p.shape.hidden, 0, stream, kPackedWeightRows);
  if (packsWeights(p, p.shape.hidden, p.tColumns()))
    packGemvWeights(b.wo.get(), b.woPacked.get(), p.shape.hidden, p.tColumns(), 0, stream, kPackedWeightRows);
  fillRandom(b.kCache, seed * 7 + 4, 2.3f, stream);
  fillRandom(b.vCache, seed * 7 + 5, 2.3f, stream);
  CublasLtGemm qkvGemm(lt, p.tokens(), p.qkvColumns(), p.shape.hidden, false, workspace, workspaceBytes);
  CublasLtGemm outGemm(lt, p.tokens(), p.shape.hidden, p.tColumns(), false, workspace, workspaceBytes);
  qkvGemm.run(b.x.get(), b.wqkv.get(), b.qkvReference.get(), stream);
  const std::size_t scoreBytes = std::size_t(p.cached + p.sequence) * sizeof(float);
  // Raised to each longer cache's scores (attention_decode_stress runs several lengths in one process).
  KernelOccupancy<&referenceAttentionKernel<>>::allowSharedMemory(int(scoreBytes));
  referenceAttentionKernel<><<<dim3(p.tokens(), p.shape.heads), kReferenceThreads, scoreBytes, stream>>>(
      b.qkvReference.get(), b.kCache.get(), b.vCache.get(), b.tReference.get(), p.shape.heads, p.sequence,
      p.cached, p.cacheCapacity());
  CUSYNC_CUDA_CHECK(cudaGetLastError());
  outGemm.run(b.tReference.get(), b.wo.get(), b.yReference.get(), stream);
  detail::keyValueColumns<><<<512, 256, 0, stream>>>(b.qkvReference.get(), b.appendedReference.get(), p.tokens(),
                                                     p.shape.heads);
  CUSYNC_CUDA_CHECK(cudaGetLastError());
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// ---- Variants ----------------------------------------------------------------------------------------------------

// How the three stages are ordered. StreamSync, PdlGridSync, WaitKernel and Pdl run the same three kernels (the
// hooked GEMMs and the attention kernel); CublasAttention runs cuBLASLt GEMMs around the same attention kernel,
// stream-ordered. PdlGridSync is the baseline that programmatic dependent launch gives without cusync: each
// kernel launched early and waiting for the whole previous one (griddepcontrol.wait) before reading its output.
// StreamThenPdl synchronizes only the second dependency: the attention stage runs after the whole QKV GEMM (stream
// order) and the output GEMM, launched programmatically, waits for T tile by tile. Why (session 19): at 512 tokens
// the QKV GEMM is one wave, so its first dependency has nothing to overlap, and an attention stage launched while
// the QKV GEMM's blocks retire ran 2x slower than one launched on an idle GPU.
enum class Ordering { StreamSync, PdlGridSync, WaitKernel, Pdl, StreamThenPdl, CublasAttention };
inline const char* orderingName(Ordering o) {
  switch (o) {
    case Ordering::StreamSync: return "StreamSync";
    case Ordering::PdlGridSync: return "PDL-GridSync";
    case Ordering::WaitKernel: return "WaitKernel";
    case Ordering::Pdl: return "PDL";
    case Ordering::StreamThenPdl: return "PDL";
    case Ordering::CublasAttention: return "cuBLAS+attn";
  }
  return "?";
}

struct Variant {
  Ordering ordering;
  // The T dependency's policy (synchronized variants). The QKV dependency's is the QKV GEMM's tiling's: "Strided"
  // in the name is StridedSync for head-wide tiles; narrower and wider ones wait under RowSync (the description
  // says so); "Stream" in the name: the QKV dependency is left to the stream.
  TPolicyKind tPolicy;
  // Some dependency waits tile by tile (T's, at least).
  bool synchronized() const {
    return ordering == Ordering::WaitKernel || ordering == Ordering::Pdl || ordering == Ordering::StreamThenPdl;
  }
  // The QKV dependency too: the QKV GEMM posts its tiles and the attention stage waits for them.
  bool qkvSynchronized() const { return ordering == Ordering::WaitKernel || ordering == Ordering::Pdl; }
  // Whether a stage's launch is programmatic (PDL): its producer's blocks trigger it (griddepcontrol.launch_dependents)
  // so that its blocks start once every producer block is resident and wait on the GPU (tile by tile, or for the
  // whole grid under PdlGridSync) instead of queueing behind the producer's end. Launch and trigger go together: a
  // trigger with no programmatic launch behind it lets nothing go, a programmatic launch never triggered starts only
  // at the producer's end. So the stage ordering (stageOrderingOf), the attention stage's launch ordering and the
  // kernels' triggers are all read from these two.
  // The attention stage's launch: programmatic under Pdl and PdlGridSync; StreamThenPdl stream-orders it, so that the
  // attention stage starts after the whole QKV GEMM, on an idle GPU (see Ordering).
  bool qkvTriggersAttentionLaunch() const { return ordering == Ordering::Pdl || ordering == Ordering::PdlGridSync; }
  // The output GEMM's launch: programmatic under every PDL ordering, StreamThenPdl's included.
  bool attentionTriggersOutputLaunch() const {
    return qkvTriggersAttentionLaunch() || ordering == Ordering::StreamThenPdl;
  }
  std::string name() const {
    if (!synchronized()) return orderingName(ordering);
    return std::string(qkvSynchronized() ? "Strided+" : "Stream+") + tPolicyName(tPolicy) + "+" +
           orderingName(ordering);
  }
};

inline std::vector<Variant> allVariants() {
  return {{Ordering::CublasAttention, TPolicyKind::TileSync}, {Ordering::StreamSync, TPolicyKind::TileSync},
          {Ordering::PdlGridSync, TPolicyKind::TileSync},     {Ordering::WaitKernel, TPolicyKind::TileSync},
          {Ordering::WaitKernel, TPolicyKind::RowSync},       {Ordering::Pdl, TPolicyKind::TileSync},
          {Ordering::Pdl, TPolicyKind::RowSync},              {Ordering::StreamThenPdl, TPolicyKind::TileSync},
          {Ordering::StreamThenPdl, TPolicyKind::RowSync}};
}

// The GEMMs one run of the chain uses: a configuration of each role and its split-K choice (1 part: no split).
struct GemmChoice {
  const AttentionGemm* qkv = nullptr;
  const AttentionGemm* out = nullptr;
  SplitChoice qkvSplit, outSplit;
  // Persistent GEMMs: CUTLASS's static schedule of units, or a ticket per unit (StageView::staticUnits). Static is
  // 10-18% faster for the output GEMMs alone (session 17, call 3); in chains that overlap the stages a ticket can
  // win, because it hands a late block's units to the blocks that are running.
  bool qkvStaticUnits = true, outStaticUnits = true;
};

// The runtime's ordering of a variant's three stages (chain_executor.cuh); the cuBLAS variant is enqueued by hand.
// ProgrammaticLaunch makes every stage after the first programmatic when either launch is; AttentionChain takes the
// attention stage's launch back to stream order where the QKV GEMM does not trigger it (StreamThenPdl).
inline StageOrdering stageOrderingOf(const Variant& variant) {
  if (variant.ordering == Ordering::WaitKernel) return StageOrdering::WaitKernel;
  if (variant.qkvTriggersAttentionLaunch() || variant.attentionTriggersOutputLaunch())
    return StageOrdering::ProgrammaticLaunch;
  return StageOrdering::StreamOrder;
}

// One attention block of a given variant, with its stages: qkv (the QKV GEMM, posting under StridedSync in the
// grouped tile order with head-wide tiles, under RowSync in row-major order with the prompt's narrower ones), attn
// (the attention kernel, waiting under the QKV GEMM's policy, posting T under the variant's policy) and out (the
// output GEMM, waiting for T).
template <Model M, Phase P>
class AttentionChain {
  using ChainPolicies = Policies<M, P>;

 public:
  // `gemms`: the GEMM configurations (the output GEMM's waiting under the variant's T policy); the cuBLAS variant
  // uses only their QKV tile rows, which the attention kernel reads QKV's semaphores by.
  // Its side streams (WaitKernel) are blocking, like the caller's: the helpers that fill and compare buffers run
  // on the legacy default stream.
  // `attentionOrder`: the order the prompt attention stage takes its head tiles in (promptAttentionOrder);
  // `partOrder`: how the GEMMs' split-K parts follow each other (part_order.h); `promptQueryParts`: blocks per
  // prompt attention tile (1: 128 queries each, 2: 64, 0: promptAttentionBlocks chooses); `decodeBlocksPerSm`: the
  // token-generation attention stage's blocks per SM that decodeParts splits the cache for;
  // `decodeTriggerAfterWait`: its blocks let the output GEMM launch (PDL) once they have their q, k and v, not at
  // their start. `outputGroupRows`: the output GEMM's tile order takes its rows of tiles that many at a time, column
  // by column (grouped_order.h; 1: row-major). Nobody waits on the output GEMM, so its order is free of deadlock; a
  // group covering all the rows is column-major, where the tiles in flight share few columns of Wo (L2 reuse;
  // session 13, call 7: 5-24% faster output GEMMs at the prompt shapes than row-major, alone). `promptKernel`: the
  // prompt attention stage's kernel (CUTLASS's flash attention takes one block per tile). `qkvGroupRows`: the QKV
  // GEMM's (head, row) groups taken that many rows at a time, head by head (qkvGroupedIndex; 1: the spec's order);
  // head-wide QKV tiles only, narrow ones take row-major order. `decodeForm`: how the token-generation
  // attention stage computes each part's softmax (decode_attention_form.h; Automatic chooses per shape).
  AttentionChain(const AttentionProblem& problem, Variant variant, GemmChoice gemms, AttentionBuffers& buffers,
                 int multiprocessors, cublasLtHandle_t lt, void* workspace, std::size_t workspaceBytes,
                 AttentionOrder attentionOrder = AttentionOrder::Rows,
                 PartOrder partOrder = PartOrder::PartsOfATileTogether, std::uint32_t promptQueryParts = 1,
                 std::uint32_t decodeBlocksPerSm = kDecodeBlocksPerSm, bool decodeTriggerAfterWait = false,
                 std::uint32_t outputGroupRows = 1,
                 PromptAttentionKernel promptKernel = PromptAttentionKernel::FlashMma, std::uint32_t qkvGroupRows = 1,
                 DecodeAttentionForm decodeForm = DecodeAttentionForm::Automatic)
      : problem_(problem), variant_(variant), buffers_(buffers), decodeTriggerAfterWait_(decodeTriggerAfterWait),
        promptKernel_(promptKernel),
        executor_(stageOrderingOf(variant), cudaStreamDefault) {
    const bool cublas = variant.ordering == Ordering::CublasAttention;
    const TPolicyKind tKind = variant.tPolicy;
    qkvGemm_ = gemms.qkv;
    outGemm_ = gemms.out;
    qkv_ = std::make_unique<Stage>("qkv", qkvGemm_->tileGrid(problem.tokens(), problem.qkvColumns()));
    out_ = std::make_unique<Stage>("out", outGemm_->tileGrid(problem.tokens(), problem.shape.hidden));
    const GridShape attentionGrid =
        P == Phase::Prompt ? GridShape{std::uint32_t(problem.shape.heads), std::uint32_t(problem.tokens() / 128), 1}
                           : GridShape{std::uint32_t(problem.shape.heads), std::uint32_t(problem.batch), 1};
    attn_ = std::make_unique<Stage>("attn", attentionGrid);
    // The QKV GEMM's tiling: head-wide tiles post under StridedSync in the spec's grouped order, narrower or wider
    // ones (prompt only) under RowSync in row-major order (attention_policies.h).
    qkvTiling_ = qkvTilingOf(qkvGemm_->tile.n);
    // A GEMM in clusters computes the tiles of its cluster's rows together: the same order over clusters of rows
    // (the QKV stage waits for nothing, so any order is free of deadlock; the order only decides which head tiles
    // the attention stage gets first).
    // Groups of more than one row: qkvGroupedIndex (the spec's order is its groups of one row).
    if (qkvGroupRows == 0) throw Error("attention_example: the QKV GEMM's row groups hold at least one row");
    const std::uint32_t qkvClusterRows = std::uint32_t(qkvGemm_->clusterRows);
    // The tiling's policy and proven order; then, for head-wide tiles, qkvGroupRows' order if it asks for groups
    // (narrow tiles keep row-major order: the groups are of a head's three tiles).
    withQkvTiling([&](auto tiling) { setQkvPolicyAndOrder<decltype(tiling)::value>(qkvClusterRows); });
    if (qkvTiling_ == QkvTiling::HeadWide && qkvGroupRows > 1) {
      const std::uint32_t groupClusters = std::max(1u, qkvGroupRows / qkvClusterRows);
      qkv_->setClusterTileOrderBy(qkvClusterRows, [groupClusters](TileCoord cluster, GridShape clusters) {
        return qkvGroupedIndex(cluster, clusters, groupClusters);
      });
    }
    const std::uint32_t clusterRows = std::uint32_t(outGemm_->clusterRows);
    if (outputGroupRows == 0) throw Error("attention_example: the output GEMM's row groups hold at least one row");
    if (clusterRows > 1) {  // groups of cluster rows
      const std::uint32_t groupClusters = std::max(1u, outputGroupRows / clusterRows);
      out_->setClusterTileOrderBy(clusterRows, [groupClusters](TileCoord cluster, GridShape clusters) {
        return groupedColumnMajorIndex(cluster, clusters, groupClusters);
      });
    } else {
      out_->setGroupedTileOrder(outputGroupRows);
    }
    if (P == Phase::Prompt)
      attn_->setTileOrder(promptAttentionOrder(attentionOrder, attentionGrid.x, attentionGrid.y,
                                               std::uint32_t(problem.sequence / 128)));
    if (tKind == TPolicyKind::TileSync) attn_->setOutputPolicy<typename ChainPolicies::TTileSync>();
    else attn_->setOutputPolicy<typename ChainPolicies::TRowSync>();

    // Split-K, as the configuration says.
    qkvSplit_ = std::make_unique<GemmSplit>(*qkv_, qkvGemm_->tile, gemms.qkvSplit, partOrder);
    outSplit_ = std::make_unique<GemmSplit>(*out_, outGemm_->tile, gemms.outSplit, partOrder);
    setPersistent(*qkv_, *qkvGemm_, gemms.qkvStaticUnits, multiprocessors);
    setPersistent(*out_, *outGemm_, gemms.outStaticUnits, multiprocessors);

    if constexpr (P == Phase::Decode) {
      // No more parts than one wave of the form's kernel holds: the one-pass form's 96 registers leave 5 blocks
      // per SM, the two-pass form's 64 leave 8.
      auto partsFor = [&](bool onePass) {
        const std::uint32_t resident = std::uint32_t(decodeAttentionBlocksPerSm(tKind, onePass));
        return decodeParts(problem, multiprocessors, kDecodeMaxChunk,
                           std::max(1u, std::min(decodeBlocksPerSm, resident)));
      };
      static_assert((kDecodeThreads / 32) * 2 * kDecodeKeyBatch == kDecodeOnePassKeysPerStep,
                    "decode_attention_form.h's one-pass step is decodePartInOnePass's");
      const std::uint32_t onePassParts = partsFor(true);
      decodeOnePass_ = decodeUsesOnePass(decodeForm, std::uint32_t(problem.cached) + 1, onePassParts);
      attentionParts_ = decodeOnePass_ ? onePassParts : partsFor(false);
      attn_->setBlocksPerTile(attentionParts_);
      if (attentionParts_ > 1) {
        const std::size_t slots = std::size_t(attentionGrid.tileCount()) * attentionParts_;
        partialOutputs_ = std::make_unique<DeviceBuffer<float>>(slots * kHeadDim);
        partialMaxSum_ = std::make_unique<DeviceBuffer<float>>(slots * 2);
        arrivals_ = std::make_unique<DeviceBuffer<std::uint32_t>>(attentionGrid.tileCount());
        CUSYNC_CUDA_CHECK(cudaMemset(arrivals_->get(), 0, arrivals_->bytes()));
      }
    } else {
      // Each tile one block of 128 queries or two of 64 (promptAttentionKernel); 0: promptAttentionBlocks decides.
      // CUTLASS's flash attention computes a whole tile per block.
      if (promptKernel == PromptAttentionKernel::CutlassFmha) {
        if (!CUSYNC_HAVE_CUTLASS_FMHA)
          throw Error("attention_example: this build has no CUTLASS flash attention (examples/88_hopper_fmha)");
        if (promptQueryParts > 1)
          throw Error("attention_example: CUTLASS's flash attention computes a tile of 128 queries in one block");
        promptQueryParts = 1;
        lse_ = std::make_unique<DeviceBuffer<float>>(std::size_t(problem.tokens()) * problem.shape.heads);
      }
      attentionParts_ =
          promptQueryParts != 0 ? promptQueryParts : promptAttentionBlocks(attentionGrid.tileCount(), multiprocessors);
      if (attentionParts_ != 1 && attentionParts_ != 2)
        throw Error("attention_example: a prompt attention tile is one block or two, not " +
                    std::to_string(attentionParts_));
      attn_->setBlocksPerTile(attentionParts_);
      if (attentionParts_ > 1) {
        arrivals_ = std::make_unique<DeviceBuffer<std::uint32_t>>(attentionGrid.tileCount());
        CUSYNC_CUDA_CHECK(cudaMemset(arrivals_->get(), 0, arrivals_->bytes()));
      }
      withQkvTiling([](auto tiling) {
        allowPromptSharedMemory<decltype(tiling)::value, typename ChainPolicies::TTileSync>();
        allowPromptSharedMemory<decltype(tiling)::value, typename ChainPolicies::TRowSync>();
      });
    }
    if (cublas) {
      cublasQkv_ = std::make_unique<CublasLtGemm>(lt, problem.tokens(), problem.qkvColumns(), problem.shape.hidden,
                                                  false, workspace, workspaceBytes);
      cublasOut_ = std::make_unique<CublasLtGemm>(lt, problem.tokens(), problem.shape.hidden, problem.tColumns(),
                                                  false, workspace, workspaceBytes);
      return;
    }
    // WaitKernel: qkv on the caller's stream, attn and out each on their own stream behind a wait-kernel on their
    // producer, so that a consumer's blocks start only once every block of its producer has started
    // (docs/DESIGN.md, Progress); joined back at the end. PDL: one stream, attn and out launched programmatically.
    executor_.add(*qkv_, {}, [this](cudaStream_t stream, LaunchOrdering ordering, bool) {
      GemmLaunchArgs args = qkvArgs();
      args.launchOrdering = ordering;
      qkvGemm_->launch(args, stream);
    });
    executor_.add(*attn_, {qkv_.get()}, [this](cudaStream_t stream, LaunchOrdering ordering, bool) {
      launchAttention(stream, variant_.qkvTriggersAttentionLaunch() ? ordering : LaunchOrdering::StreamOrder);
    });
    executor_.add(*out_, {attn_.get()}, [this](cudaStream_t stream, LaunchOrdering ordering, bool) {
      GemmLaunchArgs args = outArgs();
      args.launchOrdering = ordering;
      outGemm_->launch(args, stream);
    });
  }
  AttentionChain(const AttentionChain&) = delete;
  AttentionChain& operator=(const AttentionChain&) = delete;

  std::string description() const {
    return variant_.ordering == Ordering::CublasAttention
               ? std::string("cuBLASLt GEMMs") + (decodeOnePass_ ? " | one-pass attention" : "")
               : "qkv " + qkvGemm_->configuration + ticketSuffix(*qkv_) +
                     (qkvTiling_ != QkvTiling::HeadWide && variant_.qkvSynchronized() ? " (RowSync)" : "") + " | out " +
                     outGemm_->configuration + ticketSuffix(*out_) + " | splits " +
                     splitName(*qkv_, qkvSplit_->accumulate) + "/" + std::to_string(attn_->blocksPerTile()) + "/" +
                     splitName(*out_, outSplit_->accumulate) + (decodeOnePass_ ? " | one-pass attention" : "");
  }
  // A persistent GEMM that takes a ticket per unit (not static units) is named with "_ticket".
  static std::string ticketSuffix(const Stage& stage) {
    const StageView v = stage.view();
    return v.persistentBlocks != 0 && !v.takesStaticUnits() ? "_ticket" : "";
  }
  // "P", or "P(W whole)" when only the tiles after the first W are split; "skCgG(W whole)" for C stream-K chunks in
  // G groups.
  // A "+" after the parts: they are summed in L2 (GemmSplit::accumulate).
  static std::string splitName(const Stage& stage, bool summed) {
    std::string name = stage.streamKChunks() != 0 ? "sk" + std::to_string(stage.streamKChunks()) + "g" +
                                                        std::to_string(stage.streamKGroups())
                                                  : std::to_string(stage.blocksPerTile());
    if (summed) name += "+";
    if (stage.wholeTiles() != 0) name += "(" + std::to_string(stage.wholeTiles()) + " whole)";
    return name;
  }
  std::uint32_t blocksPerLaunch() const {
    return qkv_->blocksPerLaunch() + attn_->blocksPerLaunch() + out_->blocksPerLaunch();
  }

  // Fills the chain's scratch with NaN: the GEMMs' split-K partials and the decode attention's partial results, which
  // each part writes before it arrives and the last part reads. A stress test calls it before every execution, so
  // that a last part reading a slot not yet written reads NaN rather than the previous execution's equal value.
  void poisonScratch(cudaStream_t stream) const {
    // Summed parts (GemmSplit::accumulate) must start from zero, which their last arrival restores: not poisoned.
    for (const GemmSplit* split : {qkvSplit_.get(), outSplit_.get()})
      if (split && split->partials && !split->accumulate)
        CUSYNC_CUDA_CHECK(cudaMemsetAsync(split->partials->get(), 0xFF, split->partials->bytes(), stream));
    for (const auto* buffer : {partialOutputs_.get(), partialMaxSum_.get()})
      if (buffer) CUSYNC_CUDA_CHECK(cudaMemsetAsync(buffer->get(), 0xFF, buffer->bytes(), stream));
  }

  // Diagnostics: the next launches record a BlockTrace per block of the stages whose kernels record one (the GEMV
  // stages, the one-tile CUTLASS GEMMs, the decode attention kernel and CUTLASS's flash attention), the QKV stage's at [0, its blocks), attention's after them, the output
  // GEMM's last (blocksPerLaunch() records in all); null stops it.
  void setTrace(BlockTrace* trace) { trace_ = trace; }

  // Enqueues the three stages; everything is joined back into `stream` before it returns.
  void enqueue(cudaStream_t stream) const {
    if (variant_.ordering == Ordering::CublasAttention) {
      cublasQkv_->run(buffers_.x.get(), buffers_.wqkv.get(), buffers_.qkv.get(), stream);
      launchAttention(stream, LaunchOrdering::StreamOrder);
      cublasOut_->run(buffers_.t.get(), buffers_.wo.get(), buffers_.y.get(), stream);
      return;
    }
    executor_.enqueueIteration(stream);
  }

  // The stages one at a time, for a breakdown of the chain's time: enqueues stage `index` (0: QKV GEMM, 1:
  // attention, 2: output GEMM) alone, stream-ordered, reading what the previous stages left. Only for the
  // variants whose stages wait for nothing (StreamSync, cuBLAS+attn).
  static constexpr int kStageCount = 3;
  static const char* stageName(int index) { return index == 0 ? "qkv" : index == 1 ? "attn" : "out"; }
  void enqueueStage(int index, cudaStream_t stream) const {
    if (variant_.ordering != Ordering::StreamSync && variant_.ordering != Ordering::CublasAttention)
      throw Error("attention_example: only stream-ordered stages run alone");
    const bool cublas = variant_.ordering == Ordering::CublasAttention;
    if (index == 1) return launchAttention(stream, LaunchOrdering::StreamOrder);
    if (index == 0) {
      if (cublas) return cublasQkv_->run(buffers_.x.get(), buffers_.wqkv.get(), buffers_.qkv.get(), stream);
      return qkvGemm_->launch(qkvArgs(), stream);
    }
    if (cublas) return cublasOut_->run(buffers_.t.get(), buffers_.wo.get(), buffers_.y.get(), stream);
    outGemm_->launch(outArgs(), stream);
  }

 private:
  // The GEMMs' launch arguments but their ordering (the executor's, per launch).
  GemmLaunchArgs qkvArgs() const {
    const bool synchronized = variant_.qkvSynchronized();
    GemmLaunchArgs first;
    first.m = problem_.tokens();
    first.n = problem_.qkvColumns();
    first.k = problem_.shape.hidden;
    first.a = buffers_.x.get();
    // The packed GEMV stage reads Wqkv's packed copy (prepareAttentionReference makes it with the weights).
    first.b = qkvGemm_->packedWeights ? reinterpret_cast<const __half*>(buffers_.wqkvPacked.get()) : buffers_.wqkv.get();
    first.d = buffers_.qkv.get();
    first.stage = qkv_->view();
    if (!synchronized) first.stage.semaphores = nullptr;
    first.triggerDependentsAtStart = variant_.qkvTriggersAttentionLaunch();
    qkvSplit_->applyTo(first);
    first.trace = trace_;
    first.traceStage = 0;
    return first;
  }

  GemmLaunchArgs outArgs() const {
    const bool synchronized = variant_.synchronized();
    GemmLaunchArgs last;
    last.m = problem_.tokens();
    last.n = problem_.shape.hidden;
    last.k = problem_.tColumns();
    last.a = buffers_.t.get();
    last.b = outGemm_->packedWeights ? reinterpret_cast<const __half*>(buffers_.woPacked.get()) : buffers_.wo.get();
    last.d = buffers_.y.get();
    last.stage = out_->view();
    if (synchronized) {
      // T's tiles: 128 query rows (prompt) or one token row (decode) of one head.
      const std::uint32_t* semaphores = variant_.tPolicy == TPolicyKind::TileSync
                                            ? attn_->inputFor<typename ChainPolicies::TTileSync>(*out_).producerSemaphores
                                            : attn_->inputFor<typename ChainPolicies::TRowSync>(*out_).producerSemaphores;
      last.producerSemaphores = semaphores;
      last.producerGrid = attn_->grid();
      last.producerTileRows = P == Phase::Prompt ? 128 : 1;
      last.producerTileColumns = kHeadDim;
    }
    last.waitForPriorGrid = variant_.ordering == Ordering::PdlGridSync;
    outSplit_->applyTo(last);
    last.trace = trace_ ? trace_ + qkv_->blocksPerLaunch() + attn_->blocksPerLaunch() : nullptr;
    last.traceStage = 2;
    return last;
  }

  static void setPersistent(Stage& stage, const AttentionGemm& gemm, bool staticUnits, int multiprocessors) {
    stage.setPersistentBlocks(persistentBlocksFor(gemm, stage.workUnitsPerLaunch(), multiprocessors));
    stage.useStaticUnits(staticUnits);
  }

  void launchAttention(cudaStream_t stream, LaunchOrdering ordering) const {
    withQkvTiling([&](auto tiling) {
      constexpr QkvTiling Q = decltype(tiling)::value;
      if (variant_.tPolicy == TPolicyKind::TileSync)
        launchAttentionWith<Q, typename ChainPolicies::TTileSync>(stream, ordering);
      else
        launchAttentionWith<Q, typename ChainPolicies::TRowSync>(stream, ordering);
    });
  }

  // Blocks per SM of the token-generation attention kernel this chain launches (under its policies) in the form
  // `onePass` says.
  int decodeAttentionBlocksPerSm(TPolicyKind tKind, bool onePass) const {
    int blocks = 0;
    withQkvTiling([&](auto tiling) {
      constexpr QkvTiling Q = decltype(tiling)::value;
      blocks = tKind == TPolicyKind::TileSync
                   ? decodeAttentionBlocksPerSmWith<Q, typename ChainPolicies::TTileSync>(onePass)
                   : decodeAttentionBlocksPerSmWith<Q, typename ChainPolicies::TRowSync>(onePass);
    });
    return blocks;
  }
  template <QkvTiling Q, class TPolicy>
  static int decodeAttentionBlocksPerSmWith(bool onePass) {
    using QkvPolicy = typename QkvPolicies<M, P, Q>::Producer;
    return onePass
               ? KernelOccupancy<&decodeAttentionKernel<QkvPolicy, TPolicy, true>>::maxActiveBlocksPerSm(kDecodeThreads,
                                                                                                         0)
               : KernelOccupancy<&decodeAttentionKernel<QkvPolicy, TPolicy, false>>::maxActiveBlocksPerSm(
                     kDecodeThreads, 0);
  }

  // Calls f with the chain's QKV tiling as a compile-time constant (std::integral_constant): the policy types depend
  // on it. Narrow and wide tiles exist in prompt processing only (wide ones for GPT-3 only), so token generation
  // instantiates only head-wide ones.
  template <class F>
  void withQkvTiling(F&& f) const {
    if constexpr (P == Phase::Prompt) {
      if (qkvTiling_ == QkvTiling::Narrow) return f(std::integral_constant<QkvTiling, QkvTiling::Narrow>{});
      if constexpr (M == Model::Gpt3)
        if (qkvTiling_ == QkvTiling::Wide) return f(std::integral_constant<QkvTiling, QkvTiling::Wide>{});
    }
    if (qkvTiling_ != QkvTiling::HeadWide)
      throw Error("attention_example: this model and phase have no QKV tiles of " + std::to_string(qkvGemm_->tile.n) +
                  " columns in attention_prompt.dep");
    f(std::integral_constant<QkvTiling, QkvTiling::HeadWide>{});
  }

  // The QKV stage posts under tiling Q's producer policy, in its order (in clusters of `clusterRows` rows).
  template <QkvTiling Q>
  void setQkvPolicyAndOrder(std::uint32_t clusterRows) {
    using Tiling = QkvPolicies<M, P, Q>;
    qkv_->setOutputPolicy<typename Tiling::Producer>();
    if (clusterRows > 1) qkv_->setClusterTileOrder<typename Tiling::Order>(clusterRows);
    else qkv_->setTileOrder<typename Tiling::Order>();
  }

  template <QkvTiling Q, class TPolicy>
  void launchAttentionWith(cudaStream_t stream, LaunchOrdering ordering) const {
    using QkvPolicy = typename QkvPolicies<M, P, Q>::Producer;
    TypedStageView<TPolicy> view = attn_->view<TPolicy>();
    InputView<QkvPolicy> input{};
    if (variant_.qkvSynchronized()) input = qkv_->inputFor<QkvPolicy>(*attn_);
    if (!variant_.synchronized()) view.untyped.semaphores = nullptr;
    const bool gridSync = variant_.ordering == Ordering::PdlGridSync;
    const bool triggerDependents = variant_.attentionTriggersOutputLaunch();
    const std::uint32_t blocks = attn_->workUnitsPerLaunch();
    if constexpr (P == Phase::Decode) {
      DecodeAttentionArgs args;
      args.qkv = buffers_.qkv.get();
      args.t = buffers_.t.get();
      args.kCache = buffers_.kCache.get();
      args.vCache = buffers_.vCache.get();
      args.heads = problem_.shape.heads;
      args.cached = problem_.cached;
      args.cacheCapacity = problem_.cacheCapacity();
      args.qkvTileRows = qkvGemm_->tile.m;
      args.parts = attentionParts_;
      args.partialOutputs = partialOutputs_ ? partialOutputs_->get() : nullptr;
      args.partialMaxSum = partialMaxSum_ ? partialMaxSum_->get() : nullptr;
      args.arrivals = arrivals_ ? arrivals_->get() : nullptr;
      args.triggerDependents = triggerDependents;
      args.triggerAfterWait = decodeTriggerAfterWait_;
      args.waitForPriorGrid = gridSync;
      args.trace = trace_ ? trace_ + qkv_->blocksPerLaunch() : nullptr;
      args.traceStage = 1;
      launchKernel(decodeOnePass_ ? decodeAttentionKernel<QkvPolicy, TPolicy, true>
                                  : decodeAttentionKernel<QkvPolicy, TPolicy, false>,
                   dim3(blocks), dim3(kDecodeThreads), 0, stream, ordering, view, input, args);
    } else {
      // Without CUTLASS's FMHA in the build the branch is not compiled (its launch functions do not exist); the
      // constructor refuses the kernel then.
      if constexpr (CUSYNC_HAVE_CUTLASS_FMHA != 0) {
        if (promptKernel_ == PromptAttentionKernel::CutlassFmha) {
          PromptFmhaLaunch launch;
          launch.kernel.qkv = buffers_.qkv.get();
          launch.kernel.kCache = buffers_.kCache.get();
          launch.kernel.vCache = buffers_.vCache.get();
          launch.kernel.heads = problem_.shape.heads;
          launch.kernel.sequenceLength = problem_.sequence;
          launch.kernel.cacheCapacity = problem_.cacheCapacity();
          launch.kernel.qkvTileRows = qkvGemm_->tile.m;
          launch.kernel.qkvTileColumns = qkvGemm_->tile.n;
          launch.kernel.triggerDependents = triggerDependents;
          launch.kernel.waitForPriorGrid = gridSync;
          launch.kernel.trace = trace_ ? trace_ + qkv_->blocksPerLaunch() : nullptr;
          launch.kernel.traceStage = 1;
          launch.t = buffers_.t.get();
          launch.lse = lse_->get();
          launch.batch = problem_.batch;
          launch.blocks = blocks;
          constexpr TPolicyKind kind =
              std::is_same_v<TPolicy, typename ChainPolicies::TTileSync> ? TPolicyKind::TileSync : TPolicyKind::RowSync;
          launchPromptFmha<M, kind, Q>(launch, view, input, stream, ordering);
          return;
        }
      }
      PromptAttentionArgs args;
      args.qkv = buffers_.qkv.get();
      args.t = buffers_.t.get();
      args.kCache = buffers_.kCache.get();
      args.vCache = buffers_.vCache.get();
      args.heads = problem_.shape.heads;
      args.sequenceLength = problem_.sequence;
      args.cacheCapacity = problem_.cacheCapacity();
      args.qkvTileRows = qkvGemm_->tile.m;
      args.qkvTileColumns = qkvGemm_->tile.n;
      args.arrivals = arrivals_ ? arrivals_->get() : nullptr;
      args.triggerDependents = triggerDependents;
      args.waitForPriorGrid = gridSync;
      if (attentionParts_ == 1)
        launchKernel(promptAttentionKernel<QkvPolicy, TPolicy, kPromptQueries>, dim3(blocks),
                     dim3(promptThreads(kPromptQueries)), std::size_t(promptSharedBytes(kPromptQueries)), stream,
                     ordering, view, input, args);
      else
        launchKernel(promptAttentionKernel<QkvPolicy, TPolicy, kPromptQueries / 2>, dim3(blocks),
                     dim3(promptThreads(kPromptQueries / 2)), std::size_t(promptSharedBytes(kPromptQueries / 2)),
                     stream, ordering, view, input, args);
    }
  }

  template <QkvTiling Q, class TPolicy>
  static void allowPromptSharedMemory() {
    using QkvPolicy = typename QkvPolicies<M, P, Q>::Producer;
    KernelOccupancy<&promptAttentionKernel<QkvPolicy, TPolicy, kPromptQueries>>::allowSharedMemory(
        promptSharedBytes(kPromptQueries));
    KernelOccupancy<&promptAttentionKernel<QkvPolicy, TPolicy, kPromptQueries / 2>>::allowSharedMemory(
        promptSharedBytes(kPromptQueries / 2));
  }

  AttentionProblem problem_;
  Variant variant_;
  AttentionBuffers& buffers_;
  bool decodeTriggerAfterWait_;  // the decode attention stage lets the output GEMM launch after its wait
  bool decodeOnePass_ = false;  // the decode attention stage's one-pass form (decodeForm, resolved per shape)
  PromptAttentionKernel promptKernel_;
  QkvTiling qkvTiling_ = QkvTiling::HeadWide;
  const AttentionGemm* qkvGemm_ = nullptr;
  const AttentionGemm* outGemm_ = nullptr;
  std::unique_ptr<Stage> qkv_, attn_, out_;
  std::unique_ptr<GemmSplit> qkvSplit_, outSplit_;
  std::uint32_t attentionParts_ = 1;
  std::unique_ptr<DeviceBuffer<float>> partialOutputs_, partialMaxSum_;
  std::unique_ptr<DeviceBuffer<std::uint32_t>> arrivals_;
  std::unique_ptr<DeviceBuffer<float>> lse_;  // CUTLASS's flash attention writes the softmax's log-sum-exp
  std::unique_ptr<CublasLtGemm> cublasQkv_, cublasOut_;
  BlockTrace* trace_ = nullptr;  // setTrace
  ChainExecutor executor_;  // the tile-synchronized and stream-ordered variants' three stages
};

}  // namespace cusync::examples::attention
