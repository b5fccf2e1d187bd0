// Stress test of the fused chain (ctest label gpu): the GELU MLP chain and the SwiGLU MLP chain (paired gate/up
// GEMM whose epilogue writes S with plain stores before its post) with a pseudo-random delay of up to
// CUSYNC_CHAIN_DELAY_NS injected into every unit, in the load warp before its first wait and in the math warps
// before each post (fused_chain_gemm_kernel.hpp's compile-time hook, never built into benchmarks). Sizes, split-K
// settings and both part orders vary; every chain execution inside a CUDA graph is preceded by poisoning its
// intermediate and output with NaN and followed by an element-wise comparison with a cuBLAS + exact-activation reference,
// so a single execution that read an unposted tile, or lost a write, is counted. Graphs are replayed many times
// without resetting counters or semaphores. A hang is a watchdog trap (CUSYNC_WAIT_TIMEOUT_NS) and a failure.
//
// Usage: mlp_fused_stress [--executions N] [--help]   (default 100000 chain executions in all)
// The kernels are compiled elsewhere, with the delay and the watchdog: fused_chain_stress_kernels.h.
#include "fused_chain_stress_kernels.h"  // first: it sets the kernels' compile-time delay and watchdog

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/command_line_numbers.h"
#include "common/no_cuda_device.h"
#include "common/stress_executions.h"
#include "common/gelu_mlp_reference.cuh"
#include "common/mismatch_count.cuh"
#include "fused_mlp.h"
#include "swiglu_mlp_reference.cuh"
#include "swiglu_weight_pairing.h"

using namespace cusync;
using namespace cusync::examples;

namespace {

struct Size {
  int m, hidden, intermediate;
};

constexpr const char* kProgram = "mlp_fused_stress";
constexpr const char* kUsage =
    "Usage: mlp_fused_stress [--executions N]\n"
    "Stress test of the fused chain: random per-unit delays, every chain execution checked against cuBLAS.\n"
    "\n"
    "  --executions N   chain executions in all (default 100000)\n"
    "  --help           print this help\n"
    "\n"
    "Exit status: 0 every execution correct, 1 a wrong execution, 2 bad command line, 77 no CUDA device.\n";

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
  const FusedChainEntry geluKernel = stress::geluKernel();
  const SwiGluChainEntry swiGluKernel = stress::swiGluKernel();
  const FusedChainEntry clusterKernel = stress::clusterKernel();
  const SwiGluChainEntry twoTileKernels[3] = {stress::twoTileWiderSecondKernel(),
                                              stress::twoTileNarrowerSecondKernel(), stress::narrowFirstWsKernel()};
  const FusedChainEntry stagedGeluKernel = stress::stagedGeluKernel();
  const SwiGluChainEntry stagedSwiGluKernel = stress::stagedSwiGluKernel();
  const FusedChainEntry twoPipelineKernels[2] = {stress::twoPipelineKernel(), stress::narrowTwoPipelineKernel()};
  const std::uint32_t slots = std::uint32_t(properties.multiProcessorCount * geluKernel.maxActiveBlocksPerSm());

