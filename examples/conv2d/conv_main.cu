// Two dependent 3x3 convolutions (a ResNet basic block's pair: conv -> bias + ReLU -> conv -> bias + ReLU, stride
// 1, padding 1, C -> C channels) on the hooked CUTLASS sm90 convolutions, for the ResNet-50 stage shapes 56x56x64,
// 28x28x128, 14x14x256 and 7x7x512, batch 1..32. Variants:
//   StreamSync     both convolutions on one stream, stream-ordered (same kernels, no waits, no posts)
//   TileSync, RowSync           the second on a side stream behind the wait-kernel, each tile waiting for the
//                               producer tiles of its halo under the policy cusyncgen proved for conv2d_3x3.dep
//   TileSync-PDL, RowSync-PDL   one stream, programmatic dependent launch, the same waits
// Every variant is checked against a direct convolution (fp32 accumulation; fresh random inputs; both outputs
// poisoned with NaN first, so a tile read before it was written fails), then timed with CUDA graphs (median of
// the replays) and its output checked again. CSV with --csv; a table printed last. Exit 0 when every check
// passed, 1 otherwise, 2 for a bad command line, 77 without a GPU.
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/command_line_numbers.h"
#include "common/device_buffers.cuh"
#include "common/graph_timer.cuh"
#include "conv2d_3x3.h"  // policies generated and proven by cusyncgen from examples/conv2d/conv2d_3x3.dep
#include "conv_registry.h"
#include "cusync/cusync.cuh"

using namespace cusync;
using namespace cusync::examples;

namespace {

using TileSyncPolicy = cusync::generated::conv2d_3x3::Dep_dep_g1_TileSync;
using RowSyncPolicy = cusync::generated::conv2d_3x3::Dep_dep_g1_RowSync;

// fp16 activations and outputs, fp32 accumulation over K = 9*C = 576..4608, two layers deep.
constexpr double kRelativeErrorBound = 2e-2;

struct Layer {
  int size, channels;  // square image, channels in and out
};
const std::vector<Layer> kLayers = {{56, 64}, {28, 128}, {14, 256}, {7, 512}};

enum class Variant { StreamSync, TileSync, RowSync, TileSyncPdl, RowSyncPdl };
const std::vector<std::pair<Variant, std::string>> kVariants = {{Variant::StreamSync, "StreamSync"},
                                                                {Variant::TileSync, "TileSync"},
                                                                {Variant::RowSync, "RowSync"},
                                                                {Variant::TileSyncPdl, "TileSync-PDL"},
                                                                {Variant::RowSyncPdl, "RowSync-PDL"}};
bool synchronized(Variant v) { return v != Variant::StreamSync; }
bool programmatic(Variant v) { return v == Variant::TileSyncPdl || v == Variant::RowSyncPdl; }
ConvPolicyKind policyOf(Variant v) {
  return v == Variant::RowSync || v == Variant::RowSyncPdl ? ConvPolicyKind::RowSync : ConvPolicyKind::TileSync;
}

struct Options {
  std::vector<int> batches = {1, 2, 4, 8, 16, 32};
  std::vector<Layer> layers = kLayers;
  std::vector<std::string> configs;  // empty: every registered configuration
  std::vector<Variant> variants = {Variant::StreamSync, Variant::TileSync, Variant::RowSync, Variant::TileSyncPdl,
                                   Variant::RowSyncPdl};
  bool checkOnly = false;
  int repetitions = 10, samples = 10;
  long long seed = 1;
  std::string csv;
};

void printHelp(const char* program) {
  std::printf(
      "usage: %s [options]\n"
      "  --batch LIST       batch sizes (default 1,2,4,8,16,32)\n"
      "  --layers LIST      image widths of the layers: 56 (64 channels), 28 (128), 14 (256), 7 (512); default all\n"
      "  --configs LIST     tile configurations, e.g. 64x64x64_s4_b1 (default: every one built)\n"
      "  --variants LIST    StreamSync,TileSync,RowSync,TileSync-PDL,RowSync-PDL (default all)\n"
      "  --check-only       check every variant, time nothing\n"
      "  --repetitions N    chains per CUDA graph (default 10)\n"
      "  --samples N        graph replays timed, median reported (default 10)\n"
      "  --seed N           seed of the random inputs (default 1)\n"
      "  --csv PATH         write the results as CSV\n"
      "Exit status: 0 all checks passed, 1 a check failed, 2 bad command line, 77 no GPU.\n",
      program);
}

std::vector<std::string> splitWords(const std::string& program, const std::string& option, const std::string& text) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string word = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (word.empty()) exitWithUsageError(program, option + ": '" + text + "' has an empty item");
    words.push_back(word);
    if (comma == std::string::npos) return words;
    start = comma + 1;
  }
}

