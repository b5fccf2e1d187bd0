// GPT-3 MLP (tensor-parallel slice) with tile-synchronized CUTLASS sm90 GEMMs, against everything a user would pick
// instead. At every M each run is checked against a cuBLAS + exact-GELU reference on fresh random inputs, then timed
// with CUDA graphs. By default it runs the baselines, and the tuned cusync variant and StreamSync on the tuning
// table's configuration for this GPU and M (tuning_table.json, tuned_runs.h); --search runs every variant side by
// side on every configuration.
//
//   XW1 = GELU(X[M,H] * W1^T)     W1: [4H/8, H]   (GEMM 1, producer)
//   Y   = XW1 * W2^T              W2: [H, 4H/8]   (GEMM 2, consumer: waits for the XW1 tiles it reads)
//
// Usage: mlp_example [--m 1,8,...] [--pairs N] [--samples N] [--csv FILE] [--check-only] [--configs a,b]
//                    [--variants a,b] [--orders row,g8,...] [--streamk] [--baselines-only] [--verbose]
//                    [--search] [--tuning-table FILE] [--help]
// --orders: tile orders to try for both GEMMs: row (row-major), gN (rows in groups of N, column by column inside a
// group: grouped_order.h), col (column-major), or P:C for different producer and consumer orders (e.g. g8:row).
// --streamk adds CUTLASS's stock Stream-K GEMM pair; --baselines-only runs only cuBLAS and Stream-K (so that a
// baseline that misbehaves cannot stop the main comparison).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "ceilings.h"
#include "check_then_time.h"
#include "cublas_gelu_mlp_baseline.h"
#include "common/cublas_gemm.cuh"
#include "common/device_buffers.cuh"
#include "common/gelu_mlp_reference.cuh"
#include "cusync/cusync.cuh"
#include "gemm_registry.h"
#include "persistent_grid.h"
#include "mlp_options.h"
#include "mlp_results.h"
#include "mlp_variants.h"
#include "split_k.h"
#include "streamk_gemm.h"
#include "tile_orders.h"
#include "tuned_runs.h"
#include "gpt3_mlp.h"  // policies generated and proven by cusyncgen from examples/mlp/gpt3_mlp.dep

using namespace cusync;
using namespace cusync::examples;

namespace {

// GPT-3 175B, H = 12288, 8-way tensor parallel.
struct MlpShape {
  int hidden = 12288;
  int intermediate = 4 * 12288 / 8;  // 6144
};

using Buffers = GeluMlpBuffers;

// One MLP pair of a given variant and tile configuration, with the stages it synchronizes through.
class MlpPair {
 public:
  MlpPair(const TileConfig& config, const VariantSpec& variant, int m, const MlpShape& shape, Buffers& buffers,
          cudaStream_t sideStream, cudaEvent_t fork, cudaEvent_t join, int slotsPerWave, SplitK split,
          const TileOrders& orders)
      : variant_(variant), m_(m), shape_(shape), buffers_(buffers), side_(sideStream), fork_(fork), join_(join) {
    producerKernel_ = config.producer.at(variant.policy);
    consumerKernel_ = config.consumer.at(variant.policy);
    producer_ = std::make_unique<Stage>("gemm1", producerKernel_->tileGrid(m, shape.intermediate));
    consumer_ = std::make_unique<Stage>("gemm2", consumerKernel_->tileGrid(m, shape.hidden));
    producerSplit_ = SplitBuffers(*producer_, *producerKernel_, split.producerParts);
    consumerSplit_ = SplitBuffers(*consumer_, *consumerKernel_, split.consumerParts);
    setPersistentGrid(*producer_, *producerKernel_);
    setPersistentGrid(*consumer_, *consumerKernel_);
    TileOrders::apply(*producer_, orders.producerGroupRows);
    TileOrders::apply(*consumer_, orders.consumerGroupRows);
    namespace generated = cusync::generated::gpt3_mlp;
    if (variant.policy == PolicyKind::TileSync) producer_->setOutputPolicy<generated::Dep_dep_g1_TileSync>();
    else producer_->setOutputPolicy<generated::Dep_dep_g1_RowSync>();
    // "Avoid wait-kernel" (paper IV-C): when both grids fit in the slots of one wave, every producer block is
    // resident from the start, so a consumer can never occupy a slot a producer block needs.
    avoidWaitKernel_ = producer_->blocksPerLaunch() + consumer_->blocksPerLaunch() <= std::uint32_t(slotsPerWave);
  }

