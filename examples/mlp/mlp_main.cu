// GPT-3 MLP (tensor-parallel slice) with tile-synchronized CUTLASS sm90 GEMMs, against everything a user would pick
// instead. One binary, one run: every variant side by side at every M, each checked against a cuBLAS + exact-GELU
// reference on fresh random inputs, then timed with CUDA graphs.
//
//   XW1 = GELU(X[M,H] * W1^T)     W1: [4H/8, H]   (GEMM 1, producer)
//   Y   = XW1 * W2^T              W2: [H, 4H/8]   (GEMM 2, consumer: waits for the XW1 tiles it reads)
//
// Usage: mlp_example [--m 1,8,...] [--pairs N] [--samples N] [--csv FILE] [--check-only] [--configs a,b]
//                    [--variants a,b] [--orders row,g8,...] [--streamk] [--baselines-only] [--verbose]
// --orders: tile orders to try for both GEMMs: row (row-major), gN (rows in groups of N, column by column inside a
// group: grouped_order.h), col (column-major), or P:C for different producer and consumer orders (e.g. g8:row).
// --streamk adds CUTLASS's stock Stream-K GEMM pair; --baselines-only runs only cuBLAS and Stream-K (so that a
// baseline that misbehaves cannot stop the main comparison).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "common/cublas_gemm.cuh"
#include "common/device_buffers.cuh"
#include "common/graph_timer.cuh"
#include "cusync/cusync.cuh"
#include "gemm_registry.h"
#include "streamk_gemm.h"
#include "gpt3_mlp.h"  // policies generated and proven by cusyncgen from examples/mlp/gpt3_mlp.dep

using namespace cusync;
using namespace cusync::examples;

namespace {

constexpr double kRelativeErrorBound = 2e-2;  // fp16 operands and intermediate, fp32 accumulation, K = 6144..12288

struct Options {
  std::vector<int> ms{1, 8, 64, 128, 256, 512, 1024, 2048, 4096};
  int pairsPerGraph = 10;
  int samples = 9;
  std::string csvPath = "mlp_gpt3.csv";
  bool checkOnly = false;
  bool verbose = false;
  bool streamK = false;
  bool baselinesOnly = false;
  std::vector<std::string> configs;  // tile configurations to try (empty: all registered)
  std::vector<std::string> variants;  // variants to run (empty: all)
  std::vector<std::string> orders{"row", "g8"};  // tile orders to try (see the usage comment)
};

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

Options parseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "mlp_example: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--m") {
      options.ms.clear();
      for (auto& m : splitList(value())) options.ms.push_back(std::stoi(m));
    } else if (arg == "--pairs") {
      options.pairsPerGraph = std::stoi(value());
    } else if (arg == "--samples") {
      options.samples = std::stoi(value());
    } else if (arg == "--csv") {
      options.csvPath = value();
    } else if (arg == "--streamk") {
      options.streamK = true;
    } else if (arg == "--baselines-only") {
      options.baselinesOnly = true;
      options.streamK = true;
    } else if (arg == "--verbose") {
      options.verbose = true;
    } else if (arg == "--check-only") {
      options.checkOnly = true;
    } else if (arg == "--variants") {
      options.variants = splitList(value());
    } else if (arg == "--orders") {
      options.orders = splitList(value());
    } else if (arg == "--configs") {
      options.configs = splitList(value());
    } else {
      std::fprintf(stderr, "mlp_example: unknown argument '%s'\n", arg.c_str());
      std::exit(2);
    }
  }
  return options;
}

// GPT-3 175B, H = 12288, 8-way tensor parallel.
struct MlpShape {
  int hidden = 12288;
  int intermediate = 4 * 12288 / 8;  // 6144
};

// A tile configuration: the kernels of both GEMMs for both policies.
struct TileConfig {
  std::string name;  // e.g. 128x128x64_s4_coop_b1
  std::map<PolicyKind, const GemmKernelEntry*> producer;  // GELU, posts under the policy
  std::map<PolicyKind, const GemmKernelEntry*> consumer;  // identity, waits under the policy
  bool loadsReorderedByRewriter = false;  // "+Rw": B issued before the wait for A by cusync-tile-rewriter
};