Options parseOptions(int argc, char** argv) {
  const std::string program = argv[0];
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) exitWithUsageError(program, arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      printHelp(argv[0]);
      std::exit(0);
    } else if (arg == "--batch") {
      options.batches = positiveIntListArgument(program, arg, value());
      for (int b : options.batches)
        if (b > 32) exitWithUsageError(program, "--batch: " + std::to_string(b) + " is above 32 (the spec's bound)");
    } else if (arg == "--layers") {
      options.layers.clear();
      for (int width : positiveIntListArgument(program, arg, value())) {
        bool found = false;
        for (const Layer& layer : kLayers)
          if (layer.size == width) options.layers.push_back(layer), found = true;
        if (!found) exitWithUsageError(program, "--layers: no layer of width " + std::to_string(width));
      }
    } else if (arg == "--configs") {
      options.configs = splitWords(program, arg, value());
    } else if (arg == "--variants") {
      options.variants.clear();
      for (const std::string& word : splitWords(program, arg, value())) {
        bool found = false;
        for (const auto& [variant, name] : kVariants)
          if (name == word) options.variants.push_back(variant), found = true;
        if (!found) exitWithUsageError(program, "--variants: unknown variant '" + word + "'");
      }
    } else if (arg == "--check-only") {
      options.checkOnly = true;
    } else if (arg == "--repetitions") {
      options.repetitions = positiveIntArgument(program, arg, value());
    } else if (arg == "--samples") {
      options.samples = positiveIntArgument(program, arg, value());
    } else if (arg == "--seed") {
      options.seed = integerArgument(program, arg, value(), 0, LLONG_MAX);
    } else if (arg == "--csv") {
      options.csv = value();
    } else {
      exitWithUsageError(program, "unknown option '" + arg + "'");
    }
  }
  return options;
}

// The direct convolution every variant is checked against: one thread per output element, fp32 accumulation,
// bias + ReLU, rounded to fp16 like the kernels' output.
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

void referenceConv(const __half* x, const __half* w, const __half* bias, __half* y, const ConvLayerShape& s,
                   cudaStream_t stream) {
  directConv<<<1024, 256, 0, stream>>>(x, w, bias, y, s);
  CUSYNC_CUDA_CHECK(cudaGetLastError());
}

// The policies' sem/value against a count of the tiles that post to each semaphore on `grid`: the proof in
// conv2d_3x3.h is for the spec's shape; the policies' functions depend only on the grid, and this checks them on
// the grid actually run (an error, not a wrong result, if they did not fit it).
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

struct ChainBuffers {
  ConvLayerShape shape;
  DeviceBuffer<__half> x, w1, b1, y1, w2, b2, y2, ref1, ref2;
  explicit ChainBuffers(const ConvLayerShape& s)
      : shape(s),
        x(std::size_t(s.batch) * s.height * s.width * s.inChannels),
        w1(std::size_t(s.outChannels) * 9 * s.inChannels),
        b1(s.outChannels),
        y1(std::size_t(s.outPixels()) * s.outChannels),
        w2(std::size_t(s.outChannels) * 9 * s.outChannels),
        b2(s.outChannels),
        y2(y1.size()),
        ref1(y1.size()),
        ref2(y1.size()) {}
};

