// GPU correctness check of the hooked sm_80 GEMMs (the portable path) as an MLP pair:
//
//   XW1 = GELU(X[M,H] * W1^T)   producer: GELU epilogue, posts its tiles
//   Y   = XW1 * W2^T            consumer: waits for the XW1 tiles each A k-tile reads
//
// against cuBLASLt GEMMs with the GELU of cusync/gelu.cuh in between, on fresh random inputs, for every pair of
// registered sm_80 tile configurations (producer and consumer may differ in tile shape, which exercises the mapping of a
// consumer's rows and k-range to producer tiles), under:
//   StreamOrder                 one stream, no semaphores (the unsynchronized baseline of the same kernels)
//   {TileSync,RowSync}+WaitKernel[+R]   producer and consumer on two streams, the wait-kernel before the
//                               consumer; +R: B issued before the wait for A (LoadOrder::WeightsFirst)
// XW1 and Y are poisoned with NaN before every run, so a consumer that read XW1 before its producer tile was
// posted, or a tile nobody wrote, fails. Each variant runs twice on the same stages: the second run is the
// stages' iteration 1, which checks that the counting semaphores need no reset between launches.
//
// Usage: gemm_sm80_check [--m 1,200,1024] [--hidden 12288] [--intermediate 6144] [--help]
// Exit: 0 all correct, 1 a failure, 2 bad arguments, 77 no CUDA device (ctest: skipped).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "common/command_line_numbers.h"
#include "common/cublas_gemm.cuh"
#include "common/device_buffers.cuh"
#include "common/gelu_mlp_reference.cuh"
#include "common/no_cuda_device.h"
#include "cusync/cusync.cuh"
#include "gemm_registry.h"
#include "gpt3_mlp.h"  // policies generated and proven by cusyncgen from examples/mlp/gpt3_mlp.dep

using namespace cusync;
using namespace cusync::examples;

namespace {

// fp16 operands and intermediate, fp32 accumulation, K up to 12288: the bound mlp_example uses.
constexpr double kRelativeErrorBound = 2e-2;

struct Options {
  std::vector<int> ms{1, 200, 1024};
  int hidden = 12288;        // GPT-3 H
  int intermediate = 6144;   // 4H / 8 (8-way tensor parallel)
};

constexpr const char* kProgram = "gemm_sm80_check";
constexpr const char* kUsage =
    "Usage: gemm_sm80_check [--m 1,200,1024] [--hidden H] [--intermediate I]\n"
    "Checks the hooked sm_80 GEMMs as a tile-synchronized MLP pair against cuBLASLt + GELU.\n"
    "\n"
    "  --m M1,M2,...      token counts M (positive; default 1,200,1024)\n"
    "  --hidden H         GEMM 1's K and GEMM 2's N (a multiple of 8; default 12288)\n"
    "  --intermediate I   GEMM 1's N and GEMM 2's K (a multiple of 8; default 6144)\n"
    "  --help             print this help\n"
    "\n"
    "Exit status: 0 all correct, 1 a failure, 2 bad command line, 77 no CUDA device.\n";

// Before any CUDA call, so that a bad command line is reported on a machine without a GPU too.
Options parseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      std::exit(0);
    }
    if (arg != "--m" && arg != "--hidden" && arg != "--intermediate")
      exitWithUsageError(kProgram, "unknown argument '" + arg + "'");
    if (i + 1 >= argc) exitWithUsageError(kProgram, arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--m") options.ms = positiveIntListArgument(kProgram, arg, value);
    else if (arg == "--hidden") options.hidden = positiveIntArgument(kProgram, arg, value);
    else options.intermediate = positiveIntArgument(kProgram, arg, value);
  }
  if (options.hidden % 8 != 0 || options.intermediate % 8 != 0)
    exitWithUsageError(kProgram, "--hidden and --intermediate must be multiples of 8 (16-byte rows for cp.async)");
  return options;
}