std::string configName(const GemmKernelEntry& e) {
  return std::to_string(e.tile.m) + "x" + std::to_string(e.tile.n) + "x" + std::to_string(e.tile.k) + "_s" +
         std::to_string(e.stages) + (e.cooperative ? "_coop" : "_ws") + "_b" + std::to_string(e.minBlocksPerSm) +
         (e.loadsReorderedByRewriter ? "_Rw" : "");
}

std::vector<TileConfig> collectConfigs(const Options& options) {
  std::map<std::string, TileConfig> byName;
  for (const auto& entry : gemmRegistry()) {
    TileConfig& config = byName[configName(entry)];
    config.name = configName(entry);
    config.loadsReorderedByRewriter = entry.loadsReorderedByRewriter;
    if (entry.activation == Activation::Gelu) config.producer[entry.outputPolicy] = &entry;
    else config.consumer[entry.inputPolicy] = &entry;
  }
  std::vector<TileConfig> configs;
  for (auto& [name, config] : byName) {
    const bool wanted = options.configs.empty() ||
                        std::find(options.configs.begin(), options.configs.end(), name) != options.configs.end();
    if (wanted && config.producer.size() == 2 && config.consumer.size() == 2) configs.push_back(config);
  }
  return configs;
}

enum class Ordering { StreamSync, WaitKernel, Pdl, PdlGridSync };
const char* orderingName(Ordering o) {
  switch (o) {
    case Ordering::StreamSync: return "StreamSync";
    case Ordering::WaitKernel: return "WaitKernel";
    case Ordering::Pdl: return "PDL";
    case Ordering::PdlGridSync: return "PDL-GridSync";
  }
  return "?";
}

struct VariantSpec {
  Ordering ordering;
  PolicyKind policy;  // meaningful for WaitKernel and Pdl
  LoadOrder loadOrder;
  std::string name() const {
    std::string n = orderingName(ordering);
    if (ordering == Ordering::WaitKernel || ordering == Ordering::Pdl) n = std::string(policyName(policy)) + "+" + n;
    if (loadOrder == LoadOrder::WeightsFirst) n += "+R";
    return n;
  }
};

std::vector<VariantSpec> allVariants() {
  std::vector<VariantSpec> variants{{Ordering::StreamSync, PolicyKind::TileSync, LoadOrder::WaitThenLoad},
                                    {Ordering::PdlGridSync, PolicyKind::TileSync, LoadOrder::WeightsFirst}};
  for (PolicyKind p : {PolicyKind::TileSync, PolicyKind::RowSync})
    for (Ordering o : {Ordering::WaitKernel, Ordering::Pdl})
      for (LoadOrder r : {LoadOrder::WaitThenLoad, LoadOrder::WeightsFirst})
        variants.push_back({o, p, r});
  return variants;
}

struct Buffers {
  DeviceBuffer<__half> x, w1, w2, xw1, y, xw1Reference, yReference;
  Buffers(int m, const MlpShape& s)
      : x(std::size_t(m) * s.hidden),
        w1(std::size_t(s.intermediate) * s.hidden),
        w2(std::size_t(s.hidden) * s.intermediate),
        xw1(std::size_t(m) * s.intermediate),
        y(std::size_t(m) * s.hidden),
        xw1Reference(std::size_t(m) * s.intermediate),
        yReference(std::size_t(m) * s.hidden) {}
};

__global__ void geluInPlace(__half* data, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float v = __half2float(data[i]);
    data[i] = __float2half(0.5f * v * (1.0f + erff(v * 0.70710678118654752f)));  // exact GELU, as CUTLASS's
  }
}

// The tile orders of both GEMMs: rows taken `groupRows` at a time, column by column inside a group (1 = row-major,
// 0 = column-major, i.e. all rows in one group).
struct TileOrders {
  std::uint32_t producerGroupRows = 1, consumerGroupRows = 1;
  std::string text = "row";  // as given on the command line

  static std::uint32_t parseOne(const std::string& word) {
    if (word == "row") return 1;
    if (word == "col") return 0;
    if (word.size() > 1 && word[0] == 'g') {
      const int rows = std::atoi(word.c_str() + 1);
      if (rows > 0) return std::uint32_t(rows);
    }
    std::fprintf(stderr, "mlp_example: unknown tile order '%s' (row, col, gN or P:C)\n", word.c_str());
    std::exit(2);
  }
  static TileOrders parse(const std::string& text) {
    const auto colon = text.find(':');
    TileOrders orders;
    orders.text = text;
    orders.producerGroupRows = parseOne(text.substr(0, colon));
    orders.consumerGroupRows = colon == std::string::npos ? orders.producerGroupRows : parseOne(text.substr(colon + 1));
    return orders;
  }
  std::string label() const { return text == "row" ? std::string() : "_" + text; }

