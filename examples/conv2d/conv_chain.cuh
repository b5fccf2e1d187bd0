// One chain of dependent convolutions (conv_models.h) on one tile configuration, under one variant
// (conv_variants.h): its buffers, its stages and how they are enqueued. Shared by conv2d_chain_example and the stress
// test. Host code over the registered kernels (conv_registry.h); include from one .cu file per program.
//
// Orderings, and why none of them can deadlock (docs/DESIGN.md, "Progress"):
//  * StreamSync, CUTLASS-stock: every stage on one stream; nothing waits.
//  * CUTLASS-stock-PDL: one stream, every stage after the first launched programmatically; CUTLASS's kernel waits
//    for the whole previous grid (griddepcontrol.wait) before its first load, and stores only after its loads.
//  * wait-kernel (TileSync, RowSync): stage s on stream s, forked from and joined back into the caller's stream,
//    behind the wait-kernel on its producer (the runtime's ChainExecutor, StageOrdering::WaitKernel). The wait-kernel returns once every block of the producer's launch has
//    started, so a consumer block that spins waits for running or finished blocks; by induction over the stages
//    (stage 0 waits for nothing) every stage finishes.
//  * avoid wait-kernel (TileSync-W, RowSync-W): the wait-kernel ordering's streams without wait-kernels (the
//    executor's NoOrdering), only when every block of every stage fits in the GPU's slots at once
//    (convChainFitsOneWave): every block is then resident whatever order the streams start in, so a spinning block
//    waits for resident or finished blocks. Otherwise the chain is not applicable and is not enqueued.
//  * split-K (parts > 1 per stage): a part never waits for another part (the last arrival reduces), so the
//    orderings' arguments hold with work units for tiles; the wait-kernel counts the producer's work units.
//  * programmatic dependent launch: one stream in stage order; every stage a later launch follows triggers at its
//    block start, every stage after the first is launched programmatically, so stage s starts only once every block
//    of stage s - 1 is resident or done, hence (by induction) every block of every earlier stage, and it waits only
//    on an earlier stage.
// The chain's next execution overwrites the intermediates: the wait-kernel ordering joins every stream before it, and
// the first stage of the next execution is stream-ordered behind the last stage.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/device_buffers.cuh"
#include "conv2d_3x3.h"  // policies generated and proven by cusyncgen from examples/conv2d/conv2d_3x3.dep
#include "conv_models.h"
#include "conv_registry.h"
#include "conv_split.h"
#include "conv_variants.h"
#include "cusync/conv_halo_rows.h"
#include "cusync/cusync.cuh"

