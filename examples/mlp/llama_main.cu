// LLaMA 65B MLP (8-way tensor-parallel slice, SwiGLU) as three tile-synchronized stages, against everything a user
// would pick instead. At every M each run is checked against a cuBLAS + exact-SwiGLU reference on fresh random
// inputs, then timed with CUDA graphs. By default it runs the baselines, and the tuned cusync variant and StreamSync
// on the tuning table's configuration for this GPU and M (tuning_table.json, tuned_runs.h); --search runs every
// variant side by side on every configuration.
//
//   [gate | up] = X[M,H] * [W1 | V]^T     [W1 | V]: [2F, H]   (GEMM 1, grid g1; posts its tiles)
//   S           = silu(gate) * up         [M, F]              (SwiGLU stage, grid gs: waits for g1, posts)
//   Y           = S * W2^T                W2: [H, F]          (GEMM 2, grid g2: waits for gs)
// with H = 8192 and F = 22016 / 8 = 2752 (llama_mlp.dep). cuBLASLt has no SwiGLU epilogue, so its baseline runs
// the same SwiGLU kernel between its GEMMs, stream-ordered.
//
// Usage: mlp_llama_example [the options of mlp_example: mlp_options.h] [--swiglu-columns 64,128]
//                          [--gate-up-order plain,paired] [--interleave]
// (--swiglu-columns and --gate-up-order restrict the search, as --configs does: they imply --search.)
// --swiglu-columns: widths of S's tiles to try (multiples of 8; S's tile rows are the GEMMs' tile rows). Widths
// other than 64 are labelled _swN after the configuration.
// --gate-up-order: GEMM 1's column order to try under each --orders entry: plain (as mlp_example), or paired
// (gate_up_order.h: gate and up tiles of the same S columns together; labelled _paired). Default: plain.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "common/cublas_gemm.cuh"
#include "common/device_buffers.cuh"
#include "cusync/chain_executor.cuh"
#include "cusync/cusync.cuh"
#include "gate_up_order.h"
#include "gemm_registry.h"
#include "gpt3_mlp.h"  // the policies compiled into the GEMM instances
#include "llama_mlp.h"  // policies generated and proven by cusyncgen from examples/mlp/llama_mlp.dep
#include "llama_policy_check.h"
#include "mlp_harness.h"
#include "mlp_options.h"
#include "mlp_results.h"
#include "mlp_variants.h"
#include "split_k.h"
#include "streamk_gemm.h"
#include "swiglu_mlp_reference.cuh"
#include "swiglu_stage.cuh"
#include "tile_orders.h"
#include "tuned_runs.h"

using namespace cusync;
using namespace cusync::examples;