  // Intermediate sizes are multiples of 64 (half the SwiGLU tile's columns).
  const std::vector<Size> sizes{{1, 2048, 1024}, {64, 1024, 512}, {200, 2048, 768}, {512, 1024, 1024}};
  // For GEMM 1 in 96-column paired tiles: intermediate sizes that are multiples of 48 (and of 96, for the GELU
  // chain's 96-column tiles).
  const std::vector<Size> sizesOf48{{1, 2048, 960}, {64, 1024, 480}, {200, 2048, 768}, {512, 1024, 960}};
  const TileOrders orders = TileOrders::parse("g8", "mlp_fused_stress");
  struct Case {
    bool swiGlu;
    bool cluster;  // the GELU chain on 2x1 clusters
    int twoTiles;  // the SwiGLU chain with a tile width per GEMM: 0 no; on 2x1 clusters 1 GEMM 2 wider, 2 narrower;
                   // 3 on one math warp group, GEMM 1 in 96 columns and GEMM 2 in 128
    Size size;
    FusedSplit split;
    bool waitForWholeUnit;  // GEMM 2's units wait for their whole k-range (else k-block by k-block)
    bool staged;            // the staged-epilogue kernel of the chain (on 2x1 clusters)
    int twoPipelines;       // the GELU chain with a pipeline per GEMM, on 2x1 clusters: 0 no; 1 128-row tiles (two
                            // math warp groups), 2 64-row tiles (one math warp group)
  };
  std::vector<Case> cases;
  // Chains: GELU, SwiGLU, GELU on 2x1 clusters (in the default run since session 5, when they first passed on the
  // H100: docs/BENCHMARKS.md, "2x1 clusters"), SwiGLU with a tile width per GEMM, two ways on clusters (session 9)
  // and one on a single math warp group (session 10), then GELU and SwiGLU with staged epilogues (session 11), then
  // GELU with a pipeline per GEMM (session 20), in 128-row tiles and in 64-row ones (session 21).
  // CUSYNC_STRESS_CHAINS=cluster runs the cluster chain's cases only, =two-tiles the three two-width chains',
  // =staged the two staged chains', =two-pipelines the last two chains'.
  const char* only = std::getenv("CUSYNC_STRESS_CHAINS");
  const std::string onlyChain = only != nullptr ? only : "";
  const int firstChain = onlyChain == "cluster"         ? 2
                         : onlyChain == "two-tiles"     ? 3
                         : onlyChain == "staged"        ? 6
                         : onlyChain == "two-pipelines" ? 8
                                                        : 0;
  const int endChain = onlyChain == "cluster" ? 3 : onlyChain == "two-tiles" ? 6 : onlyChain == "staged" ? 8 : 10;
  for (int chain = firstChain; chain < endChain; ++chain)
    for (const Size& size : chain == 5 || chain >= 8 ? sizesOf48 : sizes) {
      const int twoPipelines = chain >= 8 ? chain - 7 : 0;
      const bool staged = chain == 6 || chain == 7;
      const bool swiGlu = chain == 1 || (chain >= 3 && chain <= 7 && chain != 6);
      const bool cluster = chain == 2 || chain == 6 || chain >= 8;
      const int twoTiles = chain >= 3 && chain <= 5 ? chain - 2 : 0;
      const auto addCases = [&](const auto& k) {
        const int gemm1Columns = (swiGlu ? 2 : 1) * size.intermediate;
        for (const FusedSplit& split : fusedSplitCandidates(k.tileGrid(size.m, gemm1Columns).tileCount(),
                                                            std::uint32_t(size.hidden / k.tile.k),
                                                            k.secondTileGrid(size.m, size.hidden).tileCount(),
                                                            std::uint32_t(size.intermediate / k.secondTile.k), slots))
          for (bool whole : {false, true})
            cases.push_back({swiGlu, cluster, twoTiles, size, split, whole, staged, twoPipelines});
      };
      if (twoPipelines != 0)
        addCases(twoPipelineKernels[twoPipelines - 1]);
      else if (staged && swiGlu)
        addCases(stagedSwiGluKernel);
      else if (staged)
        addCases(stagedGeluKernel);
      else if (twoTiles != 0)
        addCases(twoTileKernels[twoTiles - 1]);
      else
        addCases(cluster ? clusterKernel : geluKernel);
    }
  // Unsplit cases first: a hang in a split case then leaves the others measured.
  std::stable_sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) {
    return (a.split.firstParts * a.split.secondParts == 1) > (b.split.firstParts * b.split.secondParts == 1);
  });
  const int perGraph = 100;
  const long long replays = std::max(1LL, executions / (perGraph * (long long)cases.size()));
  long long totalExecutions = 0, totalMismatches = 0;
  std::printf("device: %s; %zu cases (chain x size x split x unit wait), %d chain executions per graph, %lld replays each, "
              "delays up to %d ns per unit\n", properties.name, cases.size(), perGraph, replays, CUSYNC_CHAIN_DELAY_NS);
  // Replays `perGraph` poisoned, checked executions of `mlp` per graph; returns the mismatched elements.
  auto stress = [&](const auto& mlp, const MlpOperands& operands, DeviceBuffer<__half>& intermediate,
                    DeviceBuffer<__half>& y, const DeviceBuffer<__half>& reference) {
    return countMismatchesOverReplays(mismatches, stream, perGraph, replays, [&](cudaStream_t s) {
      poison(intermediate, s);
      poison(y, s);
      mlp.enqueue(operands, s);
      countMismatches<><<<264, 256, 0, s>>>(y.get(), reference.get(), y.size(), mismatches.get());
    });
  };
  for (const Case& c : cases) {
    // Named before it runs, so that a hang is attributed.
    const char* chainName = c.twoPipelines == 1 ? "GELU 96|192 2x1 clusters, a pipeline per GEMM"
                            : c.twoPipelines == 2 ? "GELU 64-row 96|192 2x1 clusters, a pipeline per GEMM"
                            : c.staged && c.swiGlu ? "SwiGLU 128|256 2x1 clusters, staged epilogues"
                            : c.staged        ? "GELU 2x1 clusters, staged epilogues"
                            : c.twoTiles == 1 ? "SwiGLU 128|256 2x1 clusters"
                            : c.twoTiles == 2 ? "SwiGLU 128|96 2x1 clusters"
                            : c.twoTiles == 3 ? "SwiGLU 96|128 one math warp group"
                            : c.swiGlu        ? "SwiGLU"
                            : c.cluster       ? "GELU 2x1 clusters"
                                              : "GELU";
    std::printf("  running %s M=%d split %ux%u %s\n", chainName,
                c.size.m, c.split.firstParts, c.split.secondParts, c.waitForWholeUnit ? "whole-unit" : "k-block");
    std::fflush(stdout);
    const auto start = std::chrono::steady_clock::now();
    unsigned long long bad = 0;
    if (!c.swiGlu) {
      GeluMlpBuffers buffers(c.size.m, c.size.hidden, c.size.intermediate);
      prepareGeluMlpReference(buffers, c.size.m, c.size.hidden, c.size.intermediate, seed,
                              ReferenceGemm(lt, workspace.get(), workspaceBytes), stream);
      const FusedChainEntry& kernel = c.twoPipelines != 0 ? twoPipelineKernels[c.twoPipelines - 1]
                                      : c.staged     ? stagedGeluKernel
                                      : c.cluster    ? clusterKernel
                                                     : geluKernel;
      FusedMlp mlp(kernel, c.size.m, c.size.hidden, c.size.intermediate, c.split, orders, slots, false);
      mlp.setWaitForWholeUnit(c.waitForWholeUnit);
      bad = stress(mlp,
                   MlpOperands{buffers.x.get(), buffers.w1.get(), buffers.xw1.get(), buffers.w2.get(), buffers.y.get()},
                   buffers.xw1, buffers.y, buffers.yReference);
    } else {
      SwiGluMlpBuffers buffers(c.size.m, c.size.hidden, c.size.intermediate);
      prepareSwiGluMlpReference(buffers, c.size.m, c.size.hidden, c.size.intermediate, seed,
                                ReferenceGemm(lt, workspace.get(), workspaceBytes), stream);
      const SwiGluChainEntry& kernel = c.staged          ? stagedSwiGluKernel
                                       : c.twoTiles != 0 ? twoTileKernels[c.twoTiles - 1]
                                                         : swiGluKernel;
      pairGateUpRows(buffers.gateUp.get(), buffers.gateUpPaired.get(), c.size.intermediate, c.size.hidden,
                     kernel.tile.n, stream);
      FusedSwiGluMlp mlp(kernel, c.size.m, c.size.hidden, c.size.intermediate, c.split, orders, slots, false);
      mlp.setWaitForWholeUnit(c.waitForWholeUnit);
      bad = stress(mlp,
                   MlpOperands{buffers.x.get(), buffers.gateUpPaired.get(), buffers.s.get(), buffers.w2.get(),
                               buffers.y.get()},
                   buffers.s, buffers.y, buffers.yReference);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    totalExecutions += perGraph * replays;
    totalMismatches += bad;
    std::printf("%s M=%d H=%d I=%d split %ux%u, %s waits: %lld executions in %.1f s, %llu mismatched elements%s\n",
                chainName, c.size.m, c.size.hidden, c.size.intermediate, c.split.firstParts,
                c.split.secondParts, c.waitForWholeUnit ? "whole-unit" : "k-block", perGraph * replays, seconds, bad,
                bad ? "  FAILED" : "");
  }
  std::printf("%lld chain executions, %lld mismatched elements, 0 hangs (a hang traps the watchdog): %s\n",
              totalExecutions, totalMismatches, totalMismatches == 0 ? "PASSED" : "FAILED");
  return totalMismatches == 0 ? 0 : 1;
}