namespace cusync::examples {

using ConvTileSyncPolicy = cusync::generated::conv2d_3x3::Dep_dep_g1_TileSync;
using ConvRowSyncPolicy = cusync::generated::conv2d_3x3::Dep_dep_g1_RowSync;

inline ConvPolicyKind convPolicyOf(ConvVariant v) {
  return rowSync(v) ? ConvPolicyKind::RowSync : ConvPolicyKind::TileSync;
}

// The registry entry a variant runs (conv_registry.h): CUTLASS's stock kernel (no policy), or the hooked kernel under
// the variant's policy (StreamSync: the TileSync instance, which neither waits nor posts without semaphores).
inline std::optional<ConvPolicyKind> convKernelPolicyOf(ConvVariant v) {
  if (cutlassStock(v)) return std::nullopt;
  return convPolicyOf(v);
}

inline ConvLayerShape convShapeOf(const ConvStageSpec& stage, int batch) {
  ConvLayerShape shape;
  shape.batch = batch;
  shape.height = stage.height;
  shape.width = stage.width;
  shape.inChannels = stage.inChannels;
  shape.outChannels = stage.outChannels;
  shape.filter = stage.filter;
  shape.stride = stage.stride;
  return shape;
}

// The policies' sem/value against a count of the tiles that post to each semaphore on `grid`: cusyncgen's proof is
// for a spec's shape; the policies' functions depend only on the grid, and this checks them on the grid actually
// run (an error, not a wrong result, if they did not fit it).
template <class Policy>
void checkPolicyCounts(GridShape grid) {
  std::vector<std::uint32_t> posts(Policy::semaphoreCount(grid), 0);
  for (std::uint32_t i = 0; i < grid.tileCount(); ++i) {
    const std::uint32_t sem = Policy::sem(tileAtLinear(i, grid), grid);
    if (sem >= posts.size()) throw Error(std::string(Policy::name) + ": semaphore out of range on this grid");
    ++posts[sem];
  }
  for (std::uint32_t i = 0; i < grid.tileCount(); ++i) {
    const TileCoord t = tileAtLinear(i, grid);
    if (Policy::value(t, grid) != posts[Policy::sem(t, grid)])
      throw Error(std::string(Policy::name) + ": value differs from the tiles posting to a semaphore on this grid");
  }
}

// The direct convolution every stage is checked against: one thread per output element, fp32 accumulation,
// bias + ReLU, rounded to fp16 like the kernels' output. A template so that several translation units may include
// this header.
template <int = 0>
__global__ void directConv(const __half* x, const __half* w, const __half* bias, __half* y, ConvLayerShape s) {
  const long long total = s.outPixels() * s.outChannels;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    const int k = int(i % s.outChannels);
    const long long pixel = i / s.outChannels;
    const int q = int(pixel % s.outWidth()), p = int(pixel / s.outWidth() % s.outHeight());
    const int b = int(pixel / (1LL * s.outWidth() * s.outHeight()));
    float sum = __half2float(bias[k]);
    for (int r = 0; r < s.filter; ++r)
      for (int t = 0; t < s.filter; ++t) {
        const int h = p * s.stride - s.padding() + r, v = q * s.stride - s.padding() + t;
        if (h < 0 || h >= s.height || v < 0 || v >= s.width) continue;
        const __half* in = x + ((1LL * b * s.height + h) * s.width + v) * s.inChannels;
        const __half* f = w + ((1LL * k * s.filter + r) * s.filter + t) * s.inChannels;
        for (int c = 0; c < s.inChannels; ++c) sum += __half2float(in[c]) * __half2float(f[c]);
      }
    y[i] = __float2half(sum > 0.f ? sum : 0.f);
  }
}

// One stage's weights, output and reference output.
struct ConvStageBuffers {
  ConvLayerShape shape;
  DeviceBuffer<__half> filter, bias, output, reference;
  explicit ConvStageBuffers(const ConvLayerShape& s)
      : shape(s),
        filter(std::size_t(s.outChannels) * s.filter * s.filter * s.inChannels),
        bias(s.outChannels),
        output(std::size_t(s.outPixels()) * s.outChannels),
        reference(output.size()) {}
};