namespace {

namespace gpt3 = cusync::generated::gpt3_mlp;
namespace llama = cusync::generated::llama_mlp;

// LLaMA 65B, H = 8192, F = 22016, 8-way tensor parallel.
struct LlamaShape {
  int hidden = int(llama::parameters::H);
  int intermediate = int(llama::parameters::F / 8);  // 2752: gate and up columns of GEMM 1 each, S's columns
};

// The policy the SwiGLU stage waits for GEMM 1 with (GEMM 1's consumer instances post TileSync).
using GateUpPolicy = llama::Dep_swiglu_g1_TileSync;

struct LlamaBuffers {
  DeviceBuffer<__half> x, w1v, w2, gateUp, s, y, gateUpReference, sReference, yReference;
  LlamaBuffers(int m, const LlamaShape& shape)
      : x(std::size_t(m) * shape.hidden),
        w1v(std::size_t(2 * shape.intermediate) * shape.hidden),
        w2(std::size_t(shape.hidden) * shape.intermediate),
        gateUp(std::size_t(m) * 2 * shape.intermediate),
        s(std::size_t(m) * shape.intermediate),
        y(std::size_t(m) * shape.hidden),
        gateUpReference(gateUp.size()),
        sReference(s.size()),
        yReference(y.size()) {}
};

// GEMM 1 is a consumer instance (identity epilogue, posts TileSync) without a producer: its input policy is
// irrelevant, so every variant runs the same kernel.
const GemmKernelEntry& gemm1Kernel(const TileConfig& config) { return *config.consumer.at(PolicyKind::TileSync); }

// S's tiles: the GEMMs' tile rows (so gs.y == g1.y == g2.y as in llama_mlp.dep) by `columns`.
SwiGluGeometry swiGluGeometry(const GemmKernelEntry& gemm1, int m, const LlamaShape& shape, std::uint32_t columns) {
  SwiGluGeometry g;
  g.m = std::uint32_t(m);
  g.intermediate = std::uint32_t(shape.intermediate);
  g.tileRows = std::uint32_t(gemm1.tile.m);
  g.tileColumns = columns;
  g.producerTileRows = std::uint32_t(gemm1.tile.m);
  g.producerTileColumns = std::uint32_t(gemm1.tile.n);
  return g;
}

// Launches the SwiGLU stage posting under the LLaMA spec's policy for `down` of the given kind.
using SwiGluLauncher = void (*)(const SwiGluStageArgs<GateUpPolicy>&, cudaStream_t, LaunchOrdering);
SwiGluLauncher swiGluLauncher(PolicyKind down) {
  return down == PolicyKind::TileSync ? &launchSwiGluStage<GateUpPolicy, llama::Dep_down_gs_TileSync>
                                      : &launchSwiGluStage<GateUpPolicy, llama::Dep_down_gs_RowSync>;
}
int swiGluOccupancy(PolicyKind down) {
  return down == PolicyKind::TileSync ? swiGluMaxActiveBlocksPerSm<GateUpPolicy, llama::Dep_down_gs_TileSync>()
                                      : swiGluMaxActiveBlocksPerSm<GateUpPolicy, llama::Dep_down_gs_RowSync>();
}

// One LLaMA MLP (GEMM 1 -> SwiGLU -> GEMM 2) of a given variant and configuration, with its three stages, enqueued by
// the runtime's chain executor under the variant's ordering. Launch closures refer to the chain: it does not move.
class LlamaChain {
 public:
  LlamaChain(const TileConfig& config, const VariantSpec& variant, int m, const LlamaShape& shape,
             LlamaBuffers& buffers, int smCount, SplitK split, const TileOrders& orders, bool pairGateUp,
             std::uint32_t swiGluColumns)
      : variant_(variant),
        g1_("gemm1", gemm1Kernel(config), m, 2 * shape.intermediate, split.producerParts),
        geometry_(swiGluGeometry(g1_.kernel(), m, shape, swiGluColumns)),
        gs_(std::make_unique<Stage>("swiglu", geometry_.grid())),
        g2_("gemm2", *config.consumer.at(variant.policy), m, shape.hidden, split.consumerParts),
        // Blocking side streams, as the example's own stream.
        executor_(variant.stageOrdering(), cudaStreamDefault) {
    if (pairGateUp)
      g1_.stage().setTileOrder(pairedGateUpOrder(
          g1_.stage().grid(), orders.producerGroupRows,
          pairedGateUpRanks(g1_.stage().grid().x, std::uint32_t(g1_.kernel().tile.n),
                            std::uint32_t(shape.intermediate))));
    else
      TileOrders::apply(g1_.stage(), orders.producerGroupRows);
    TileOrders::apply(g2_.stage(), orders.consumerGroupRows);
    // GEMM 1 posts with gpt3's Dep_dep_g1_TileSync and GEMM 2 waits with gpt3's Dep_dep_g1_<policy>; main() checked
    // on these grids that they compute what these LLaMA policies compute (llama_policy_check.h).
    g1_.stage().setOutputPolicy<GateUpPolicy>();
    if (variant.policy == PolicyKind::TileSync) gs_->setOutputPolicy<llama::Dep_down_gs_TileSync>();
    else gs_->setOutputPolicy<llama::Dep_down_gs_RowSync>();
    launchSwiGlu_ = swiGluLauncher(variant.policy);
    occupancy1_ = g1_.occupancy();
    occupancyS_ = swiGluOccupancy(variant.policy);
    occupancy2_ = g2_.occupancy();
    smCount_ = smCount;
    // "Avoid wait-kernel" (paper IV-C), per stage: when the spec allows it at these grids and the blocks of the
    // stage and of every stage it waits on, directly or through another, fit in the device's slots, all of them are
    // resident together and none can take a slot a block it waits for needs. Slots are counted at the smallest
    // occupancy of the three kernels. Stages in the order of the spec's canAvoidWaitKernel parameters.
    const DeviceSlots deviceSlots{std::uint32_t(smCount),
                                  std::uint32_t(std::min({occupancy1_, occupancyS_, occupancy2_}))};
    waitKernelS_ = decideWaitKernel<llama::Optimizations_swiglu>(deviceSlots, *gs_, gemm1Stage());
    waitKernel2_ = decideWaitKernel<llama::Optimizations_down>(deviceSlots, gemm2Stage(), gemm1Stage(), *gs_);

    const bool synchronized = variant.synchronized();
    first_ = g1_.launchArgs(m, 2 * shape.intermediate, shape.hidden, buffers.x.get(), buffers.w1v.get(),
                            buffers.gateUp.get(), synchronized);
    first_.triggerDependentsAtStart = variant.programmatic();

    middle_.stage = gs_->view();
    if (!synchronized) middle_.stage.semaphores = nullptr;
    if (synchronized) middle_.gateUpInput = gemm1Stage().inputFor<GateUpPolicy>(*gs_);
    middle_.geometry = geometry_;
    middle_.gateUp = buffers.gateUp.get();
    middle_.s = buffers.s.get();
    middle_.triggerDependentsAtStart = variant.programmatic();
    middle_.waitForPriorGrid = variant.ordering == Ordering::PdlGridSync;

    second_ = g2_.launchArgs(m, shape.hidden, shape.intermediate, buffers.s.get(), buffers.w2.get(),
                             buffers.y.get(), /*posts=*/false);
    second_.loadOrder = variant.loadOrder;
    if (synchronized) waitForProducer(second_, *gs_, geometry_.tileRows, geometry_.tileColumns);
    second_.waitForPriorGrid = variant.ordering == Ordering::PdlGridSync;

    // With the wait-kernel, the SwiGLU stage and GEMM 2 run each on a side stream, all joined back before the next
    // chain (which overwrites [gate | up] and S).
    executor_.add(gemm1Stage(), {}, [this](cudaStream_t stream, LaunchOrdering ordering, bool) {
      launchGemm(g1_, first_, stream, ordering);
    });
    executor_.add(
        *gs_, {&gemm1Stage()},
        [this](cudaStream_t stream, LaunchOrdering ordering, bool) { launchSwiGlu_(middle_, stream, ordering); },
        waitKernelS_);
    executor_.add(
        gemm2Stage(), {gs_.get()},
        [this](cudaStream_t stream, LaunchOrdering ordering, bool) { launchGemm(g2_, second_, stream, ordering); },
        waitKernel2_);
  }
  LlamaChain(const LlamaChain&) = delete;
  LlamaChain& operator=(const LlamaChain&) = delete;

