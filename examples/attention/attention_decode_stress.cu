// Stress test of the attention chain's token generation on the hooked GEMV stages (ctest label gpu): QKV GEMV ->
// decode attention -> output GEMV, tile-synchronized under the proven StridedSync and T policies (TileSync and
// RowSync), ordered by programmatic dependent launch and by wait-kernels, with a pseudo-random delay of up to
// CUSYNC_CHAIN_DELAY_NS injected into every GEMV unit and attention block before its wait and before its post
// (stress_delay.cuh; never built into benchmarks). Models, batch sizes (1-4 tokens), cache lengths, GEMV
// configurations (128- and 32-column output tiles, weights staged in shared memory or streamed, products on the CUDA
// cores or on tensor cores, weights row-major or packed), their split-K choices, the PDL grid-sync baseline and the
// attention stage's PDL trigger (at start, after its wait) vary, as does the stage kernels'
// shared-memory carveout (the example's token-generation default, decode_carveout.h, or the driver's choice, half
// the cases each), which decides which stages' blocks share an SM, and the attention stage's form (one pass or two
// over a part's keys, half the cases each). Every
// chain execution inside a CUDA graph is preceded by poisoning QKV, T, Y, the caches' new positions and the split-K
// and attention partials with NaN and followed by an element-wise comparison of T, Y and the caches' new positions
// with the fp32 reference, so one execution that read an unposted tile or an unwritten partial, or lost a write, is
// counted. Graphs are replayed without resetting counters or
// semaphores. A hang is a watchdog trap (CUSYNC_WAIT_TIMEOUT_NS) and a failure.
//
// Usage: attention_decode_stress [--executions N] [--help]   (default 60000 chain executions in all)
#define CUSYNC_CHAIN_DELAY_NS 20000
#define CUSYNC_WAIT_TIMEOUT_NS 5000000000ull

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "attention_chain.h"
#include "attention_gemv_instance.cuh"
#include "attention_stress_case.cuh"
#include "common/no_cuda_device.h"
#include "common/stress_executions.h"
#include "decode_carveout.h"

using namespace cusync;
using namespace cusync::examples;
using namespace cusync::examples::attention;