// The sm_80 kernels of one tile configuration, by role and policy.
struct TileConfig {
  std::string name;
  std::map<PolicyKind, const GemmKernelEntry*> producer;  // GELU, posts under the policy
  std::map<PolicyKind, const GemmKernelEntry*> consumer;  // identity, waits under the policy
};

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<TileConfig> collectSm80Configs() {
  std::map<std::string, TileConfig> byName;
  for (const auto& entry : gemmRegistry()) {
    if (!endsWith(entry.name, "_sm80")) continue;
    const std::string name = std::to_string(entry.tile.m) + "x" + std::to_string(entry.tile.n) + "x" +
                             std::to_string(entry.tile.k) + "_s" + std::to_string(entry.stages) + "_sm80";
    TileConfig& config = byName[name];
    config.name = name;
    if (entry.activation == Activation::Gelu) config.producer[entry.outputPolicy] = &entry;
    else config.consumer[entry.inputPolicy] = &entry;
  }
  std::vector<TileConfig> configs;
  for (auto& [name, config] : byName) {
    if (config.producer.size() == 2 && config.consumer.size() == 2) configs.push_back(config);
    else std::fprintf(stderr, "gemm_sm80_check: configuration %s is incomplete, skipped\n", name.c_str());
  }
  return configs;
}

struct Variant {
  bool synchronized;  // false: StreamOrder
  PolicyKind policy;
  LoadOrder loadOrder;
  std::string name() const {
    if (!synchronized) return "StreamOrder";
    return std::string(policyName(policy)) + "+WaitKernel" + (loadOrder == LoadOrder::WeightsFirst ? "+R" : "");
  }
};

std::vector<Variant> allVariants() {
  std::vector<Variant> variants{{false, PolicyKind::TileSync, LoadOrder::WaitThenLoad}};
  for (PolicyKind p : {PolicyKind::TileSync, PolicyKind::RowSync})
    for (LoadOrder r : {LoadOrder::WaitThenLoad, LoadOrder::WeightsFirst}) variants.push_back({true, p, r});
  return variants;
}

using Buffers = GeluMlpBuffers;

// One producer/consumer pair with its two stages; enqueue() may be called repeatedly (iterations 0, 1, ...).
class Pair {
 public:
  Pair(const TileConfig& producerConfig, const TileConfig& consumerConfig, const Variant& variant, int m,
       const Options& options, Buffers& buffers)
      : variant_(variant), m_(m), options_(options), buffers_(buffers) {
    producerKernel_ = producerConfig.producer.at(variant.policy);
    consumerKernel_ = consumerConfig.consumer.at(variant.policy);
    producer_ = std::make_unique<Stage>("gemm1_sm80", producerKernel_->tileGrid(m, options.intermediate));
    consumer_ = std::make_unique<Stage>("gemm2_sm80", consumerKernel_->tileGrid(m, options.hidden));
    namespace generated = cusync::generated::gpt3_mlp;
    if (variant.policy == PolicyKind::TileSync) producer_->setOutputPolicy<generated::Dep_dep_g1_TileSync>();
    else producer_->setOutputPolicy<generated::Dep_dep_g1_RowSync>();
  }

  void enqueue(cudaStream_t stream, cudaStream_t side, cudaEvent_t fork, cudaEvent_t join) const {
    GemmLaunchArgs first;
    first.m = m_;
    first.n = options_.intermediate;
    first.k = options_.hidden;
    first.a = buffers_.x.get();
    first.b = buffers_.w1.get();
    first.d = buffers_.xw1.get();
    first.stage = producer_->view();
    if (!variant_.synchronized) first.stage.semaphores = nullptr;

    GemmLaunchArgs second;
    second.m = m_;
    second.n = options_.hidden;
    second.k = options_.intermediate;
    second.a = buffers_.xw1.get();
    second.b = buffers_.w2.get();
    second.d = buffers_.y.get();
    second.stage = consumer_->view();
    second.stage.semaphores = nullptr;  // nobody waits on the consumer
    second.loadOrder = variant_.loadOrder;
    if (variant_.synchronized) {
      second.producerSemaphores = producer_->view().semaphores;
      second.producerGrid = producer_->grid();
      second.producerTileRows = std::uint32_t(producerKernel_->tile.m);
      second.producerTileColumns = std::uint32_t(producerKernel_->tile.n);
    }

    if (variant_.synchronized) {
      // Producer on `stream`, consumer on `side` behind the wait-kernel, joined back into `stream`.
      CUSYNC_CUDA_CHECK(cudaEventRecord(fork, stream));
      CUSYNC_CUDA_CHECK(cudaStreamWaitEvent(side, fork));
      producerKernel_->launch(first, stream);
      launchWaitKernel(*producer_, *consumer_, side);
      consumerKernel_->launch(second, side);
      CUSYNC_CUDA_CHECK(cudaEventRecord(join, side));
      CUSYNC_CUDA_CHECK(cudaStreamWaitEvent(stream, join));
    } else {
      producerKernel_->launch(first, stream);
      consumerKernel_->launch(second, stream);
    }
  }