  const Stage& gemm1Stage() const { return g1_.stage(); }
  const Stage& swiGluStage() const { return *gs_; }
  const Stage& gemm2Stage() const { return g2_.stage(); }
  // Waves of work: work units (tiles x split-K parts) over slots, also for persistent kernels (as mlp_example).
  double waves1() const { return double(gemm1Stage().workUnitsPerLaunch()) / (smCount_ * occupancy1_); }
  double wavesS() const { return double(gs_->workUnitsPerLaunch()) / (smCount_ * occupancyS_); }
  double waves2() const { return double(gemm2Stage().workUnitsPerLaunch()) / (smCount_ * occupancy2_); }
  int avoidedWaitKernels() const {
    return variant_.ordering == Ordering::WaitKernel
               ? int(waitKernelS_.avoidWaitKernel) + int(waitKernel2_.avoidWaitKernel)
               : 0;
  }
  std::string whyWaitKernels() const { return "SwiGLU: " + waitKernelS_.why + "; GEMM 2: " + waitKernel2_.why; }
  std::string occupancies() const {
    return std::to_string(occupancy1_) + "/" + std::to_string(occupancyS_) + "/" + std::to_string(occupancy2_);
  }

  void enqueue(cudaStream_t stream) const { executor_.enqueueIteration(stream); }