namespace {

constexpr const char* kProgram = "attention_decode_stress";
constexpr const char* kUsage =
    "Usage: attention_decode_stress [--executions N]\n"
    "Stress test of the attention chain's token generation on the hooked GEMV stages: random delays in every unit,\n"
    "every chain execution checked against the fp32 reference.\n"
    "\n"
    "  --executions N   chain executions in all (default 60000)\n"
    "  --help           print this help\n"
    "\n"
    "Exit status: 0 every execution correct, 1 a wrong execution, 2 bad command line, 77 no CUDA device.\n";

// The GEMV configurations of a model, as the example registers them (attention_gemv_instance.cuh), each output
// GEMM under both T policies.
template <Model M>
struct GemvEntries {
  AttentionGemm qkvB4 = AttentionGemvInstance<M, GemmRole::Qkv, TPolicyKind::TileSync, 4, false, 128, 0, 0>::entry();
  AttentionGemm qkvB2 = AttentionGemvInstance<M, GemmRole::Qkv, TPolicyKind::TileSync, 2, false, 128, 0, 1>::entry();
  // [T policy]: TileSync, RowSync.
  AttentionGemm out32B4[2] = {
      AttentionGemvInstance<M, GemmRole::Output, TPolicyKind::TileSync, 4, false, 32, 0, 0>::entry(),
      AttentionGemvInstance<M, GemmRole::Output, TPolicyKind::RowSync, 4, false, 32, 0, 0>::entry()};
  AttentionGemm out32B2Staged[2] = {
      AttentionGemvInstance<M, GemmRole::Output, TPolicyKind::TileSync, 2, true, 32, 0, 1>::entry(),
      AttentionGemvInstance<M, GemmRole::Output, TPolicyKind::RowSync, 2, true, 32, 0, 1>::entry()};
  AttentionGemm out128B2[2] = {
      AttentionGemvInstance<M, GemmRole::Output, TPolicyKind::TileSync, 2, false, 128, 0, 2>::entry(),
      AttentionGemvInstance<M, GemmRole::Output, TPolicyKind::RowSync, 2, false, 128, 0, 2>::entry()};
  // On tensor cores (hooked_mma_gemv_kernel.cuh): rings of 5 and 3 slots.
  AttentionGemm qkvMma = AttentionGemvInstance<M, GemmRole::Qkv, TPolicyKind::TileSync, 1, false, 128, 5, 2>::entry();
  AttentionGemm out32Mma[2] = {
      AttentionGemvInstance<M, GemmRole::Output, TPolicyKind::TileSync, 2, false, 32, 3, 3>::entry(),
      AttentionGemvInstance<M, GemmRole::Output, TPolicyKind::RowSync, 2, false, 32, 3, 3>::entry()};
  // Whole rows on tensor cores (hooked_rows_mma_gemv_kernel.cuh): a tile's column groups, the last arrival posts.
  AttentionGemm qkvRows =
      AttentionGemvInstance<M, GemmRole::Qkv, TPolicyKind::TileSync, 2, false, 128, 0, 3, 1>::entry();
  AttentionGemm qkvRows2 =
      AttentionGemvInstance<M, GemmRole::Qkv, TPolicyKind::TileSync, 2, false, 128, 0, 5, 2>::entry();
  AttentionGemm out32Rows[2] = {
      AttentionGemvInstance<M, GemmRole::Output, TPolicyKind::TileSync, 2, false, 32, 0, 4, 1>::entry(),
      AttentionGemvInstance<M, GemmRole::Output, TPolicyKind::RowSync, 2, false, 32, 0, 4, 1>::entry()};
  // Whole rows on tensor cores over weights packed once (hooked_packed_gemv_kernel.cuh): 16 columns per block.
  AttentionGemm qkvPacked =
      AttentionGemvInstance<M, GemmRole::Qkv, TPolicyKind::TileSync, 3, false, 128, 0, 6, 0, true>::entry();
  AttentionGemm out32Packed[2] = {
      AttentionGemvInstance<M, GemmRole::Output, TPolicyKind::TileSync, 3, false, 32, 0, 7, 0, true>::entry(),
      AttentionGemvInstance<M, GemmRole::Output, TPolicyKind::RowSync, 3, false, 32, 0, 7, 0, true>::entry()};
};

// Each GEMM's GEMV configurations above.
constexpr int kGemvChoices = 6;

struct Case {
  int batch, cached;
  Variant variant;
  bool triggerAfterWait;  // PDL: the attention stage lets the output GEMM launch after its wait
  // 0: gemv 128 b4, 1: gemv 128 b2, 2: gemv 128 b1 on tensor cores, 3: whole rows, 4: whole rows, 2 pieces, 5: packed
  int qkv;
  int out;  // 0: gemv 32 b4, 1: gemv 32 b2 staged, 2: gemv 128 b2, 3: gemv 32 b2 on tensor cores, 4: whole rows, 5: packed
  SplitChoice qkvSplit, outSplit;
  int carveoutPercent;        // uniform_carveout.h; -1: the driver's choice per kernel
  bool onePass;               // the attention stage's one-pass form (decodeAttentionKernel)
};

// The case's choices its chain's description does not name.
std::string caseOptions(const Case& c) {
  std::string text = c.onePass ? " (one-pass attention)" : "";
  if (c.carveoutPercent >= 0) text += " (carveout " + std::to_string(c.carveoutPercent) + "%)";
  return text;
}

template <Model M>
long long stressModel(const ModelShape& shape, long long executions, int multiprocessors, cudaStream_t stream,
                      cublasLtHandle_t lt, void* workspace, std::size_t workspaceBytes, std::uint64_t seed,
                      long long& mismatchesOut) {
  const GemvEntries<M> gemvs;
  const std::vector<Variant> variants{{Ordering::Pdl, TPolicyKind::TileSync},
                                      {Ordering::Pdl, TPolicyKind::RowSync},
                                      {Ordering::WaitKernel, TPolicyKind::TileSync},
                                      {Ordering::WaitKernel, TPolicyKind::RowSync},
                                      {Ordering::PdlGridSync, TPolicyKind::TileSync}};
  const AttentionGemm* qkvGemms[kGemvChoices] = {&gemvs.qkvB4,   &gemvs.qkvB2,    &gemvs.qkvMma,
                                                 &gemvs.qkvRows, &gemvs.qkvRows2, &gemvs.qkvPacked};
  auto outGemm = [&](int out, TPolicyKind k) {
    const int i = k == TPolicyKind::TileSync ? 0 : 1;
    const AttentionGemm* gemms[kGemvChoices] = {&gemvs.out32B4[i],  &gemvs.out32B2Staged[i], &gemvs.out128B2[i],
                                                &gemvs.out32Mma[i], &gemvs.out32Rows[i],     &gemvs.out32Packed[i]};
    return gemms[out];
  };
  std::vector<Case> cases;
  for (int batch : {1, 2, 3, 4})
    for (int cached : {63, 700, 1770}) {
      // 1770 cached keys at 4 sequences: GPT-3's attention parts hold 81 keys (the last 70), two steps of the
      // one-pass form with a half-warp that has no key in the second (decodePartInOnePass); batch 4 only.
      if (cached == 1770 && batch != 4) continue;
      for (const Variant& variant : variants)
        for (bool afterWait : {false, true}) {
          if (afterWait && variant.ordering == Ordering::WaitKernel) continue;  // the trigger is PDL's
          for (int qkv = 0; qkv < kGemvChoices; ++qkv)
            for (int out = 0; out < kGemvChoices; ++out) {
              AttentionProblem p{shape, Phase::Decode, batch, 1, cached};
              const auto qkvSplits = splitCandidates(*qkvGemms[qkv], Phase::Decode, p.tokens(), p.qkvColumns(),
                                                     shape.hidden, multiprocessors);
              const auto outSplits = splitCandidates(*outGemm(out, variant.tPolicy), Phase::Decode, p.tokens(),
                                                     shape.hidden, p.tColumns(), multiprocessors);
              if (qkvSplits.empty() || outSplits.empty()) continue;  // a GEMV that does not fit on this device
              const int carveout = qkv % 2 == 0 ? kDecodeSharedCarveoutPercent : -1;
              const bool onePass = (out + batch) % 2 == 0;
              // Every output split with the QKV GEMM's first, and the QKV GEMM's last with the output's first.
              for (const SplitChoice& o : outSplits)
                cases.push_back(
                    {batch, cached, variant, afterWait, qkv, out, qkvSplits.front(), o, carveout, onePass});
              if (qkvSplits.size() > 1)
                cases.push_back(
                    {batch, cached, variant, afterWait, qkv, out, qkvSplits.back(), outSplits.front(), carveout,
                     onePass});
            }
        }
    }
  const int perGraph = 20;
  const long long replays = std::max(1LL, executions / (perGraph * (long long)cases.size()));
  std::printf("%s: %zu cases (batch x cache x variant x trigger x GEMVs x splits), %d chain executions per graph, "
              "%lld replays each, delays up to %d ns per unit\n",
              shape.name, cases.size(), perGraph, replays, CUSYNC_CHAIN_DELAY_NS);
  DeviceBuffer<unsigned long long> mismatches(1);
  long long done = 0;
  int preparedBatch = -1, preparedCache = -1;
  std::unique_ptr<AttentionBuffers> buffers;
  for (const Case& c : cases) {
    const AttentionProblem p{shape, Phase::Decode, c.batch, 1, c.cached};
    if (c.batch != preparedBatch || c.cached != preparedCache) {
      buffers = std::make_unique<AttentionBuffers>(p);
      prepareAttentionReference(*buffers, p, seed + std::uint64_t(c.batch * 100000 + c.cached), lt, workspace,
                                workspaceBytes, stream);
      preparedBatch = c.batch, preparedCache = c.cached;
    }
    const GemmChoice gemms{qkvGemms[c.qkv], outGemm(c.out, c.variant.tPolicy), c.qkvSplit, c.outSplit};
    setUniformSharedCarveout(c.carveoutPercent);  // the stage kernels' launches from here on (-1: none)
    AttentionChain<M, Phase::Decode> chain(p, c.variant, gemms, *buffers, multiprocessors, lt, workspace,
                                          workspaceBytes, AttentionOrder::Rows, PartOrder::KRangesInTurn, 1,
                                          kDecodeBlocksPerSm, c.triggerAfterWait, 1, PromptAttentionKernel::FlashMma,
                                          1, c.onePass ? DecodeAttentionForm::OnePass : DecodeAttentionForm::TwoPass);
    // Named before it runs, so that a hang is attributed.
    std::printf("  running %s B=%d S'=%d %s%s%s [%s]\n", shape.name, c.batch, c.cached, c.variant.name().c_str(),
                c.triggerAfterWait ? " (trigger after wait)" : "", caseOptions(c).c_str(), chain.description().c_str());
    const auto start = std::chrono::steady_clock::now();
    const unsigned long long bad = countStressMismatches(chain, *buffers, p, stream, perGraph, replays, mismatches);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    done += perGraph * replays;
    mismatchesOut += (long long)bad;
    std::printf("%s B=%d S'=%d %s%s%s [%s]: %lld executions in %.1f s, %llu mismatched elements%s\n", shape.name,
                c.batch, c.cached, c.variant.name().c_str(), c.triggerAfterWait ? " (trigger after wait)" : "",
                caseOptions(c).c_str(), chain.description().c_str(), perGraph * replays, seconds, bad,
                bad ? "  FAILED" : "");
  }
  return done;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  const long long executions = parseStressExecutions(argc, argv, kProgram, kUsage, 60000);
  if (missingCudaDevice(stdout, "SKIPPED: no CUDA device")) return kNoCudaDevice;
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
