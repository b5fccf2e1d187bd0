// Stress test of the tile-synchronized convolution chains (ctest label gpu): every model's chain shape (2 and 4
// 3x3 stages, the bottleneck's 1x1 -> 3x3 -> 1x1, the stride-2 block with two readers of one stage) under every
// synchronized variant (TileSync and RowSync, wait-kernel, programmatic launch and, where every block fits in one
// wave, no wait-kernel at all), each unsplit and split along K (the parts that fill one wave, conv_split.h; the
// arrival counters are never reset between graph replays; the parts read back by the last one, and summed in L2),
// on kernels built with a
// pseudo-random delay of up to CUSYNC_CHAIN_DELAY_NS in every tile (before the halo wait, and before the epilogue's
// stores: tile_sync_conv_kernel.hpp's compile-time hook, never built into the example or a benchmark). Each chain
// execution inside a CUDA graph is preceded by poisoning every stage's output with NaN and followed by an
// element-wise comparison of every stage with a direct convolution, so a single execution that read an unposted
// tile, or lost a write, is counted. Graphs are replayed without resetting counters or semaphores. A hang is a
// watchdog trap (CUSYNC_WAIT_TIMEOUT_NS) and a failure.
//
// Usage: conv2d_chain_stress [--executions N] [--help]   (default 20000 chain executions in all)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/command_line_numbers.h"
#include "common/stress_executions.h"
#include "common/graph_timer.cuh"
#include "common/mismatch_count.cuh"
#include "common/no_cuda_device.h"
#include "conv_chain.cuh"

using namespace cusync;
using namespace cusync::examples;

namespace {

constexpr const char* kProgram = "conv2d_chain_stress";
constexpr const char* kUsage =
    "Usage: conv2d_chain_stress [--executions N]\n"
    "Stress test of the convolution chains: random per-tile delays, every stage of every chain execution checked\n"
    "against a direct convolution.\n"
    "\n"
    "  --executions N   chain executions in all (default 20000)\n"
    "  --help           print this help\n"
    "\n"
    "Exit status: 0 every execution correct, 1 a wrong execution, 2 bad command line, 77 no sm_90 GPU.\n";

struct Case {
  std::string model;
  int width, batch;
};

// Small batches: many tiles wait on few, and one execution is short, so many run.
const std::vector<Case> kCases = {{"resnet", 56, 1},     {"resnet", 28, 3},    {"vgg", 14, 2}, {"vgg", 7, 5},
                                  {"bottleneck", 28, 1}, {"stride2", 28, 1}, {"stride2", 7, 3}};

const ConvChainSpec& chainOf(const Case& c, std::vector<std::vector<ConvChainSpec>>& storage) {
  storage.push_back(convModelLayers(c.model));
  for (const ConvChainSpec& chain : storage.back())
    if (chain.width == c.width) return chain;
  throw Error("conv2d_chain_stress: no layer " + std::to_string(c.width) + " in " + c.model);
}

}  // namespace