  static void apply(Stage& stage, std::uint32_t groupRows) {
    const GridShape g = stage.grid();
    if (groupRows == 1) return;  // the stage's default order
    std::vector<std::uint32_t> indexOfTile(g.tileCount());
    for (std::uint32_t linear = 0; linear < g.tileCount(); ++linear)
      indexOfTile[linear] = groupedColumnMajorIndex(tileAtLinear(linear, g), g, groupRows == 0 ? g.y : groupRows);
    stage.setTileOrder(indexOfTile);
  }
};

// Split-K parts of both GEMMs (1 = none).
struct SplitK {
  std::uint32_t producerParts = 1, consumerParts = 1;
  std::string label() const {
    return producerParts == 1 && consumerParts == 1
               ? std::string()
               : "_sk" + std::to_string(producerParts) + "x" + std::to_string(consumerParts);
  }
};

// Split-K parts for `tiles` tiles over `slotsPerWave` slots, keeping at least 4 k-blocks per part: the most parts
// whose blocks still fit in one wave (`overfill` false), or the fewest that fill a wave (`overfill` true, a second
// partial wave). Which wins depends on the per-block rate, so the search tries both.
std::uint32_t splitParts(std::uint32_t tiles, int kBlocks, int slotsPerWave, bool overfill) {
  const std::uint32_t slots = std::uint32_t(slotsPerWave);
  const std::uint32_t wanted = overfill ? (slots + tiles - 1) / tiles : slots / tiles;
  return std::max(1u, std::min(wanted, std::uint32_t(kBlocks / 4)));
}

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
    TileOrders::apply(*producer_, orders.producerGroupRows);
    TileOrders::apply(*consumer_, orders.consumerGroupRows);
    namespace generated = cusync::generated::gpt3_mlp;
    if (variant.policy == PolicyKind::TileSync) producer_->setOutputPolicy<generated::Dep_dep_g1_TileSync>();
    else producer_->setOutputPolicy<generated::Dep_dep_g1_RowSync>();
    // "Avoid wait-kernel" (paper IV-C): when both grids fit in the slots of one wave, every producer block is
    // resident from the start, so a consumer can never occupy a slot a producer block needs.
    avoidWaitKernel_ = producer_->blocksPerLaunch() + consumer_->blocksPerLaunch() <= std::uint32_t(slotsPerWave);
  }

  bool synchronized() const { return variant_.ordering == Ordering::WaitKernel || variant_.ordering == Ordering::Pdl; }
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
    second.programmaticLaunch = variant_.ordering == Ordering::Pdl || variant_.ordering == Ordering::PdlGridSync;
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
  // Split-K state of one GEMM stage: the stage runs `parts` blocks per tile.
  struct SplitBuffers {
    std::shared_ptr<DeviceBuffer<float>> partials;
    std::shared_ptr<DeviceBuffer<std::uint32_t>> arrivals;
    SplitBuffers() = default;
    SplitBuffers(Stage& stage, const GemmKernelEntry& kernel, std::uint32_t parts) {
      stage.setBlocksPerTile(parts);
      if (parts <= 1) return;
      const std::size_t tiles = stage.grid().tileCount();
      partials = std::make_shared<DeviceBuffer<float>>(tiles * parts * kernel.tile.m * kernel.tile.n);
      arrivals = std::make_shared<DeviceBuffer<std::uint32_t>>(tiles);
      CUSYNC_CUDA_CHECK(cudaMemset(arrivals->get(), 0, arrivals->bytes()));
    }
    void applyTo(GemmLaunchArgs& args) const {
      args.splitPartials = partials ? partials->get() : nullptr;
      args.splitArrivals = arrivals ? arrivals->get() : nullptr;
    }
  };

  const GemmKernelEntry* producerKernel_ = nullptr;
  const GemmKernelEntry* consumerKernel_ = nullptr;
  std::unique_ptr<Stage> producer_, consumer_;
  SplitBuffers producerSplit_, consumerSplit_;
  bool avoidWaitKernel_ = false;
};

