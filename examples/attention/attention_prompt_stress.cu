// Stress test of the attention chain's prompt processing with CUTLASS's flash attention as its attention stage
// (ctest label gpu): QKV GEMM -> hooked FMHA -> output GEMM, tile-synchronized under the proven StridedSync and T
// policies (TileSync and RowSync), ordered by programmatic dependent launch and by wait-kernels (in the Stream+
// variants only the T dependency is synchronized: the attention runs after the whole QKV GEMM), with a pseudo-random
// delay of up to CUSYNC_CHAIN_DELAY_NS injected into every attention block before its wait (a slow consumer of the
// QKV GEMM) and before its post (a slow producer for the output GEMM; stress_delay.cuh, never built into
// benchmarks). The GEMMs are the example's registered CUTLASS instances, undelayed. Models, prompt shapes (one and
// several sequences), every QKV configuration of the build (2x1 clusters or single blocks), both attention tile
// orders and the GEMMs' split-K choices vary. Every chain execution inside a CUDA graph is preceded by poisoning
// QKV, T, Y, the caches' new positions and the split-K partials with NaN and followed by an element-wise comparison
// of T, Y and the caches' new positions with the fp32 reference. Graphs are replayed without resetting counters or
// semaphores. A hang is a watchdog trap (CUSYNC_WAIT_TIMEOUT_NS) and a failure.
//
// Usage: attention_prompt_stress [--executions N] [--help]   (default 20000 chain executions in all)
#define CUSYNC_CHAIN_DELAY_NS 20000
#define CUSYNC_WAIT_TIMEOUT_NS 5000000000ull

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attention_chain.h"
#include "attention_stress_case.cuh"
#include "common/no_cuda_device.h"
#include "common/stress_executions.h"

using namespace cusync;
using namespace cusync::examples;
using namespace cusync::examples::attention;