  bool synchronized() const { return variant_.synchronized(); }
  bool avoidsWaitKernel() const { return variant_.ordering == Ordering::WaitKernel && avoidWaitKernel_; }
  const Stage& producerStage() const { return *producer_; }
  const Stage& consumerStage() const { return *consumer_; }

  void enqueue(cudaStream_t stream) const {
    GemmLaunchArgs first;
    first.m = m_;
    first.n = shape_.intermediate;
    first.k = shape_.hidden;
    first.a = buffers_.x.get();
    first.b = buffers_.w1.get();
    first.d = buffers_.xw1.get();
    first.stage = producer_->view();
    if (!synchronized()) first.stage.semaphores = nullptr;
    first.triggerDependentsAtStart = variant_.ordering == Ordering::Pdl || variant_.ordering == Ordering::PdlGridSync;
    producerSplit_.applyTo(first);

    GemmLaunchArgs second;
    second.m = m_;
    second.n = shape_.hidden;
    second.k = shape_.intermediate;
    second.a = buffers_.xw1.get();
    second.b = buffers_.w2.get();
    second.d = buffers_.y.get();
    second.stage = consumer_->view();
    second.stage.semaphores = nullptr;
    second.loadOrder = variant_.loadOrder;
    if (synchronized()) {
      second.producerSemaphores = producer_->view().semaphores;
      second.producerGrid = producer_->grid();
      second.producerTileRows = producerKernel_->tile.m;
      second.producerTileColumns = producerKernel_->tile.n;
    }
    second.waitForPriorGrid = variant_.ordering == Ordering::PdlGridSync;
    second.launchOrdering = variant_.consumerLaunch();
    consumerSplit_.applyTo(second);

    if (variant_.ordering == Ordering::WaitKernel) {
      // Producer on `stream`, consumer on the side stream, joined before the next pair (which overwrites XW1).
      CUSYNC_CUDA_CHECK(cudaEventRecord(fork_, stream));
      CUSYNC_CUDA_CHECK(cudaStreamWaitEvent(side_, fork_));
      producerKernel_->launch(first, stream);
      if (!avoidWaitKernel_) launchWaitKernel(*producer_, *consumer_, side_);
      consumerKernel_->launch(second, side_);
      CUSYNC_CUDA_CHECK(cudaEventRecord(join_, side_));
      CUSYNC_CUDA_CHECK(cudaStreamWaitEvent(stream, join_));
    } else {
      producerKernel_->launch(first, stream);
      consumerKernel_->launch(second, stream);
    }
  }

 private:
  VariantSpec variant_;
  int m_;
  MlpShape shape_;
  Buffers& buffers_;
  cudaStream_t side_;
  cudaEvent_t fork_, join_;
  const GemmKernelEntry* producerKernel_ = nullptr;
  const GemmKernelEntry* consumerKernel_ = nullptr;
  std::unique_ptr<Stage> producer_, consumer_;
  SplitBuffers producerSplit_, consumerSplit_;
  bool avoidWaitKernel_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // progress survives a kill by timeout
  const MlpOptions options = parseMlpOptions(
      argc, argv,
      {"mlp_example", "The GPT-3 MLP on tile-synchronized CUTLASS sm90 GEMMs against cuBLAS, Stream-K and PDL.",
       "mlp_gpt3.csv", "", /*tuned=*/true});
  const std::vector<TileOrders> tileOrders = TileOrders::parseList(options.orders, options.program);
  const TuningSetup tuning = loadTuningSetup(options);  // before any CUDA call: a bad table is exit 2
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "mlp_example: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp properties{};
  CUSYNC_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  const MlpShape shape;
  const auto configs = collectConfigs(options, /*needsProducer=*/true);
  if (configs.empty()) {
    std::fprintf(stderr, "mlp_example: no complete tile configuration registered/selected\n");
    return 1;
  }

