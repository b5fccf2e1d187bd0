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
//                    [--search] [--tuning-table FILE] [--interleave] [--warmup-ms N] [--block-trace FILE] [--help]
// --orders: tile orders to try for both GEMMs: row (row-major), gN (rows in groups of N, column by column inside a
// group: grouped_order.h), col (column-major), or P:C for different producer and consumer orders (e.g. g8:row).
// --streamk adds CUTLASS's stock Stream-K GEMM pair; --baselines-only runs only cuBLAS and Stream-K (so that a
// baseline that misbehaves cannot stop the main comparison). --interleave times every variant of an M together, in
// rounds that interleave them (as mlp_fused_example --interleave), instead of one after another. --block-trace
// records every block of one more run of each variant (block_trace.h; bench/attention/summarize_block_trace.py).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "cublas_gelu_mlp_baseline.h"
#include "common/gelu_mlp_reference.cuh"
#include "cusync/chain_executor.cuh"
#include "cusync/cusync.cuh"
#include "gemm_registry.h"
#include "mlp_harness.h"
#include "mlp_options.h"
#include "mlp_results.h"
#include "mlp_variants.h"
#include "split_k.h"
#include "streamk_gemm.h"
#include "tile_orders.h"
#include "tuned_runs.h"
#include "two_stage_block_trace.h"
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

// One MLP pair of a given variant and tile configuration, with the stages it synchronizes through, enqueued by the
// runtime's chain executor under the variant's ordering. Launch closures refer to the pair: it does not move.
class MlpPair {
 public:
  MlpPair(const TileConfig& config, const VariantSpec& variant, int m, const MlpShape& shape, Buffers& buffers,
          DeviceSlots deviceSlots, SplitK split, const TileOrders& orders)
      : variant_(variant),
        producer_("gemm1", *config.producer.at(variant.policy), m, shape.intermediate, split.producerParts),
        consumer_("gemm2", *config.consumer.at(variant.policy), m, shape.hidden, split.consumerParts),
        // Blocking side streams, as the example's own stream.
        executor_(variant.stageOrdering(), cudaStreamDefault) {
    TileOrders::apply(producer_.stage(), orders.producerGroupRows, std::uint32_t(producer_.kernel().clusterRows));
    TileOrders::apply(consumer_.stage(), orders.consumerGroupRows, std::uint32_t(consumer_.kernel().clusterRows));
    namespace generated = cusync::generated::gpt3_mlp;
    if (variant.policy == PolicyKind::TileSync) producer_.stage().setOutputPolicy<generated::Dep_dep_g1_TileSync>();
    else producer_.stage().setOutputPolicy<generated::Dep_dep_g1_RowSync>();
    // "Avoid wait-kernel" (paper IV-C): when the spec allows it at these grids and both launches' blocks fit in the
    // device's slots, every producer block is resident from the start, so a consumer can never occupy a slot a
    // producer block needs.
    waitKernelDecision_ = decideWaitKernel<generated::Optimizations_dep>(deviceSlots, consumerStage(), producerStage());

    first_ = producer_.launchArgs(m, shape.intermediate, shape.hidden, buffers.x.get(), buffers.w1.get(),
                                  buffers.xw1.get(), synchronized());
    first_.triggerDependentsAtStart = variant.programmatic();
    second_ = consumer_.launchArgs(m, shape.hidden, shape.intermediate, buffers.xw1.get(), buffers.w2.get(),
                                   buffers.y.get(), /*posts=*/false);
    second_.loadOrder = variant.loadOrder;
    if (synchronized())
      waitForProducer(second_, producerStage(), std::uint32_t(producer_.kernel().tile.m),
                      std::uint32_t(producer_.kernel().tile.n));
    second_.waitForPriorGrid = variant.ordering == Ordering::PdlGridSync;
    // With the wait-kernel, GEMM 2 runs on a side stream joined back before the next pair (which overwrites XW1).
    executor_.add(producerStage(), {}, [this](cudaStream_t stream, LaunchOrdering ordering, bool) {
      launch(producer_, first_, stream, ordering);
    });
    executor_.add(
        consumerStage(), {&producerStage()},
        [this](cudaStream_t stream, LaunchOrdering ordering, bool) { launch(consumer_, second_, stream, ordering); },
        waitKernelDecision_);
  }
  MlpPair(const MlpPair&) = delete;
  MlpPair& operator=(const MlpPair&) = delete;

  bool synchronized() const { return variant_.synchronized(); }
  bool avoidsWaitKernel() const {
    return variant_.ordering == Ordering::WaitKernel && waitKernelDecision_.avoidWaitKernel;
  }
  const std::string& whyWaitKernel() const { return waitKernelDecision_.why; }
  const Stage& producerStage() const { return producer_.stage(); }
  const Stage& consumerStage() const { return consumer_.stage(); }

  void enqueue(cudaStream_t stream) const { executor_.enqueueIteration(stream); }