struct Result {
  int m;
  std::string config, variant;
  double microseconds;
  double relativeError;
  bool correct;
  double wavesProducer, wavesConsumer;
  bool avoidedWaitKernel;
};

struct Ceilings {
  double tflops;      // measured dense fp16 GEMM rate
  double bandwidthGBs;  // measured device-to-device copy (read + write)
};

Ceilings measureCeilings(cublasLtHandle_t handle, void* workspace, std::size_t workspaceBytes, cudaStream_t stream) {
  const int n = 8192;
  DeviceBuffer<__half> a(std::size_t(n) * n), b(std::size_t(n) * n), c(std::size_t(n) * n);
  fillRandom(a, 11, 1.0f);
  fillRandom(b, 12, 1.0f);
  CublasLtGemm gemm(handle, n, n, n, false, workspace, workspaceBytes);
  auto gemmTime = timeWithGraph([&](cudaStream_t s) { gemm.run(a.get(), b.get(), c.get(), s); }, stream, 5, 2, 7);
  const std::size_t copyBytes = std::size_t(1) << 30;
  DeviceBuffer<char> src(copyBytes), dst(copyBytes);
  CUSYNC_CUDA_CHECK(cudaMemset(src.get(), 1, copyBytes));
  auto copyTime = timeWithGraph(
      [&](cudaStream_t s) {
        CUSYNC_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), copyBytes, cudaMemcpyDeviceToDevice, s));
      },
      stream, 5, 2, 7);
  return Ceilings{2.0 * n * double(n) * n / (gemmTime.medianMicroseconds * 1e-6) / 1e12,
                  2.0 * copyBytes / (copyTime.medianMicroseconds * 1e-6) / 1e9};
}

