// Stress test of the skinny chains (ctest label gpu): every path of skinny_mlp.cuh, GELU and SwiGLU, at M = 1 to 8,
// with a pseudo-random delay of up to CUSYNC_CHAIN_DELAY_NS injected into every unit before its wait and before
// every post (stress_delay.cuh; this binary only, never a benchmark). Sizes, split-K settings and paths vary; every
// chain execution inside a CUDA graph is preceded by poisoning its intermediate and output with NaN and followed by
// an element-wise comparison with a cuBLAS + exact-activation reference, so one execution that read an unposted tile,
// or lost a write, is counted. Graphs are replayed without resetting counters or semaphores. A hang is a watchdog
// trap (CUSYNC_WAIT_TIMEOUT_NS) and a failure.
//
// Usage: mlp_skinny_stress [--executions N] [--help]   (default 100000 chain executions in all)
#define CUSYNC_CHAIN_DELAY_NS 20000
#define CUSYNC_WAIT_TIMEOUT_NS 5000000000ull

#include <array>
#include <chrono>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "common/command_line_numbers.h"
#include "common/no_cuda_device.h"
#include "common/stress_executions.h"
#include "common/gelu_mlp_reference.cuh"
#include "common/mismatch_count.cuh"
#include "gpt3_mlp_skinny.h"
#include "llama_mlp_skinny.h"
#include "skinny_mlp.cuh"
#include "swiglu_mlp_reference.cuh"
#include "swiglu_weight_pairing.h"

using namespace cusync;
using namespace cusync::examples;

namespace {

using GeluPolicy = cusync::generated::gpt3_mlp_skinny::Dep_dep_g1_TileSync;
using SwiGluPolicy = cusync::generated::llama_mlp_skinny::Dep_dep_g1_TileSync;

constexpr const char* kProgram = "mlp_skinny_stress";

constexpr const char* kUsage =
    "Usage: mlp_skinny_stress [--executions N]\n"
    "Stress test of the skinny chains: random per-unit delays, every chain execution checked.\n"
    "\n"
    "  --executions N   chain executions in all (default 100000)\n"
    "  --help           print this help\n"
    "\n"
    "Exit status: 0 every execution correct, 1 a wrong execution, 2 bad command line, 77 no CUDA device.\n";

struct Case {
  bool swiGlu;
  int m, hidden, intermediate;
  FusedSplit split;
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  const long long executions = parseStressExecutions(argc, argv, kProgram, kUsage, 100000);
  if (missingCudaDevice(stdout, "SKIPPED: no CUDA device")) return kNoCudaDevice;
  cudaDeviceProp properties{};
  CUSYNC_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  cudaStream_t stream;
  CUSYNC_CUDA_CHECK(cudaStreamCreate(&stream));
  cublasLtHandle_t lt;
  checkCublas(cublasLtCreate(&lt), "create");
  const std::size_t workspaceBytes = 32ull << 20;
  DeviceBuffer<char> workspace(workspaceBytes);
  DeviceBuffer<unsigned long long> mismatches(1);
  const auto seed = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());

  // K = 2752 leaves a short last step in the GEMV paths; M = 5 leaves token rows of the mma tile empty; M = 3 at
  // K = 2752 runs the tensor-core whole-rows GEMV with a short last batch and token rows empty; M = 11 and 16 run the
  // packed GEMV's two token tiles (the second partly empty at 11).
  std::vector<Case> cases;
  for (bool swiGlu : {false, true})
    for (const auto& [m, hidden, intermediate] : std::vector<std::array<int, 3>>{
             {1, 2048, 1024}, {1, 1024, 2752}, {3, 1024, 2752}, {5, 1024, 512}, {8, 2048, 1024},
             {11, 1024, 2752}, {16, 2048, 1024}})
      for (const FusedSplit split : {FusedSplit{1, 1}, FusedSplit{1, 4}, FusedSplit{4, 4}, FusedSplit{8, 2}})
        cases.push_back({swiGlu, m, hidden, intermediate, split});
  // The (path, case) pairs that run: the CUDA-core GEMV paths take M = 1 only.
  long long runs = 0;
  for (const Case& c : cases)
    forEachSkinnyPath<GeluPolicy>([&](auto chain) {
      runs += decltype(chain)::type::whyNot(c.m, c.hidden, c.intermediate, c.swiGlu, c.split).empty() ? 1 : 0;
    });
  const int perGraph = 100;
  const long long replays = std::max(1LL, (executions + perGraph * runs - 1) / (perGraph * runs));
  long long totalExecutions = 0, totalMismatches = 0;
  std::printf("device: %s; %lld runs (path x MLP x size x split), %d chain executions per graph, %lld replays each, "
              "delays up to %d ns per unit\n", properties.name, runs, perGraph, replays, CUSYNC_CHAIN_DELAY_NS);