  cudaStream_t stream, side;
  // Blocking streams: the helpers that fill and compare buffers run on the legacy default stream.
  CUSYNC_CUDA_CHECK(cudaStreamCreate(&stream));
  CUSYNC_CUDA_CHECK(cudaStreamCreate(&side));
  cudaEvent_t fork, join;
  CUSYNC_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CUSYNC_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  cublasLtHandle_t lt;
  checkCublas(cublasLtCreate(&lt), "create");
  const std::size_t workspaceBytes = 64ull << 20;
  DeviceBuffer<char> workspace(workspaceBytes);

  const std::uint64_t seed = options.seedOrClock();
  std::printf("device: %s, %d SMs; seed %llu; tile configs:", properties.name, properties.multiProcessorCount,
              static_cast<unsigned long long>(seed));
  for (auto& c : configs) std::printf(" %s", c.name.c_str());
  std::printf("\n");
  // Per M: the tuned runs, or nullopt to search (each decision printed).
  std::vector<std::optional<std::vector<TunedRun>>> tunedByM;
  for (int m : options.ms)
    tunedByM.push_back(tunedRuns(tuning, options.program, properties.name, properties.multiProcessorCount,
                                 "gpt3_mlp", shape.hidden, shape.intermediate, m, configs));

  Ceilings ceilings{0, 0, 0};
  if (!options.checkOnly) {
    ceilings = measureCeilings(lt, workspace.get(), workspaceBytes, stream);
    std::printf("measured ceilings: %.0f TFLOP/s fp16 GEMM (cuBLAS 8192^3), %.0f GB/s one-pass read (floor), %.0f GB/s copy\n",
                ceilings.tflops, ceilings.readGBs,
                ceilings.copyGBs);
  }