  // --block-trace: the enqueues that follow record a block trace (block_trace.h) of GEMM 1 (stage 0) into `first`
  // and of GEMM 2 (stage 1) into `second`, blocksOfStage records each; null: none.
  void setBlockTraces(BlockTrace* first, BlockTrace* second) {
    first_.trace = first;
    first_.traceStage = 0;
    second_.trace = second;
    second_.traceStage = 1;
  }
  std::uint32_t blocksOfStage(int stage) const {
    return (stage == 0 ? producerStage() : consumerStage()).blocksPerLaunch();
  }

 private:
  static void launch(const GemmStage& gemm, GemmLaunchArgs args, cudaStream_t stream, LaunchOrdering ordering) {
    args.launchOrdering = ordering;
    gemm.kernel().launch(args, stream);
  }

  VariantSpec variant_;
  GemmStage producer_, consumer_;
  GemmLaunchArgs first_, second_;
  ChainExecutor executor_;
  WaitKernelDecision waitKernelDecision_;
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // progress survives a kill by timeout
  bool interleave = false;
  std::string blockTracePath;
  const MlpOptions options = parseMlpOptions(
      argc, argv,
      {"mlp_example", "The GPT-3 MLP on tile-synchronized CUTLASS sm90 GEMMs against cuBLAS, Stream-K and PDL.",
       "mlp_gpt3.csv",
       std::string(kInterleaveUsage) +
           "  --block-trace FILE  record every block of one more run of each variant into FILE (CSV, as\n"
           "                      attention_example --trace writes)\n",
       /*tuned=*/true},
      [&](const std::string& argument, const ArgumentValue& value) {
        if (argument == "--interleave") {
          interleave = true;
          return true;
        }
        if (argument == "--block-trace") {
          blockTracePath = value();
          return true;
        }
        return false;
      });
  // Why --block-trace: the two-launch pingpong chain ran a third slower tile-synchronized than stream-ordered, and
  // the totals could not say when GEMM 2's blocks started or how long they waited (docs/BENCHMARKS.md, issue 12,
  // session 37). Refused before any GPU work, as --csv is.
  if (!blockTracePath.empty()) requireWritableOutput(options.program, "--block-trace", blockTracePath);
  const std::vector<TileOrders> tileOrders = TileOrders::parseList(options.orders, options.program);
  const TuningSetup tuning = loadTuningSetup(options);  // before any CUDA call: a bad table is exit 2
  const std::optional<cudaDeviceProp> properties = firstCudaDevice(options.program);
  if (!properties) return kNoCudaDevice;
  const MlpShape shape;
  const auto configs = collectConfigs(options, /*needsProducer=*/true);
  if (configs.empty()) {
    std::fprintf(stderr, "mlp_example: no complete tile configuration registered/selected\n");
    return 1;
  }

  const MlpDevice device(*properties);
  const cudaStream_t stream = device.stream();

  const std::uint64_t seed = options.seedOrClock();
  std::printf("%s; seed %llu; tile configs:", device.line().c_str(), static_cast<unsigned long long>(seed));
  for (auto& c : configs) std::printf(" %s", c.name.c_str());
  std::printf("\n");
  // Per M: the tuned runs, or nullopt to search (each decision printed).
  const auto tunedByM = tunedRunsPerM(tuning, options, *properties, "gpt3_mlp", shape.hidden, shape.intermediate,
                                      configs);
  const Ceilings ceilings = device.measureCeilings(options);