// Checks one run of `enqueue` against the reference, with the intermediate and the output poisoned first (a
// consumer tile that read XW1 before its producer tile was posted would read NaN), then times it with graphs and
// checks the output of the last replay too.
struct Measurement {
  double microseconds;  // 0 when only checking
  Comparison check;
};
Measurement checkThenTime(const std::function<void(cudaStream_t)>& enqueue, Buffers& buffers, cudaStream_t stream,
                          const Options& options) {
  poison(buffers.xw1, stream);
  poison(buffers.y, stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  enqueue(stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  CUSYNC_CUDA_CHECK(cudaGetLastError());
  Measurement result{0, compareToReference(buffers.y, buffers.yReference)};
  if (options.checkOnly) return result;
  poison(buffers.y, stream);
  result.microseconds = timeWithGraph(enqueue, stream, options.pairsPerGraph, 3, options.samples).medianMicroseconds;
  const auto after = compareToReference(buffers.y, buffers.yReference);
  if (!after.passes(kRelativeErrorBound)) result.check = after;
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // progress survives a kill by timeout
  const Options options = parseOptions(argc, argv);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "mlp_example: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp properties{};
  CUSYNC_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  const MlpShape shape;
  const auto configs = collectConfigs(options);
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

  const auto seed = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  std::printf("device: %s, %d SMs; seed %llu; tile configs:", properties.name, properties.multiProcessorCount,
              static_cast<unsigned long long>(seed));
  for (auto& c : configs) std::printf(" %s", c.name.c_str());
  std::printf("\n");

  Ceilings ceilings{0, 0};
  if (!options.checkOnly) {
    ceilings = measureCeilings(lt, workspace.get(), workspaceBytes, stream);
    std::printf("measured ceilings: %.0f TFLOP/s fp16 GEMM (cuBLAS 8192^3), %.0f GB/s copy\n", ceilings.tflops,
                ceilings.bandwidthGBs);
  }

  std::vector<Result> results;
  bool allCorrect = true;
  for (int m : options.ms) {
    Buffers buffers(m, shape);
    fillRandom(buffers.x, seed + 3 * m, 1.0f);
    fillRandom(buffers.w1, seed + 3 * m + 1, 1.0f / std::sqrt(float(shape.hidden)));
    fillRandom(buffers.w2, seed + 3 * m + 2, 1.0f / std::sqrt(float(shape.intermediate)));

    // Reference: cuBLAS GEMM, exact GELU, cuBLAS GEMM.
    CublasLtGemm reference1(lt, m, shape.intermediate, shape.hidden, false, workspace.get(), workspaceBytes);
    CublasLtGemm reference2(lt, m, shape.hidden, shape.intermediate, false, workspace.get(), workspaceBytes);
    reference1.run(buffers.x.get(), buffers.w1.get(), buffers.xw1Reference.get(), stream);
    geluInPlace<<<1024, 256, 0, stream>>>(buffers.xw1Reference.get(), buffers.xw1Reference.size());
    reference2.run(buffers.xw1Reference.get(), buffers.w2.get(), buffers.yReference.get(), stream);
    CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));

    // Baseline: cuBLAS back to back (GELU fused by cuBLASLt's epilogue).
    {
      CublasLtGemm gemm1(lt, m, shape.intermediate, shape.hidden, true, workspace.get(), workspaceBytes);
      CublasLtGemm gemm2(lt, m, shape.hidden, shape.intermediate, false, workspace.get(), workspaceBytes);
      auto enqueue = [&](cudaStream_t s) {
        gemm1.run(buffers.x.get(), buffers.w1.get(), buffers.xw1.get(), s);
        gemm2.run(buffers.xw1.get(), buffers.w2.get(), buffers.y.get(), s);
      };
      // cuBLASLt's GELU epilogue may use the tanh approximation; the bound covers the difference.
      const auto [us, check] = checkThenTime(enqueue, buffers, stream, options);
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
      const auto [us, check] = checkThenTime(enqueue, buffers, stream, options);
      const bool correct = check.passes(kRelativeErrorBound);
      allCorrect = allCorrect && correct;
      results.push_back({m, "CUTLASS-StreamK-128x128", "StreamK", us, check.relativeError, correct, 0, 0, false});
      std::printf("M=%d CUTLASS Stream-K: %.1f us, relative error %.2g%s\n", m, us, check.relativeError,
                  correct ? "" : " FAILED");
    }

    const int slotsPerWave = properties.multiProcessorCount;  // refined per kernel below
    for (const auto& config : configs) {
      if (options.baselinesOnly) break;
      // Split-K settings tried: none, the most parts within one wave, the fewest that fill one (each when new).
      std::vector<SplitK> splits{SplitK{}};
      {
        const auto* p = config.producer.begin()->second;
        const auto* c = config.consumer.begin()->second;
        const int slotsP = slotsPerWave * p->maxActiveBlocksPerSm(), slotsC = slotsPerWave * c->maxActiveBlocksPerSm();
        const std::uint32_t tilesP = p->tileGrid(m, shape.intermediate).tileCount();
        const std::uint32_t tilesC = c->tileGrid(m, shape.hidden).tileCount();
        for (bool overfill : {false, true}) {
          const SplitK split{splitParts(tilesP, shape.hidden / p->tile.k, slotsP, overfill),
                             splitParts(tilesC, shape.intermediate / c->tile.k, slotsC, overfill)};
          const bool known = std::any_of(splits.begin(), splits.end(), [&](const SplitK& s) {
            return s.producerParts == split.producerParts && s.consumerParts == split.consumerParts;
          });
          if (!known) splits.push_back(split);
        }
      }
      for (const std::string& orderText : options.orders)
      for (const SplitK& split : splits)
      for (const auto& variant : allVariants()) {
        const TileOrders orders = TileOrders::parse(orderText);
        if (!options.variants.empty() &&
            std::find(options.variants.begin(), options.variants.end(), variant.name()) == options.variants.end())
          continue;
        // The rewritten kernels differ only in the WaitThenLoad order (WeightsFirst is hand-written, the same code).
        if (config.loadsReorderedByRewriter && variant.loadOrder != LoadOrder::WaitThenLoad) continue;
        const int occupancy = config.producer.at(variant.policy)->maxActiveBlocksPerSm();
        const int occupancyConsumer = config.consumer.at(variant.policy)->maxActiveBlocksPerSm();
        MlpPair pair(config, variant, m, shape, buffers, side, fork, join,
                     slotsPerWave * std::min(occupancy, occupancyConsumer), split, orders);
        const std::string configLabel = config.name + split.label() + orders.label();
        if (options.verbose)
          std::printf("M=%d %s %s: tiles %u + %u, occupancy %d/%d\n", m, configLabel.c_str(),
                      variant.name().c_str(), pair.producerStage().grid().tileCount(),
                      pair.consumerStage().grid().tileCount(), occupancy, occupancyConsumer);
        const auto [us, check] = checkThenTime([&](cudaStream_t s) { pair.enqueue(s); }, buffers, stream, options);
        const double waves1 = double(pair.producerStage().blocksPerLaunch()) / (slotsPerWave * occupancy);
        const double waves2 = double(pair.consumerStage().blocksPerLaunch()) / (slotsPerWave * occupancyConsumer);
        const bool correct = check.passes(kRelativeErrorBound);
        allCorrect = allCorrect && correct;
        results.push_back({m, configLabel, variant.name(), us, check.relativeError, correct, waves1, waves2,
                           pair.avoidsWaitKernel()});
        if (!correct)
          std::printf("FAILED: M=%d %s %s: relative error %.3g, %llu non-finite\n", m, configLabel.c_str(),
                      variant.name().c_str(), check.relativeError, check.nonFinite);
      }
    }
    std::fflush(stdout);
  }

  std::ofstream csv(options.csvPath);
  csv << "M,config,variant,us,relative_error,correct,waves_gemm1,waves_gemm2,avoided_wait_kernel\n";
  for (const auto& r : results)
    csv << r.m << "," << r.config << "," << r.variant << "," << r.microseconds << "," << r.relativeError << ","
        << r.correct << "," << r.wavesProducer << "," << r.wavesConsumer << "," << r.avoidedWaitKernel << "\n";

  // Summary: per M, the best of each family, with the floor.
  std::printf("\n%6s %10s %9s %9s | %-52s %9s %7s %7s | %-52s %9s | %-52s %9s %7s %7s\n", "M", "floor_us", "cuBLAS",
              "StreamK",
              "best StreamSync (config)", "us", "waves1", "waves2", "best PDL-GridSync", "us", "best cusync", "us",
              "vsSS", "vsBLAS");
  for (int m : options.ms) {
    const double flops = 2.0 * m * (double(shape.hidden) * shape.intermediate * 2);
    const double bytes = 2.0 * (2.0 * shape.hidden * shape.intermediate + double(m) * shape.hidden * 2 +
                                2.0 * m * shape.intermediate);
    const double floorUs = options.checkOnly ? 0
                                             : std::max(flops / (ceilings.tflops * 1e12), bytes / (ceilings.bandwidthGBs * 1e9)) * 1e6;
    auto best = [&](auto predicate) {
      const Result* b = nullptr;
      for (const auto& r : results)
        if (r.m == m && r.correct && predicate(r) && (!b || r.microseconds < b->microseconds)) b = &r;
      return b;
    };
    const Result* blas = best([](const Result& r) { return r.variant == "cuBLAS"; });
    const Result* streamK = best([](const Result& r) { return r.variant == "StreamK"; });
    const Result* stream = best([](const Result& r) { return r.variant == "StreamSync"; });
    const Result* grid = best([](const Result& r) { return r.variant.rfind("PDL-GridSync", 0) == 0; });
    const Result* cus = best([](const Result& r) {
      return r.variant.find("TileSync+") == 0 || r.variant.find("RowSync+") == 0;
    });
    auto label = [](const Result* r) { return r ? r->variant + " (" + r->config + ")" : std::string("-"); };
    auto time = [](const Result* r) { return r ? r->microseconds : 0.0; };
    std::printf("%6d %10.1f %9.1f %9.1f | %-52s %9.1f %7.2f %7.2f | %-52s %9.1f | %-52s %9.1f %7.3f %7.3f\n", m,
                floorUs, time(blas), time(streamK), label(stream).c_str(), time(stream), stream ? stream->wavesProducer : 0,
                stream ? stream->wavesConsumer : 0, label(grid).c_str(), time(grid), label(cus).c_str(), time(cus),
                stream && cus ? time(stream) / time(cus) : 0, blas && cus ? time(blas) / time(cus) : 0);
  }
  std::printf("\nall results checked against the reference (bound %.0e): %s; CSV: %s\n", kRelativeErrorBound,
              allCorrect ? "all correct" : "FAILURES", options.csvPath.c_str());
  return allCorrect ? 0 : 1;
}