  std::vector<Result> results;
  bool allCorrect = true;
  for (std::size_t mIndex = 0; mIndex < options.ms.size(); ++mIndex) {
    const int m = options.ms[mIndex];
    Buffers buffers(m, shape.hidden, shape.intermediate);
    // Fresh inputs; reference: cuBLAS GEMM, exact GELU, cuBLAS GEMM.
    prepareGeluMlpReference(buffers, m, shape.hidden, shape.intermediate, seed, lt, workspace.get(), workspaceBytes,
                            stream);

    // Baseline: cuBLASLt back to back, its GELU fused in the first GEMM's epilogue.
    {
      const auto [us, check] = measureCublasGeluMlp(lt, workspace.get(), workspaceBytes, buffers, m, shape.hidden,
                                                    shape.intermediate, stream, options);
      results.push_back({m, "cuBLASLt", "cuBLAS", us, check.relativeError, check.passes(kRelativeErrorBound), 0, 0,
                         false});
    }

    // Baseline: CUTLASS's stock Stream-K GEMMs back to back (workspace re-initialized in every run).
    if (options.streamK) {
      StreamKGemm gemm1(m, shape.intermediate, shape.hidden, Activation::Gelu);
      StreamKGemm gemm2(m, shape.hidden, shape.intermediate, Activation::Identity);
      auto enqueue = [&](cudaStream_t s) {
        gemm1.run(buffers.x.get(), buffers.w1.get(), buffers.xw1.get(), s);
        gemm2.run(buffers.xw1.get(), buffers.w2.get(), buffers.y.get(), s);
      };
      const auto [us, check] = checkThenTime(enqueue, {&buffers.xw1}, buffers.y, buffers.yReference, stream, options);
      const bool correct = check.passes(kRelativeErrorBound);
      allCorrect = allCorrect && correct;
      results.push_back({m, "CUTLASS-StreamK-128x128", "StreamK", us, check.relativeError, correct, 0, 0, false});
      std::printf("M=%d CUTLASS Stream-K: %.1f us, relative error %.2g%s\n", m, us, check.relativeError,
                  correct ? "" : " FAILED");
    }

    const int slotsPerWave = properties.multiProcessorCount;  // refined per kernel below
    // One run: `variant` on `config` with `split` and `orders`, checked, timed and recorded.
    auto run = [&](const TileConfig& config, const SplitK& split, const TileOrders& orders,
                   const VariantSpec& variant) {
      const int occupancy = config.producer.at(variant.policy)->maxActiveBlocksPerSm();
      const int occupancyConsumer = config.consumer.at(variant.policy)->maxActiveBlocksPerSm();
      MlpPair pair(config, variant, m, shape, buffers, side, fork, join,
                   slotsPerWave * std::min(occupancy, occupancyConsumer), split, orders);
      const std::string configLabel = config.name + split.label() + orders.label();
      if (options.verbose)
        std::printf("M=%d %s %s: tiles %u + %u, occupancy %d/%d\n", m, configLabel.c_str(),
                    variant.name().c_str(), pair.producerStage().grid().tileCount(),
                    pair.consumerStage().grid().tileCount(), occupancy, occupancyConsumer);
      const auto [us, check] = checkThenTime([&](cudaStream_t s) { pair.enqueue(s); }, {&buffers.xw1}, buffers.y,
                                             buffers.yReference, stream, options);
      const double waves1 = double(pair.producerStage().workUnitsPerLaunch()) / (slotsPerWave * occupancy);
      const double waves2 = double(pair.consumerStage().workUnitsPerLaunch()) / (slotsPerWave * occupancyConsumer);
      const bool correct = check.passes(kRelativeErrorBound);
      allCorrect = allCorrect && correct;
      results.push_back({m, configLabel, variant.name(), us, check.relativeError, correct, waves1, waves2,
                         pair.avoidsWaitKernel()});
      if (!correct)
        std::printf("FAILED: M=%d %s %s: relative error %.3g, %llu non-finite\n", m, configLabel.c_str(),
                    variant.name().c_str(), check.relativeError, check.nonFinite);
    };
    const auto& tuned = tunedByM[mIndex];
    if (tuned && !options.baselinesOnly)
      for (const TunedRun& t : *tuned)
        run(*t.config, SplitK{t.kernels.producerParts, t.kernels.consumerParts},
            TileOrders::parse(t.kernels.order, options.program), t.variant);
    for (const auto& config : configs) {
      if (options.baselinesOnly || tuned) break;
      // Split-K settings tried: none, the most parts within one wave, the fewest that fill one (each when new).
      const auto* p = config.producer.begin()->second;
      const auto* c = config.consumer.begin()->second;
      const std::vector<SplitK> splits = splitKCandidates(
          SplitKGemm{p->tileGrid(m, shape.intermediate).tileCount(), shape.hidden / p->tile.k,
                     slotsPerWave * p->maxActiveBlocksPerSm()},
          SplitKGemm{c->tileGrid(m, shape.hidden).tileCount(), shape.intermediate / c->tile.k,
                     slotsPerWave * c->maxActiveBlocksPerSm()});
      for (const TileOrders& orders : tileOrders)
      for (const SplitK& split : splits)
      for (const auto& variant : allVariants()) {
        if (!variantSelected(options, variant)) continue;
        // The rewritten kernels differ only in the WaitThenLoad order (WeightsFirst is hand-written, the same code).
        if (config.loadsReorderedByRewriter && variant.loadOrder != LoadOrder::WaitThenLoad) continue;
        run(config, split, orders, variant);
      }
    }
    // The CSV so far and a progress line after every M: a run stopped by a time limit keeps what it measured.
    writeResultsCsv(options.csvPath, results);
    std::printf("M=%d done: %zu results so far\n", m, results.size());
    std::fflush(stdout);
  }

  writeResultsCsv(options.csvPath, results);
  // Summary: per M, the best of each family, with the floor.
  printSummary(results, options.ms, [&](int m) {
    const double flops = 2.0 * m * (double(shape.hidden) * shape.intermediate * 2);
    const double bytes = 2.0 * (2.0 * shape.hidden * shape.intermediate + double(m) * shape.hidden * 2 +
                                2.0 * m * shape.intermediate);
    return options.checkOnly ? 0 : floorMicroseconds(flops, bytes, ceilings);
  });
  std::printf("\nall results checked against the reference (bound %.0e): %s; CSV: %s\n", kRelativeErrorBound,
              allCorrect ? "all correct" : "FAILURES", options.csvPath.c_str());
  return allCorrect ? 0 : 1;
}