// One chain of a variant and a tile configuration, with the stages it synchronizes through (fresh per variant:
// their counters and semaphores count launches from zero).
class ConvChain {
 public:
  ConvChain(const ConvKernelEntry& kernel, Variant variant, ChainBuffers& buffers, cudaStream_t side, cudaEvent_t fork,
            cudaEvent_t join)
      : kernel_(kernel), variant_(variant), buffers_(buffers), side_(side), fork_(fork), join_(join),
        first_("conv1", kernel.tileGrid(buffers.shape)), second_("conv2", kernel.tileGrid(buffers.shape)) {
    if (synchronized(variant)) {
      if (policyOf(variant) == ConvPolicyKind::TileSync) {
        checkPolicyCounts<TileSyncPolicy>(first_.grid());
        first_.setOutputPolicy<TileSyncPolicy>();
        producerSemaphores_ = first_.inputFor<TileSyncPolicy>(second_).producerSemaphores;
      } else {
        checkPolicyCounts<RowSyncPolicy>(first_.grid());
        first_.setOutputPolicy<RowSyncPolicy>();
        producerSemaphores_ = first_.inputFor<RowSyncPolicy>(second_).producerSemaphores;
      }
    }
  }

  // Empty when both launches are implementable.
  std::string whyNotImplementable() const {
    std::string why = kernel_.whyNotImplementable(firstArgs());
    return why.empty() ? kernel_.whyNotImplementable(secondArgs()) : why;
  }

  void enqueue(cudaStream_t stream) const {
    if (synchronized(variant_) && !programmatic(variant_)) {
      // conv1 on `stream`, conv2 on the side stream behind the wait-kernel, joined before the next chain (which
      // overwrites y1).
      CUSYNC_CUDA_CHECK(cudaEventRecord(fork_, stream));
      CUSYNC_CUDA_CHECK(cudaStreamWaitEvent(side_, fork_));
      kernel_.launch(firstArgs(), stream);
      launchWaitKernel(first_, second_, side_);
      kernel_.launch(secondArgs(), side_);
      CUSYNC_CUDA_CHECK(cudaEventRecord(join_, side_));
      CUSYNC_CUDA_CHECK(cudaStreamWaitEvent(stream, join_));
    } else {
      kernel_.launch(firstArgs(), stream);
      kernel_.launch(secondArgs(), stream);
    }
  }

 private:
  ConvLaunchArgs firstArgs() const {
    ConvLaunchArgs a;
    a.shape = buffers_.shape;
    a.activation = buffers_.x.get();
    a.filter = buffers_.w1.get();
    a.bias = buffers_.b1.get();
    a.output = buffers_.y1.get();
    a.stage = first_.view();  // semaphores null unless an output policy was set (StreamSync: posts nothing)
    a.triggerDependentsAtStart = programmatic(variant_);
    return a;
  }
  ConvLaunchArgs secondArgs() const {
    ConvLaunchArgs a;
    a.shape = buffers_.shape;
    a.shape.inChannels = buffers_.shape.outChannels;
    a.activation = buffers_.y1.get();
    a.filter = buffers_.w2.get();
    a.bias = buffers_.b2.get();
    a.output = buffers_.y2.get();
    a.stage = second_.view();
    a.stage.semaphores = nullptr;  // the last stage: nobody waits on it
    if (synchronized(variant_)) {
      a.producerSemaphores = producerSemaphores_;
      a.producerGrid = first_.grid();
      a.producerTileM = std::uint32_t(kernel_.tileM);
    }
    a.launchOrdering = programmatic(variant_) ? LaunchOrdering::Programmatic : LaunchOrdering::StreamOrder;
    return a;
  }

  const ConvKernelEntry& kernel_;
  Variant variant_;
  ChainBuffers& buffers_;
  cudaStream_t side_;
  cudaEvent_t fork_, join_;
  Stage first_, second_;
  const std::uint32_t* producerSemaphores_ = nullptr;
};

struct Result {
  Layer layer;
  int batch;
  std::string config, variant;
  Comparison first, second;
  double microseconds = 0;  // 0: not timed
  std::string skipped;      // why the chain was not run, or empty
  // A chain the kernel refuses fails too: every layer of this example is meant to run.
  bool passed() const {
    return skipped.empty() && first.passes(kRelativeErrorBound) && second.passes(kRelativeErrorBound);
  }
};