// A chain's input and every stage's buffers at one batch size, with fresh random data and the direct
// convolutions' references (each stage's computed from its producer's reference).
class ConvChainBuffers {
 public:
  ConvChainBuffers(const ConvChainSpec& spec, int batch, std::uint64_t& seed, cudaStream_t stream)
      : spec_(spec),
        batch_(batch),
        input_(std::size_t(batch) * spec.stages.front().height * spec.stages.front().width *
               spec.stages.front().inChannels) {
    fillRandom(input_, ++seed, 1.0f, stream);
    for (const ConvStageSpec& stage : spec.stages) {
      stages_.push_back(std::make_unique<ConvStageBuffers>(convShapeOf(stage, batch)));
      ConvStageBuffers& b = *stages_.back();
      // Weights scaled so that activations stay O(1) through every stage.
      fillRandom(b.filter, ++seed, 1.7f / std::sqrt(float(stage.filter * stage.filter * stage.inChannels)), stream);
      fillRandom(b.bias, ++seed, 0.1f, stream);
    }
    for (std::size_t s = 0; s < stages_.size(); ++s) {
      ConvStageBuffers& b = *stages_[s];
      directConv<><<<1024, 256, 0, stream>>>(activationOf(int(s), true), b.filter.get(), b.bias.get(),
                                              b.reference.get(), b.shape);
      CUSYNC_CUDA_CHECK(cudaGetLastError());
    }
    CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  const ConvChainSpec& spec() const { return spec_; }
  int batch() const { return batch_; }
  std::size_t stageCount() const { return stages_.size(); }
  ConvStageBuffers& stage(std::size_t s) { return *stages_[s]; }
  const ConvStageBuffers& stage(std::size_t s) const { return *stages_[s]; }
  // What stage s reads: the chain's input, or its producer's output (or reference output).
  const __half* activationOf(int s, bool reference = false) const {
    const int producer = spec_.stages[s].producer;
    if (producer < 0) return input_.get();
    return reference ? stages_[producer]->reference.get() : stages_[producer]->output.get();
  }
  void poisonOutputs(cudaStream_t stream) {
    for (auto& b : stages_) poison(b->output, stream);
  }

 private:
  ConvChainSpec spec_;
  int batch_;
  DeviceBuffer<__half> input_;
  std::vector<std::unique_ptr<ConvStageBuffers>> stages_;
};

// The split-K buffers of one stage (tile_sync_conv_kernel.hpp): fp32 partials and one arrival counter per tile,
// zeroed once (the kernel's last arrival resets it), allocated only when the stage is split.
struct ConvSplitBuffers {
  std::unique_ptr<DeviceBuffer<float>> partials;
  std::unique_ptr<DeviceBuffer<std::uint32_t>> arrivals;
  bool sum = false;  // the parts sum into one slot in L2 (SplitKBuffers::accumulate)
  ConvSplitBuffers(Stage& stage, const ConvKernelEntry& kernel, std::uint32_t parts, bool sumParts) {
    stage.setBlocksPerTile(parts);
    if (parts <= 1) return;
    partials = std::make_unique<DeviceBuffer<float>>(std::size_t(stage.grid().tileCount()) * parts *
                                                     std::size_t(kernel.tileM) * std::size_t(kernel.tileN));
    arrivals = std::make_unique<DeviceBuffer<std::uint32_t>>(stage.grid().tileCount());
    CUSYNC_CUDA_CHECK(cudaMemset(arrivals->get(), 0, arrivals->bytes()));
    // Summed parts start from zero; each tile's last arrival zeroes its slot again for the next launch.
    sum = sumParts;
    if (sum) CUSYNC_CUDA_CHECK(cudaMemset(partials->get(), 0, partials->bytes()));
  }
};

// K-blocks of a stage's implicit GEMM on `kernel`: C / TileK channel blocks per filter tap.
inline std::uint32_t convKBlocks(const ConvLayerShape& shape, const ConvKernelEntry& kernel) {
  return std::uint32_t((shape.inChannels + kernel.tileK - 1) / kernel.tileK * shape.filter * shape.filter);
}

// The parts per stage of `target` for a chain on `kernel` with `slots` resident blocks (conv_split.h).
inline std::vector<std::uint32_t> convSplitPlan(const ConvChainBuffers& buffers, const ConvKernelEntry& kernel,
                                                std::uint32_t slots, ConvSplitTarget target) {
  std::vector<std::uint32_t> parts;
  for (std::size_t s = 0; s < buffers.stageCount(); ++s) {
    const ConvLayerShape& shape = buffers.stage(s).shape;
    parts.push_back(convSplitParts(kernel.tileGrid(shape).tileCount(), slots, convKBlocks(shape, kernel), target));
  }
  return parts;
}

// The runtime's ordering of a variant's stages (chain_executor.cuh; the orderings at the top of this file).
inline StageOrdering stageOrderingOf(ConvVariant variant) {
  if (programmaticLaunch(variant)) return StageOrdering::ProgrammaticLaunch;
  if (avoidsWaitKernel(variant)) return StageOrdering::NoOrdering;
  return tileSynchronized(variant) ? StageOrdering::WaitKernel : StageOrdering::StreamOrder;
}

// A chain of one variant on one tile configuration, split `parts[s]` ways along K in stage s (empty: unsplit), with
// the stages it synchronizes through (fresh per chain: their counters and semaphores count launches from zero).
// Enqueued by the runtime's chain executor; stays where it was built (the executor holds its stages' addresses).
// `slots` (SMs x resident blocks per SM) decides whether a W variant applies. `sumParts`: a split tile's parts sum
// into one slot in L2 for its last part to read (SplitKBuffers::accumulate; not bitwise reproducible), rather than
// the last part reading each other part's partial back.
class ConvChain {
 public:
  // `hardwareOrder` ("avoid custom order", the paper's T): every stage's block computes the tile its blockIdx
  // names. The conv stages' own order is row-major, which the hardware's dispatch follows, so T changes no order;
  // it spares the ticket's round trip before a block's first load (tile_sync_conv_kernel.hpp). false: tickets.
  ConvChain(const ConvKernelEntry& kernel, ConvVariant variant, ConvChainBuffers& buffers,
            std::vector<std::uint32_t> parts = {}, std::uint32_t slots = 0, bool hardwareOrder = true,
            bool sumParts = false)
      : kernel_(kernel), variant_(variant), buffers_(buffers), executor_(stageOrderingOf(variant)) {
    const ConvChainSpec& spec = buffers.spec();
    if (kernel.policy != convKernelPolicyOf(variant))
      throw Error("ConvChain: " + kernel.name + " is not the kernel of " + convVariantName(variant));
    if (parts.empty()) parts.assign(spec.stages.size(), 1u);
    if (parts.size() != spec.stages.size()) throw Error("ConvChain: one split per stage");
    stages_.reserve(spec.stages.size());  // the executor and the split buffers hold stage addresses
    for (std::size_t s = 0; s < spec.stages.size(); ++s)
      stages_.emplace_back("conv" + std::to_string(s) + " " + spec.stages[s].name,
                           kernel.tileGrid(buffers.stage(s).shape));
    for (Stage& stage : stages_) stage.useHardwareOrder(hardwareOrder);
    std::vector<std::uint32_t> blocks;
    for (std::size_t s = 0; s < stages_.size(); ++s) {
      splits_.push_back(std::make_unique<ConvSplitBuffers>(stages_[s], kernel, parts[s], sumParts));
      blocks.push_back(stages_[s].blocksPerLaunch());
    }
    parts_ = parts;
    if (avoidsWaitKernel(variant) && !convChainFitsOneWave(blocks, slots)) {
      std::uint64_t total = 0;
      for (std::uint32_t b : blocks) total += b;
      notApplicable_ = "not every block fits in one wave (" + std::to_string(total) + " blocks, " +
                       std::to_string(slots) + " slots)";
    }
    producerSemaphores_.assign(spec.stages.size(), nullptr);
    haloRows_.resize(spec.stages.size());
    if (tileSynchronized(variant)) {
      if (convPolicyOf(variant) == ConvPolicyKind::TileSync) synchronize<ConvTileSyncPolicy>();
      else synchronize<ConvRowSyncPolicy>();
    }
    for (std::size_t s = 0; s < stages_.size(); ++s) {
      const int producer = spec.stages[s].producer;
      std::vector<const Stage*> producers;
      if (producer >= 0) producers.push_back(&stages_[producer]);
      executor_.add(stages_[s], std::move(producers), [this, s](cudaStream_t stream, LaunchOrdering ordering, bool) {
        ConvLaunchArgs a = argsOf(s);
        a.launchOrdering = ordering;
        kernel_.launch(a, stream);
      });
    }
  }
  ConvChain(const ConvChain&) = delete;
  ConvChain& operator=(const ConvChain&) = delete;