namespace {

constexpr const char* kProgram = "attention_prompt_stress";
constexpr const char* kUsage =
    "Usage: attention_prompt_stress [--executions N]\n"
    "Stress test of the attention chain's prompt processing with CUTLASS's flash attention: random delays in every\n"
    "attention block, every chain execution checked against the fp32 reference.\n"
    "\n"
    "  --executions N   chain executions in all (default 20000)\n"
    "  --help           print this help\n"
    "\n"
    "Exit status: 0 every execution correct, 1 a wrong execution, 2 bad command line, 77 no CUDA device or no\n"
    "CUTLASS flash attention in this build.\n";

struct Case {
  int batch, sequence;
  Variant variant;
  AttentionOrder order;
  const AttentionGemm* qkv;
  const AttentionGemm* out;
  SplitChoice qkvSplit, outSplit;
  bool staticUnits = true;  // persistent GEMM stages: static schedule, or a ticket per unit (StageView::staticUnits)
};

template <Model M>
long long stressModel(const ModelShape& shape, long long executions, int multiprocessors, cudaStream_t stream,
                      cublasLtHandle_t lt, void* workspace, std::size_t workspaceBytes, std::uint64_t seed,
                      long long& mismatchesOut) {
  const std::vector<Variant> variants{{Ordering::Pdl, TPolicyKind::TileSync},
                                      {Ordering::Pdl, TPolicyKind::RowSync},
                                      {Ordering::WaitKernel, TPolicyKind::TileSync},
                                      {Ordering::WaitKernel, TPolicyKind::RowSync},
                                      {Ordering::PdlGridSync, TPolicyKind::TileSync},
                                      {Ordering::StreamThenPdl, TPolicyKind::TileSync},
                                      {Ordering::StreamThenPdl, TPolicyKind::RowSync}};
  std::vector<Case> cases;
  for (auto [batch, sequence] : {std::pair{1, 512}, std::pair{2, 1024}, std::pair{4, 512}})
    for (const Variant& variant : variants)
      for (AttentionOrder order : {AttentionOrder::LongestFirst, AttentionOrder::Rows}) {
        const AttentionProblem p{shape, Phase::Prompt, batch, sequence, 0};
        const auto outs = findAttentionGemms(M, Phase::Prompt, GemmRole::Output, variant.tPolicy);
        if (outs.empty()) continue;
        const AttentionGemm* out = outs.front();
        const auto outSplits =
            splitCandidates(*out, Phase::Prompt, p.tokens(), shape.hidden, p.tColumns(), multiprocessors);
        for (const AttentionGemm* qkv : findAttentionGemms(M, Phase::Prompt, GemmRole::Qkv, TPolicyKind::TileSync)) {
          const auto qkvSplits =
              splitCandidates(*qkv, Phase::Prompt, p.tokens(), p.qkvColumns(), shape.hidden, multiprocessors);
          if (qkvSplits.empty() || outSplits.empty()) continue;
          // The QKV GEMM's first and last split choice (unsplit; the last wave split, or stream-K where the GEMM is
          // persistent), the output GEMM's first.
          cases.push_back({batch, sequence, variant, order, qkv, out, qkvSplits.front(), outSplits.front()});
          if (qkvSplits.size() > 1)
            cases.push_back({batch, sequence, variant, order, qkv, out, qkvSplits.back(), outSplits.front()});
          // A persistent output GEMM's last choice is stream-K: its chunks wait for T's rows, which the delayed
          // attention blocks post late.
          if (outSplits.back().isStreamK())
            cases.push_back({batch, sequence, variant, order, qkv, out, qkvSplits.back(), outSplits.back()});
        }
      }
  // Where a GEMM is persistent, each case runs in both unit schedules.
  for (std::size_t i = 0, n = cases.size(); i < n; ++i)
    if (cases[i].qkv->persistent || cases[i].out->persistent) {
      Case ticket = cases[i];
      ticket.staticUnits = false;
      cases.push_back(ticket);
    }
  const int perGraph = 10;
  const long long replays = std::max(1LL, executions / (perGraph * (long long)std::max<std::size_t>(cases.size(), 1)));
  std::printf("%s: %zu cases (shape x variant x attention order x QKV configuration x split), %d chain executions "
              "per graph, %lld replays each, delays up to %d ns per attention block\n",
              shape.name, cases.size(), perGraph, replays, CUSYNC_CHAIN_DELAY_NS);
  DeviceBuffer<unsigned long long> mismatches(1);
  long long done = 0;
  int preparedBatch = -1, preparedSequence = -1;
  std::unique_ptr<AttentionBuffers> buffers;
  for (const Case& c : cases) {
    const AttentionProblem p{shape, Phase::Prompt, c.batch, c.sequence, 0};
    if (c.batch != preparedBatch || c.sequence != preparedSequence) {
      buffers = std::make_unique<AttentionBuffers>(p);
      prepareAttentionReference(*buffers, p, seed + std::uint64_t(c.batch * 100000 + c.sequence), lt, workspace,
                                workspaceBytes, stream);
      preparedBatch = c.batch, preparedSequence = c.sequence;
    }
    const GemmChoice gemms{c.qkv, c.out, c.qkvSplit, c.outSplit, c.staticUnits, c.staticUnits};
    AttentionChain<M, Phase::Prompt> chain(p, c.variant, gemms, *buffers, multiprocessors, lt, workspace,
                                           workspaceBytes, c.order, PartOrder::KRangesInTurn, 1, kDecodeBlocksPerSm,
                                           false, defaultOutputGroupRows(M), PromptAttentionKernel::CutlassFmha);
    const char* orderName = c.order == AttentionOrder::Rows ? "rows" : "longest-first";
    // Named before it runs, so that a hang is attributed.
    const char* unitsName = c.staticUnits ? "static units" : "ticket units";
    std::printf("  running %s %dx%d %s %s %s [%s]\n", shape.name, c.batch, c.sequence, c.variant.name().c_str(),
                orderName, unitsName, chain.description().c_str());
    const auto start = std::chrono::steady_clock::now();
    const unsigned long long bad = countStressMismatches(chain, *buffers, p, stream, perGraph, replays, mismatches);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    done += perGraph * replays;
    mismatchesOut += (long long)bad;
    std::printf("%s %dx%d %s %s %s [%s]: %lld executions in %.1f s, %llu mismatched elements%s\n", shape.name,
                c.batch, c.sequence, c.variant.name().c_str(), orderName, unitsName, chain.description().c_str(),
                perGraph * replays, seconds, bad, bad ? "  FAILED" : "");
  }
  return done;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  const long long executions = parseStressExecutions(argc, argv, kProgram, kUsage, 20000);
  if (missingCudaDevice(stdout, "SKIPPED: no CUDA device")) return kNoCudaDevice;
  if (!CUSYNC_HAVE_CUTLASS_FMHA) {
    std::printf("SKIPPED: this build has no CUTLASS flash attention\n");
    return 77;
  }
  cudaDeviceProp properties{};
  CUSYNC_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  std::printf("device: %s, %d SMs\n", properties.name, properties.multiProcessorCount);
  cudaStream_t stream;
  CUSYNC_CUDA_CHECK(cudaStreamCreate(&stream));
  cublasLtHandle_t lt;
  checkCublas(cublasLtCreate(&lt), "create");
  const std::size_t workspaceBytes = 64ull << 20;
  DeviceBuffer<char> workspace(workspaceBytes);
  const auto seed = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  long long total = 0, mismatches = 0;
  total += stressModel<Model::Gpt3>(kGpt3, executions / 2, properties.multiProcessorCount, stream, lt, workspace.get(),
                                    workspaceBytes, seed, mismatches);
  total += stressModel<Model::Llama>(kLlama, executions / 2, properties.multiProcessorCount, stream, lt,
                                     workspace.get(), workspaceBytes, seed, mismatches);
  std::printf("%lld chain executions, %lld mismatched elements, 0 hangs (a hang traps the watchdog): %s\n", total,
              mismatches, mismatches == 0 ? "PASSED" : "FAILED");
  cublasLtDestroy(lt);
  return mismatches == 0 ? 0 : 1;
}