  // Replays `perGraph` poisoned, checked executions of `chain` per graph; returns the mismatched elements.
  auto stress = [&](const auto& chain, const MlpOperands& operands, DeviceBuffer<__half>& intermediate,
                    DeviceBuffer<__half>& y, const DeviceBuffer<__half>& reference) {
    return countMismatchesOverReplays(mismatches, stream, perGraph, replays, [&](cudaStream_t s) {
      poison(intermediate, s);
      poison(y, s);
      chain.enqueue(operands, s);
      countMismatches<><<<264, 256, 0, s>>>(y.get(), reference.get(), y.size(), mismatches.get());
    });
  };
  // One path on one case: skipped where the path cannot run it (whyNot: token counts, splits).
  auto runPath = [&](auto tag, const Case& c, const MlpOperands& operands, DeviceBuffer<__half>& intermediate,
                     DeviceBuffer<__half>& y, const DeviceBuffer<__half>& reference) {
    using Chain = typename decltype(tag)::type;
    if (!Chain::whyNot(c.m, c.hidden, c.intermediate, c.swiGlu, c.split).empty()) return;
    std::printf("  running %s %s M=%d H=%d I=%d split %ux%u\n", c.swiGlu ? "SwiGLU" : "GELU",
                Chain::configName().c_str(), c.m, c.hidden, c.intermediate, c.split.firstParts, c.split.secondParts);
    const auto start = std::chrono::steady_clock::now();
    Chain chain(c.m, c.hidden, c.intermediate, c.swiGlu, c.split, properties.multiProcessorCount, false);
    chain.packWeights(operands, stream);  // the packed-weights path's copies, before the graph captures the chain
    const unsigned long long bad = stress(chain, operands, intermediate, y, reference);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    totalExecutions += perGraph * replays;
    totalMismatches += (long long)bad;
    std::printf("%s %s M=%d H=%d I=%d split %ux%u: %lld executions in %.1f s, %llu mismatched elements%s\n",
                c.swiGlu ? "SwiGLU" : "GELU", Chain::configName().c_str(), c.m, c.hidden, c.intermediate,
                c.split.firstParts, c.split.secondParts, perGraph * replays, seconds, bad, bad ? "  FAILED" : "");
  };
  auto runPaths = [&](auto policyTag, const Case& c, const MlpOperands& operands, DeviceBuffer<__half>& intermediate,
                      DeviceBuffer<__half>& y, const DeviceBuffer<__half>& reference) {
    forEachSkinnyPath<typename decltype(policyTag)::type>(
        [&](auto chain) { runPath(chain, c, operands, intermediate, y, reference); });
  };
  for (const Case& c : cases) {
    if (!c.swiGlu) {
      GeluMlpBuffers buffers(c.m, c.hidden, c.intermediate);
      prepareGeluMlpReference(buffers, c.m, c.hidden, c.intermediate, seed,
                              ReferenceGemm(lt, workspace.get(), workspaceBytes), stream);
      runPaths(std::type_identity<GeluPolicy>{}, c,
               MlpOperands{buffers.x.get(), buffers.w1.get(), buffers.xw1.get(), buffers.w2.get(), buffers.y.get()},
               buffers.xw1, buffers.y, buffers.yReference);
    } else {
      SwiGluMlpBuffers buffers(c.m, c.hidden, c.intermediate);
      prepareSwiGluMlpReference(buffers, c.m, c.hidden, c.intermediate, seed,
                                ReferenceGemm(lt, workspace.get(), workspaceBytes), stream);
      pairGateUpRows(buffers.gateUp.get(), buffers.gateUpPaired.get(), c.intermediate, c.hidden, 32, stream);
      runPaths(std::type_identity<SwiGluPolicy>{}, c,
               MlpOperands{buffers.x.get(), buffers.gateUpPaired.get(), buffers.s.get(), buffers.w2.get(),
                           buffers.y.get()},
               buffers.s, buffers.y, buffers.yReference);
    }
  }
  std::printf("%lld chain executions, %lld mismatched elements, 0 hangs (a hang traps the watchdog): %s\n",
              totalExecutions, totalMismatches, totalMismatches == 0 ? "PASSED" : "FAILED");
  return totalMismatches == 0 ? 0 : 1;
}