 private:
  static void launchGemm(const GemmStage& gemm, GemmLaunchArgs args, cudaStream_t stream, LaunchOrdering ordering) {
    args.launchOrdering = ordering;
    gemm.kernel().launch(args, stream);
  }

  VariantSpec variant_;
  GemmStage g1_;
  SwiGluGeometry geometry_;
  std::unique_ptr<Stage> gs_;
  GemmStage g2_;
  ChainExecutor executor_;
  GemmLaunchArgs first_, second_;
  SwiGluStageArgs<GateUpPolicy> middle_;
  SwiGluLauncher launchSwiGlu_ = nullptr;
  int occupancy1_ = 1, occupancyS_ = 1, occupancy2_ = 1, smCount_ = 1;
  WaitKernelDecision waitKernelS_, waitKernel2_;
};

// The SwiGLU stage between two baseline GEMMs: stream-ordered, no semaphores.
class BaselineSwiGlu {
 public:
  BaselineSwiGlu(int m, const LlamaShape& shape, std::uint32_t columns, LlamaBuffers& buffers) {
    args_.geometry.m = std::uint32_t(m);
    args_.geometry.intermediate = std::uint32_t(shape.intermediate);
    args_.geometry.tileRows = 128;
    args_.geometry.tileColumns = columns;
    args_.geometry.producerTileRows = 128;  // unused: nothing is waited for
    args_.geometry.producerTileColumns = 128;
    stage_ = std::make_unique<Stage>("swiglu", args_.geometry.grid());
    args_.stage = stage_->view();
    args_.gateUp = buffers.gateUp.get();
    args_.s = buffers.s.get();
  }
  void enqueue(cudaStream_t stream) const {
    launchSwiGluStage<GateUpPolicy, llama::Dep_down_gs_TileSync>(args_, stream, LaunchOrdering::StreamOrder);
  }