 private:
  Variant variant_;
  int m_;
  Options options_;
  Buffers& buffers_;
  const GemmKernelEntry* producerKernel_ = nullptr;
  const GemmKernelEntry* consumerKernel_ = nullptr;
  std::unique_ptr<Stage> producer_, consumer_;
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // progress survives a kill by timeout
  const Options options = parseOptions(argc, argv);
  if (missingCudaDevice(stderr, "gemm_sm80_check: no CUDA device")) return kNoCudaDevice;
  const auto configs = collectSm80Configs();
  if (configs.empty()) {
    std::fprintf(stderr, "gemm_sm80_check: no complete sm_80 tile configuration is registered\n");
    return 1;
  }
  try {
    cudaDeviceProp properties{};
    CUSYNC_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
    cudaStream_t stream, side;
    // Blocking streams: the helpers that fill, poison and compare buffers run on the legacy default stream.
    CUSYNC_CUDA_CHECK(cudaStreamCreate(&stream));
    CUSYNC_CUDA_CHECK(cudaStreamCreate(&side));
    cudaEvent_t fork, join;
    CUSYNC_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CUSYNC_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    cublasLtHandle_t lt;
    checkCublas(cublasLtCreate(&lt), "create");
    const std::size_t workspaceBytes = 32ull << 20;
    DeviceBuffer<char> workspace(workspaceBytes);

    const auto seed = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
    std::printf("device: %s (sm_%d%d); seed %llu; H=%d, I=%d; configurations:", properties.name, properties.major,
                properties.minor, static_cast<unsigned long long>(seed), options.hidden, options.intermediate);
    for (const auto& c : configs) std::printf(" %s", c.name.c_str());
    std::printf("\n");

    int runs = 0, failures = 0;
    for (int m : options.ms) {
      Buffers buffers(m, options.hidden, options.intermediate);
      prepareGeluMlpReference(buffers, m, options.hidden, options.intermediate, seed,
                              ReferenceGemm(lt, workspace.get(), workspaceBytes), stream);

      for (const auto& producerConfig : configs) {
        for (const auto& consumerConfig : configs) {
          for (const auto& variant : allVariants()) {
            Pair pair(producerConfig, consumerConfig, variant, m, options, buffers);
            for (int iteration = 0; iteration < 2; ++iteration) {
              poison(buffers.xw1, stream);
              poison(buffers.y, stream);
              CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
              pair.enqueue(stream, side, fork, join);
              CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
              CUSYNC_CUDA_CHECK(cudaGetLastError());
              const Comparison intermediate = compareToReference(buffers.xw1, buffers.xw1Reference);
              const Comparison output = compareToReference(buffers.y, buffers.yReference);
              const bool correct = intermediate.passes(kRelativeErrorBound) && output.passes(kRelativeErrorBound);
              ++runs;
              failures += correct ? 0 : 1;
              std::printf("%s M=%d %s -> %s %s iteration %d: XW1 error %.3g (%llu non-finite), Y error %.3g "
                          "(%llu non-finite)\n",
                          correct ? "ok    " : "FAILED", m, producerConfig.name.c_str(), consumerConfig.name.c_str(),
                          variant.name().c_str(), iteration, intermediate.relativeError, intermediate.nonFinite,
                          output.relativeError, output.nonFinite);
            }
          }
        }
      }
    }
    std::printf("\n%d of %d runs correct (relative error bound %.0e, NaN fails)\n", runs - failures, runs,
                kRelativeErrorBound);
    cublasLtDestroy(lt);
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gemm_sm80_check: %s\n", error.what());
    return 1;
  }
}