  // Why this chain does not apply (a W variant whose blocks do not all fit at once), or empty: such a chain is
  // neither run nor a failure.
  const std::string& notApplicable() const { return notApplicable_; }
  const std::vector<std::uint32_t>& parts() const { return parts_; }

  // Empty when every launch is implementable.
  std::string whyNotImplementable() const {
    for (std::size_t s = 0; s < stages_.size(); ++s) {
      const std::string why = kernel_.whyNotImplementable(argsOf(s));
      if (!why.empty()) return "stage " + std::to_string(s) + ": " + why;
    }
    return "";
  }

  GridShape grid(std::size_t s) const { return stages_[s].grid(); }

  void enqueue(cudaStream_t stream) const {
    if (!notApplicable_.empty()) throw Error("ConvChain: " + convVariantName(variant_) + " " + notApplicable_);
    executor_.enqueueIteration(stream);
  }

 private:
  // Every stage another reads posts under Policy; every reader waits on its producer under it.
  template <class Policy>
  void synchronize() {
    const ConvChainSpec& spec = buffers_.spec();
    for (std::size_t s = 0; s < stages_.size(); ++s)
      if (spec.isRead(int(s))) {
        checkPolicyCounts<Policy>(stages_[s].grid());
        stages_[s].setOutputPolicy<Policy>();
      }
    for (std::size_t s = 0; s < stages_.size(); ++s)
      if (spec.stages[s].producer >= 0) {
        producerSemaphores_[s] = stages_[spec.stages[s].producer].inputFor<Policy>(stages_[s]).producerSemaphores;
        // The consumer's and the producer's pixel tiles are the kernel's TileM (one configuration per chain).
        const std::vector<PixelTileRange> rows =
            haloRowsOf(buffers_.stage(s).shape.halo(), stages_[s].grid().y, std::uint32_t(kernel_.tileM),
                       std::uint32_t(kernel_.tileM), stages_[spec.stages[s].producer].grid().y);
        haloRows_[s] = std::make_unique<DeviceBuffer<PixelTileRange>>(rows.size());
        CUSYNC_CUDA_CHECK(cudaMemcpy(haloRows_[s]->get(), rows.data(), haloRows_[s]->bytes(), cudaMemcpyHostToDevice));
      }
  }