// The configuration part of an entry's name ("64x64x64_s4_b1" of "64x64x64_s4_b1_TileSync").
std::string configOf(const ConvKernelEntry& e) { return e.name.substr(0, e.name.rfind('_')); }

const ConvKernelEntry* findEntry(const std::string& config, ConvPolicyKind policy) {
  for (const ConvKernelEntry& e : convRegistry())
    if (configOf(e) == config && e.policy == policy) return &e;
  return nullptr;
}

Result runChain(const ConvKernelEntry& kernel, Variant variant, const std::string& variantName, ChainBuffers& buffers,
                const Layer& layer, cudaStream_t stream, cudaStream_t side, cudaEvent_t fork, cudaEvent_t join,
                const Options& options) {
  Result result{layer, buffers.shape.batch, configOf(kernel), variantName, {}, {}, 0, {}};
  ConvChain chain(kernel, variant, buffers, side, fork, join);
  result.skipped = chain.whyNotImplementable();
  if (!result.skipped.empty()) return result;
  poison(buffers.y1, stream);
  poison(buffers.y2, stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  chain.enqueue(stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  CUSYNC_CUDA_CHECK(cudaGetLastError());
  result.first = compareToReference(buffers.y1, buffers.ref1);
  result.second = compareToReference(buffers.y2, buffers.ref2);
  if (options.checkOnly || !result.passed()) return result;
  poison(buffers.y2, stream);
  result.microseconds = timeWithGraph([&](cudaStream_t s) { chain.enqueue(s); }, stream, options.repetitions, 3,
                                      options.samples)
                            .medianMicroseconds;
  const Comparison after = compareToReference(buffers.y2, buffers.ref2);
  if (!after.passes(kRelativeErrorBound)) result.second = after;
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parseOptions(argc, argv);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "%s: no GPU; skipped\n", argv[0]);
    return 77;
  }
  cudaDeviceProp properties{};
  CUSYNC_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  if (properties.major != 9) {
    std::fprintf(stderr, "%s: the hooked convolutions need sm_90 (found sm_%d%d); skipped\n", argv[0],
                 properties.major, properties.minor);
    return 77;
  }

  std::vector<std::string> configs = options.configs;
  if (configs.empty()) {
    std::set<std::string> seen;
    for (const ConvKernelEntry& e : convRegistry())
      if (seen.insert(configOf(e)).second) configs.push_back(configOf(e));
  }
  for (const std::string& config : configs)
    if (!findEntry(config, ConvPolicyKind::TileSync) || !findEntry(config, ConvPolicyKind::RowSync)) {
      std::string built;
      for (const ConvKernelEntry& e : convRegistry()) built += " " + e.name;
      exitWithUsageError(argv[0], "--configs: '" + config + "' is not built (built:" + built + ")");
    }

  cudaStream_t stream, side;
  CUSYNC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUSYNC_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t fork, join;
  CUSYNC_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CUSYNC_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  std::printf("seed %lld\n", options.seed);

  std::vector<Result> results;
  std::uint64_t seed = std::uint64_t(options.seed) * 1000003u;
  for (const Layer& layer : options.layers)
    for (int batch : options.batches) {
      ConvLayerShape shape;
      shape.batch = batch;
      shape.height = shape.width = layer.size;
      shape.inChannels = shape.outChannels = layer.channels;
      ChainBuffers buffers(shape);
      // Fresh inputs per shape; weights scaled so that activations stay O(1) through both layers.
      const float weightScale = 1.7f / std::sqrt(9.0f * layer.channels);
      fillRandom(buffers.x, ++seed, 1.0f, stream);
      fillRandom(buffers.w1, ++seed, weightScale, stream);
      fillRandom(buffers.b1, ++seed, 0.1f, stream);
      fillRandom(buffers.w2, ++seed, weightScale, stream);
      fillRandom(buffers.b2, ++seed, 0.1f, stream);
      referenceConv(buffers.x.get(), buffers.w1.get(), buffers.b1.get(), buffers.ref1.get(), shape, stream);
      referenceConv(buffers.ref1.get(), buffers.w2.get(), buffers.b2.get(), buffers.ref2.get(), shape, stream);
      CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
      for (const std::string& config : configs)
        for (Variant variant : options.variants) {
          std::string name;
          for (const auto& [v, n] : kVariants)
            if (v == variant) name = n;
          const ConvKernelEntry& kernel = *findEntry(config, policyOf(variant));
          Result r = runChain(kernel, variant, name, buffers, layer, stream, side, fork, join, options);
          std::printf("%2dx%-2d C=%-3d B=%-2d %-16s %-13s %s", layer.size, layer.size, layer.channels, batch,
                      config.c_str(), name.c_str(), r.passed() ? "ok" : "FAILED");
          if (!r.skipped.empty()) std::printf(" (refused: %s)", r.skipped.c_str());
          else std::printf(" err %.2e/%.2e nonfinite %llu/%llu", r.first.relativeError, r.second.relativeError,
                           r.first.nonFinite, r.second.nonFinite);
          if (r.microseconds > 0) std::printf(" %.1f us", r.microseconds);
          std::printf("\n");
          std::fflush(stdout);
          results.push_back(r);
        }
    }

  if (!options.csv.empty()) {
    FILE* f = std::fopen(options.csv.c_str(), "w");
    if (!f) throw Error("cannot write " + options.csv);
    std::fprintf(f, "size,channels,batch,config,variant,passed,skipped,rel_err_conv1,rel_err_conv2,nonfinite_conv1,"
                    "nonfinite_conv2,median_us\n");
    for (const Result& r : results)
      std::fprintf(f, "%d,%d,%d,%s,%s,%d,\"%s\",%.3e,%.3e,%llu,%llu,%.2f\n", r.layer.size, r.layer.channels, r.batch,
                   r.config.c_str(), r.variant.c_str(), r.passed() ? 1 : 0, r.skipped.c_str(), r.first.relativeError,
                   r.second.relativeError, r.first.nonFinite, r.second.nonFinite, r.microseconds);
    std::fclose(f);
  }

  // The table: per shape and configuration, each variant's time and its speed-up over StreamSync.
  bool allPassed = true;
  std::printf("\n%-10s %-3s %-16s", "layer", "B", "config");
  for (Variant v : options.variants)
    for (const auto& [variant, name] : kVariants)
      if (variant == v) std::printf(" %14s", name.c_str());
  std::printf("\n");
  for (std::size_t i = 0; i < results.size(); i += options.variants.size()) {
    const Result& head = results[i];
    std::printf("%2dx%-2dx%-4d %-3d %-16s", head.layer.size, head.layer.size, head.layer.channels, head.batch,
                head.config.c_str());
    double base = 0;
    for (std::size_t j = i; j < i + options.variants.size(); ++j)
      if (results[j].variant == "StreamSync") base = results[j].microseconds;
    for (std::size_t j = i; j < i + options.variants.size(); ++j) {
      const Result& r = results[j];
      allPassed = allPassed && r.passed();
      char cell[32];
      if (!r.skipped.empty()) std::snprintf(cell, sizeof(cell), "refused");
      else if (!r.passed()) std::snprintf(cell, sizeof(cell), "FAILED");
      else if (r.microseconds <= 0) std::snprintf(cell, sizeof(cell), "ok");
      else if (base > 0) std::snprintf(cell, sizeof(cell), "%.1f (%.2fx)", r.microseconds, base / r.microseconds);
      else std::snprintf(cell, sizeof(cell), "%.1f", r.microseconds);
      std::printf(" %14s", cell);
    }
    std::printf("\n");
  }
  std::printf("%s\n", allPassed ? "all checks passed" : "SOME CHECKS FAILED");
  cudaEventDestroy(fork);
  cudaEventDestroy(join);
  cudaStreamDestroy(side);
  cudaStreamDestroy(stream);
  return allPassed ? 0 : 1;
}