 private:
  std::unique_ptr<Stage> stage_;
  SwiGluStageArgs<GateUpPolicy> args_;
};

// Checks, on every grid the run will use, the policies of llama_policy_check.h; prints what fails.
bool policiesHold(const MlpOptions& options, const std::vector<TileConfig>& configs, const LlamaShape& shape,
                  const std::vector<std::uint32_t>& swiGluColumns) {
  std::size_t checked = 0, failed = 0;
  for (int m : options.ms)
    for (const auto& config : configs)
      for (std::uint32_t columns : swiGluColumns) {
        const GemmKernelEntry& gemm1 = gemm1Kernel(config);
        const SwiGluGeometry geometry = swiGluGeometry(gemm1, m, shape, columns);
        const GridShape g1 = gemm1.tileGrid(m, 2 * shape.intermediate);
        for (PolicyKind policy : {PolicyKind::TileSync, PolicyKind::RowSync}) {
          const auto problems =
              policy == PolicyKind::TileSync
                  ? checkLlamaPolicies<gpt3::Dep_dep_g1_TileSync, llama::Dep_down_gs_TileSync>(geometry, g1)
                  : checkLlamaPolicies<gpt3::Dep_dep_g1_RowSync, llama::Dep_down_gs_RowSync>(geometry, g1);
          ++checked;
          for (const auto& problem : problems) {
            ++failed;
            std::fprintf(stderr, "%s: policy check failed (M=%d, %s, S tile %ux%u, %s): %s\n",
                         options.program.c_str(), m, config.name.c_str(), geometry.tileRows, columns,
                         policyName(policy), problem.c_str());
          }
        }
      }
  std::printf("policies: the compiled GEMM policies equal llama_mlp.dep's proven ones and hold, tile by tile, on %zu "
              "chains of grids%s\n",
              checked, failed == 0 ? "" : " -- NOT: see the errors above");
  return failed == 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // progress survives a kill by timeout
  const std::string program = "mlp_llama_example";
  std::vector<std::uint32_t> swiGluColumns{64};
  std::vector<bool> gateUpOrders{false};  // paired or not
  const MlpProgram description{
      program, "The LLaMA MLP (GEMM, SwiGLU stage, GEMM) tile-synchronized, against cuBLAS, Stream-K and PDL.",
      "mlp_llama.csv",
      "  --swiglu-columns 64,128    widths of the SwiGLU stage's tiles to try (multiples of 8; default 64)\n"
      "  --gate-up-order plain,paired  GEMM 1's column order: plain, or gate and up tiles paired (default plain)\n" +
          std::string(kInterleaveUsage),
      /*tuned=*/true};
  bool interleave = false;
  bool llamaSearchOptions = false;  // --swiglu-columns or --gate-up-order: they restrict the search
  MlpOptions options = parseMlpOptions(
      argc, argv, description, [&](const std::string& arg, const ArgumentValue& value) {
        if (arg == "--interleave") {
          interleave = true;
          return true;
        }
        if (arg == "--gate-up-order") {
          llamaSearchOptions = true;
          gateUpOrders.clear();
          for (const auto& word : splitList(value())) {
            if (word != "plain" && word != "paired") {
              std::fprintf(stderr, "%s: --gate-up-order: '%s' is neither plain nor paired\n", program.c_str(),
                           word.c_str());
              std::exit(2);
            }
            gateUpOrders.push_back(word == "paired");
          }
          return true;
        }
        if (arg != "--swiglu-columns") return false;
        llamaSearchOptions = true;
        swiGluColumns.clear();
        for (const auto& word : splitList(value())) {
          const std::optional<long long> columns = parseIntegerInRange(word, 1, INT_MAX);
          if (!columns || *columns % kSwiGluVector != 0) {
            std::fprintf(stderr, "%s: --swiglu-columns: '%s' is not a positive multiple of %d\n", program.c_str(),
                         word.c_str(), kSwiGluVector);
            std::exit(2);
          }
          swiGluColumns.push_back(std::uint32_t(*columns));
        }
        return true;
      });
  if (swiGluColumns.empty() || gateUpOrders.empty()) {
    std::fprintf(stderr, "%s: --swiglu-columns and --gate-up-order need at least one value\n", program.c_str());
    return 2;
  }
  options.searchRestricted = options.searchRestricted || llamaSearchOptions;
  const std::vector<TileOrders> tileOrders = TileOrders::parseList(options.orders, options.program);
  const TuningSetup tuning = loadTuningSetup(options);  // before any CUDA call: a bad table is exit 2
  const std::optional<cudaDeviceProp> properties = firstCudaDevice(program);
  if (!properties) return kNoCudaDevice;
  const LlamaShape shape;
  std::vector<TileConfig> configs;
  // GEMM 1's paired gate/up order is not a cluster order (gate_up_order.h): configurations in clusters are the GPT-3
  // example's only.
  for (TileConfig& config : collectConfigs(options, /*needsProducer=*/false)) {
    if (config.consumer.begin()->second->clusterRows > 1)
      std::printf("%s: skipping %s (2x1 clusters: mlp_example only)\n", program.c_str(), config.name.c_str());
    else
      configs.push_back(std::move(config));
  }
  if (configs.empty()) {
    std::fprintf(stderr, "%s: no complete tile configuration registered/selected\n", program.c_str());
    return 1;
  }
  // Per M: the tuned runs, or nullopt to search (each decision printed).
  const auto tunedByM =
      tunedRunsPerM(tuning, options, *properties, "llama_mlp", shape.hidden, shape.intermediate, configs);
  std::vector<std::uint32_t> checkedColumns = swiGluColumns;  // and the tuned runs' SwiGLU widths
  for (const auto& tuned : tunedByM)
    if (tuned)
      for (const TunedRun& t : *tuned)
        if (std::find(checkedColumns.begin(), checkedColumns.end(), t.kernels.swiGluColumns) == checkedColumns.end())
          checkedColumns.push_back(t.kernels.swiGluColumns);
  // Before any kernel runs: refuse kernels whose compiled policies are not the LLaMA spec's on these grids.
  if (!policiesHold(options, configs, shape, checkedColumns)) return 1;

  const MlpDevice device(*properties);
  const cudaStream_t stream = device.stream();

  const std::uint64_t seed = options.seedOrClock();
  std::printf("%s; seed %llu; tile configs:", device.line().c_str(), static_cast<unsigned long long>(seed));
  for (auto& c : configs) std::printf(" %s", c.name.c_str());
  std::printf("; SwiGLU tile columns:");
  for (std::uint32_t c : swiGluColumns) std::printf(" %u", c);
  std::printf("\n");
  const Ceilings ceilings = device.measureCeilings(options);

  MlpResults results(options, "waves_swiglu");
  if (interleave) results.interleaveTimings();  // every variant's enqueue owns what it launches (shared_ptr)
  const int smCount = device.smCount();
  for (std::size_t mIndex = 0; mIndex < options.ms.size(); ++mIndex) {
    const int m = options.ms[mIndex];
    LlamaBuffers buffers(m, shape);
    const CheckedOutput checked{{&buffers.gateUp, &buffers.s}, &buffers.y, &buffers.yReference};
    // Fresh inputs and the reference: GEMM, exact SwiGLU (its own simple kernel), GEMM, on cuBLASLt or the direct
    // kernel (--reference).
    prepareSwiGluMlpReference({buffers.x, buffers.w1v, buffers.w2, buffers.gateUpReference, buffers.sReference,
                               buffers.yReference},
                              m, shape.hidden, shape.intermediate, seed, device.referenceGemm(options), stream);

    // Baseline: cuBLASLt GEMM, the SwiGLU stage kernel stream-ordered, cuBLASLt GEMM.
    // Shared with the enqueue function, which an interleaved timing keeps until the M's end.
    {
      auto gemm1 = std::make_shared<CublasLtGemm>(device.lt(), m, 2 * shape.intermediate, shape.hidden, false,
                                                  device.workspace(), device.workspaceBytes());
      auto gemm2 = std::make_shared<CublasLtGemm>(device.lt(), m, shape.hidden, shape.intermediate, false,
                                                  device.workspace(), device.workspaceBytes());
      auto swiglu = std::make_shared<BaselineSwiGlu>(m, shape, swiGluColumns.front(), buffers);
      results.runBaseline(
          [gemm1, gemm2, swiglu, &buffers](cudaStream_t s) {
            gemm1->run(buffers.x.get(), buffers.w1v.get(), buffers.gateUp.get(), s);
            swiglu->enqueue(s);
            gemm2->run(buffers.s.get(), buffers.w2.get(), buffers.y.get(), s);
          },
          checked, m, "cuBLASLt", "cuBLAS", "cuBLAS baseline", stream);
    }

    // Baseline: CUTLASS's stock Stream-K GEMMs with the SwiGLU stage between them (workspace re-initialized in
    // every run).
    if (options.streamK) {
      auto gemm1 = std::make_shared<StreamKGemm>(m, 2 * shape.intermediate, shape.hidden, Activation::Identity);
      auto gemm2 = std::make_shared<StreamKGemm>(m, shape.hidden, shape.intermediate, Activation::Identity);
      auto swiglu = std::make_shared<BaselineSwiGlu>(m, shape, swiGluColumns.front(), buffers);
      results.runStreamKBaseline(
          [gemm1, gemm2, swiglu, &buffers](cudaStream_t s) {
            gemm1->run(buffers.x.get(), buffers.w1v.get(), buffers.gateUp.get(), s);
            swiglu->enqueue(s);
            gemm2->run(buffers.s.get(), buffers.w2.get(), buffers.y.get(), s);
          },
          checked, m, stream);
    }

    // One run: `variant` on `config` with `split`, `orders`, the gate/up order and S's tile width, checked, timed
    // and recorded.
    auto run = [&](const TileConfig& config, const SplitK& split, const TileOrders& orders, bool pairGateUp,
                   std::uint32_t columns, const VariantSpec& variant) {
      // Shared with the enqueue function, which an interleaved timing keeps until the M's end.
      const auto shared =
          std::make_shared<const LlamaChain>(config, variant, m, shape, buffers, smCount, split, orders, pairGateUp,
                                             columns);
      const LlamaChain& chain = *shared;
      const std::string configLabel = config.name + split.label() + orders.label() + (pairGateUp ? "_paired" : "") +
                                      (columns == 64 ? std::string() : "_sw" + std::to_string(columns));
      if (options.verbose)
        std::printf("M=%d %s %s: tiles %u + %u + %u, occupancy %s; %s\n", m, configLabel.c_str(),
                    variant.name().c_str(), chain.gemm1Stage().grid().tileCount(),
                    chain.swiGluStage().grid().tileCount(), chain.gemm2Stage().grid().tileCount(),
                    chain.occupancies().c_str(), chain.whyWaitKernels().c_str());
      Result row{m, configLabel, variant.name(), 0, 0, false, chain.waves1(), chain.waves2(),
                 chain.avoidedWaitKernels()};
      row.wavesMiddle = chain.wavesS();
      results.run([shared](cudaStream_t s) { shared->enqueue(s); }, checked, row, stream);
    };
    const auto& tuned = tunedByM[mIndex];
    if (tuned && !options.baselinesOnly)
      for (const TunedRun& t : *tuned)
        run(*t.config, SplitK{t.kernels.producerParts, t.kernels.consumerParts},
            TileOrders::parse(t.kernels.order, program), t.kernels.pairedGateUp, t.kernels.swiGluColumns, t.variant);
    for (const auto& config : configs) {
      if (options.baselinesOnly || tuned) break;
      const std::vector<SplitK> splits =
          gemmSplitCandidates(gemm1Kernel(config), 2 * shape.intermediate, shape.hidden,
                              *config.consumer.begin()->second, shape.hidden, shape.intermediate, m, smCount);
      for (std::uint32_t columns : swiGluColumns)
      for (const TileOrders& orders : tileOrders)
      for (bool pairGateUp : gateUpOrders)
      for (const SplitK& split : splits)
      for (const auto& variant : allVariants()) {
        if (!variantSelected(options, variant)) continue;
        // The rewritten kernels differ only in the WaitThenLoad order (WeightsFirst is hand-written, the same code).
        if (config.loadsReorderedByRewriter && variant.loadOrder != LoadOrder::WaitThenLoad) continue;
        run(config, split, orders, pairGateUp, columns, variant);
      }
    }
    results.timeDeferred(stream);  // --interleave: while the buffers live
    results.finishM(m);
  }

  results.writeCsv();
  // Summary: per M, the best of each family, with the floor.
  printSummary(results.rows(), options.ms, [&](int m) {
    const double weights = 3.0 * shape.hidden * shape.intermediate;  // [W1 | V] and W2
    const double flops = 2.0 * m * weights;
    // fp16: weights, X and Y, [gate | up] written and read, S written and read.
    const double bytes = 2.0 * (weights + 2.0 * m * shape.hidden + 6.0 * m * shape.intermediate);
    return options.checkOnly ? 0 : floorMicroseconds(flops, bytes, ceilings);
  });
  return results.finish();
}