  ConvLaunchArgs argsOf(std::size_t s) const {
    const ConvStageBuffers& b = buffers_.stage(s);
    const int producer = buffers_.spec().stages[s].producer;
    ConvLaunchArgs a;
    a.shape = b.shape;
    a.activation = buffers_.activationOf(int(s));
    a.filter = b.filter.get();
    a.bias = b.bias.get();
    a.output = b.output.get();
    a.stage = stages_[s].view();  // semaphores null unless it posts (StreamSync, or nobody reads it)
    const bool programmatic = programmaticLaunch(variant_);
    // CUTLASS's stock kernel triggers its dependents itself, after its mainloop.
    a.triggerDependentsAtStart = programmatic && !cutlassStock(variant_) && s + 1 < stages_.size();
    // launchOrdering: the executor's, per launch (StreamOrder here, for whyNotImplementable).
    if (tileSynchronized(variant_) && producer >= 0) {
      a.producerSemaphores = producerSemaphores_[s];
      a.producerGrid = stages_[producer].grid();
      a.producerTileM = std::uint32_t(kernel_.tileM);
      a.producerTileN = std::uint32_t(kernel_.tileN);
      a.haloRows = haloRows_[s] ? haloRows_[s]->get() : nullptr;
      a.haloRowCount = haloRows_[s] ? std::uint32_t(haloRows_[s]->size()) : 0u;
    }
    if (splits_[s]->partials) {
      a.splitPartials = splits_[s]->partials->get();
      a.splitArrivals = splits_[s]->arrivals->get();
      a.splitAccumulate = splits_[s]->sum;
    }
    return a;
  }

  const ConvKernelEntry& kernel_;
  ConvVariant variant_;
  ConvChainBuffers& buffers_;
  std::vector<Stage> stages_;
  std::vector<std::unique_ptr<ConvSplitBuffers>> splits_;
  std::vector<std::uint32_t> parts_;
  std::string notApplicable_;
  std::vector<const std::uint32_t*> producerSemaphores_;
  std::vector<std::unique_ptr<DeviceBuffer<PixelTileRange>>> haloRows_;  // per waiting stage (conv_halo_rows.h)
  ChainExecutor executor_;
};

// The configuration part of an entry's name ("64x64x64_s4_b1" of "64x64x64_s4_b1_TileSync").
inline std::string convConfigOf(const ConvKernelEntry& e) { return e.name.substr(0, e.name.rfind('_')); }

// The entry of `config` with `policy` (none: CUTLASS's stock kernel), or null when it is not built.
inline const ConvKernelEntry* findConvEntry(const std::string& config, std::optional<ConvPolicyKind> policy) {
  for (const ConvKernelEntry& e : convRegistry())
    if (convConfigOf(e) == config && e.policy == policy) return &e;
  return nullptr;
}

// The configurations of the hooked kernels built, each once, in registration order.
inline std::vector<std::string> builtConvConfigs() {
  std::vector<std::string> configs;
  for (const ConvKernelEntry& e : convRegistry()) {
    if (!e.policy) continue;
    const std::string config = convConfigOf(e);
    bool seen = false;
    for (const std::string& c : configs) seen = seen || c == config;
    if (!seen) configs.push_back(config);
  }
  return configs;
}

}  // namespace cusync::examples