int main(int argc, char** argv) {
  const long long executions = parseStressExecutions(argc, argv, kProgram, kUsage, 20000);
  if (missingCudaDevice(stderr, std::string(kProgram) + ": no GPU; skipped")) return kNoCudaDevice;
  cudaDeviceProp properties{};
  CUSYNC_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  if (properties.major != 9) {
    std::fprintf(stderr, "%s: the hooked convolutions need sm_90 (found sm_%d%d); skipped\n", kProgram,
                 properties.major, properties.minor);
    return 77;
  }
  const std::vector<std::string> configs = builtConvConfigs();
  if (configs.empty()) throw Error("conv2d_chain_stress: no convolution built");
  const std::string config = configs.front();

  const std::vector<ConvVariant> variants = {ConvVariant::TileSync,    ConvVariant::RowSync,
                                             ConvVariant::TileSyncPdl, ConvVariant::RowSyncPdl,
                                             ConvVariant::TileSyncW,   ConvVariant::RowSyncW};
  const std::vector<ConvSplitTarget> splits = {ConvSplitTarget::None, ConvSplitTarget::OneWave};
  // The split chains run twice: their parts read back by the last part, and summed in L2 (SplitKBuffers::accumulate).
  const long long runs = (long long)(kCases.size() * variants.size() * (splits.size() + 1));
  const int perGraph = 20;
  const long long replays = std::max(1LL, (executions + runs * perGraph - 1) / (runs * perGraph));

  cudaStream_t stream;
  CUSYNC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DeviceBuffer<unsigned long long> bad(1);
  std::vector<std::vector<ConvChainSpec>> storage;
  storage.reserve(kCases.size());  // chainOf returns references into it
  std::uint64_t seed = 977;
  long long done = 0, wrong = 0;
  const auto start = std::chrono::steady_clock::now();
  std::printf("%s: %s, configuration %s, delays up to %d ns per tile, %lld graph replays of %d executions per case\n",
              kProgram, properties.name, config.c_str(), int(CUSYNC_CHAIN_DELAY_NS), replays, perGraph);
  for (const Case& c : kCases) {
    const ConvChainSpec& spec = chainOf(c, storage);
    ConvChainBuffers buffers(spec, c.batch, seed, stream);
    for (ConvSplitTarget split : splits)
    for (bool sumParts : {false, true})
    for (bool hardwareOrder : {true, false})  // the paper's T (the default) and cusync's tickets
    for (ConvVariant variant : variants) {
      if (sumParts && split == ConvSplitTarget::None) continue;  // nothing to sum
      const ConvKernelEntry& kernel = *findConvEntry(config, convKernelPolicyOf(variant));
      const std::uint32_t slots = std::uint32_t(properties.multiProcessorCount * kernel.blocksPerSm());
      const std::vector<std::uint32_t> parts = convSplitPlan(buffers, kernel, slots, split);
      if (split != ConvSplitTarget::None && convSplitLabel(parts).empty()) continue;  // nothing to split
      const ConvChain chain(kernel, variant, buffers, parts, slots, hardwareOrder, sumParts);
      const std::string label =
          convVariantName(variant) + convSplitLabel(parts) + (sumParts ? "_sum" : "") + (hardwareOrder ? "" : "_ticket");
      if (!chain.notApplicable().empty()) {
        std::printf("%-10s %-10s B=%d %-20s n/a: %s\n", spec.model.c_str(), spec.label().c_str(), c.batch,
                    label.c_str(), chain.notApplicable().c_str());
        continue;
      }
      if (const std::string why = chain.whyNotImplementable(); !why.empty())
        throw Error("conv2d_chain_stress: " + spec.model + " " + spec.label() + " " + label + " refused: " + why);
      CUSYNC_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0, bad.bytes(), stream));
      cudaGraph_t graph = nullptr;
      CUSYNC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      for (int e = 0; e < perGraph; ++e) {
        buffers.poisonOutputs(stream);
        chain.enqueue(stream);
        for (std::size_t s = 0; s < buffers.stageCount(); ++s) {
          const ConvStageBuffers& b = buffers.stage(s);
          countMismatches<><<<264, 256, 0, stream>>>(b.output.get(), b.reference.get(), b.output.size(), bad.get());
          CUSYNC_CUDA_CHECK(cudaGetLastError());
        }
      }
      CUSYNC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
      cudaGraphExec_t exec = nullptr;
      CUSYNC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
      for (long long r = 0; r < replays; ++r) CUSYNC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
      CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
      CUSYNC_CUDA_CHECK(cudaGetLastError());
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
      unsigned long long mismatches = 0;
      CUSYNC_CUDA_CHECK(cudaMemcpy(&mismatches, bad.get(), sizeof(mismatches), cudaMemcpyDeviceToHost));
      const long long count = replays * perGraph;
      done += count;
      wrong += mismatches ? 1 : 0;
      std::printf("%-10s %-10s B=%d %-20s %lld executions: %s (%llu wrong elements)\n", spec.model.c_str(),
                  spec.label().c_str(), c.batch, label.c_str(), count,
                  mismatches ? "FAILED" : "ok", mismatches);
      std::fflush(stdout);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%lld chain executions in %.1f s; %s\n", done, seconds,
              wrong ? "SOME EXECUTIONS WERE WRONG" : "every execution correct");
  cudaStreamDestroy(stream);
  return wrong ? 1 : 0;
}