  MlpResults results(options);
  if (interleave) results.interleaveTimings();  // every variant's enqueue owns what it launches (shared_ptr)
  std::FILE* blockTraceFile = openTraceCsv(blockTracePath, kBlockTraceCsvHeader, options.program);
  for (std::size_t mIndex = 0; mIndex < options.ms.size(); ++mIndex) {
    const int m = options.ms[mIndex];
    Buffers buffers(m, shape.hidden, shape.intermediate);
    const CheckedOutput checked{{&buffers.xw1}, &buffers.y, &buffers.yReference};
    // Fresh inputs; reference: GEMM, GELU (cusync/gelu.cuh), GEMM, on cuBLASLt or the direct kernel (--reference).
    prepareGeluMlpReference(buffers, m, shape.hidden, shape.intermediate, seed, device.referenceGemm(options), stream);

    // Baseline: cuBLASLt back to back, its GELU fused in the first GEMM's epilogue.
    results.record(Result{m, "cuBLASLt", "cuBLAS", 0, 0, false, 0, 0, 0},
                   measureCublasGeluMlp(device.lt(), device.workspace(), device.workspaceBytes(), buffers, m,
                                        shape.hidden, shape.intermediate, stream, options, results.deferred()),
                   "cuBLAS baseline");

    // Baseline: CUTLASS's stock Stream-K GEMMs back to back (workspace re-initialized in every run).
    if (options.streamK) {
      // Shared with the enqueue function, which an interleaved timing keeps until the M's end.
      auto gemm1 = std::make_shared<StreamKGemm>(m, shape.intermediate, shape.hidden, Activation::Gelu);
      auto gemm2 = std::make_shared<StreamKGemm>(m, shape.hidden, shape.intermediate, Activation::Identity);
      results.runStreamKBaseline(
          [gemm1, gemm2, &buffers](cudaStream_t s) {
            gemm1->run(buffers.x.get(), buffers.w1.get(), buffers.xw1.get(), s);
            gemm2->run(buffers.xw1.get(), buffers.w2.get(), buffers.y.get(), s);
          },
          checked, m, stream);
    }

    const int slotsPerWave = device.smCount();  // refined per kernel below
    // One run: `variant` on `config` with `split` and `orders`, checked, timed and recorded.
    auto run = [&](const TileConfig& config, const SplitK& split, const TileOrders& orders,
                   const VariantSpec& variant) {
      const int occupancy = config.producer.at(variant.policy)->maxActiveBlocksPerSm();
      const int occupancyConsumer = config.consumer.at(variant.policy)->maxActiveBlocksPerSm();
      const DeviceSlots deviceSlots{std::uint32_t(slotsPerWave), std::uint32_t(std::min(occupancy, occupancyConsumer))};
      // Shared with the enqueue function, which an interleaved timing keeps until the M's end.
      const auto shared = std::make_shared<MlpPair>(config, variant, m, shape, buffers, deviceSlots, split, orders);
      const MlpPair& pair = *shared;
      const std::string configLabel = config.name + split.label() + orders.label();
      if (options.verbose)
        std::printf("M=%d %s %s: tiles %u + %u, occupancy %d/%d; %s\n", m, configLabel.c_str(),
                    variant.name().c_str(), pair.producerStage().grid().tileCount(),
                    pair.consumerStage().grid().tileCount(), occupancy, occupancyConsumer,
                    pair.whyWaitKernel().c_str());
      const double waves1 = double(pair.producerStage().workUnitsPerLaunch()) / (slotsPerWave * occupancy);
      const double waves2 = double(pair.consumerStage().workUnitsPerLaunch()) / (slotsPerWave * occupancyConsumer);
      results.run([shared](cudaStream_t s) { shared->enqueue(s); }, checked,
                  Result{m, configLabel, variant.name(), 0, 0, false, waves1, waves2, pair.avoidsWaitKernel()},
                  stream);
      if (blockTraceFile != nullptr)
        writeTwoStageBlockTrace(
            *shared, [&pair](cudaStream_t s) { pair.enqueue(s); }, variant.name(), configLabel, blockTraceFile,
            stream);
    };
    const auto& tuned = tunedByM[mIndex];
    if (tuned && !options.baselinesOnly)
      for (const TunedRun& t : *tuned)
        run(*t.config, SplitK{t.kernels.producerParts, t.kernels.consumerParts},
            TileOrders::parse(t.kernels.order, options.program), t.variant);
    for (const auto& config : configs) {
      if (options.baselinesOnly || tuned) break;
      // A GEMM in 2x1 clusters runs on an even number of tile rows only (cluster_tile_order.h refuses others).
      const GemmKernelEntry& first = *config.producer.begin()->second;
      const GemmKernelEntry& second = *config.consumer.begin()->second;
      if (!clustersFitRows(first, m, shape.intermediate) || !clustersFitRows(second, m, shape.hidden)) {
        std::printf("M=%d %s: skipped (its %d-row clusters do not divide the tile rows)\n", m, config.name.c_str(),
                    second.clusterRows);
        continue;
      }
      // Split-K settings tried: none, the most parts within one wave, the fewest that fill one (each when new).
      const std::vector<SplitK> splits = gemmSplitCandidates(first, shape.intermediate, shape.hidden, second,
                                                             shape.hidden, shape.intermediate, m, slotsPerWave);
      for (const TileOrders& orders : tileOrders)
      for (const SplitK& split : splits)
      for (const auto& variant : allVariants()) {
        if (!variantSelected(options, variant)) continue;
        // The rewritten kernels differ only in the WaitThenLoad order (WeightsFirst is hand-written, the same code).
        if (config.loadsReorderedByRewriter && variant.loadOrder != LoadOrder::WaitThenLoad) continue;
        run(config, split, orders, variant);
      }
    }
    results.timeDeferred(stream);  // --interleave: while the buffers live
    results.finishM(m);
  }

  results.writeCsv();
  if (blockTraceFile != nullptr) std::fclose(blockTraceFile);
  // Summary: per M, the best of each family, with the floor.
  printSummary(results.rows(), options.ms, [&](int m) {
    const double flops = 2.0 * m * (double(shape.hidden) * shape.intermediate * 2);
    const double bytes = 2.0 * (2.0 * shape.hidden * shape.intermediate + double(m) * shape.hidden * 2 +
                                2.0 * m * shape.intermediate);
    return options.checkOnly ? 0 : floorMicroseconds(flops, bytes, ceilings);
  });
  return results.finish();
}
