// GPT-3 MLP (tensor-parallel slice) as ONE persistent launch: both GEMMs' work units drawn from one chain queue
// (fused_chain_gemm_kernel.hpp), GEMM 2's units waiting tile by tile and k-block by k-block for the GELU(X W1^T)
// tiles they read. With --model llama, the LLaMA-65B MLP slice (H = 8192, F/8 = 2752) the same way: GEMM 1 over
// gate/up weights paired per tile, its epilogue writing S = silu(gate) * up (paired_glu_epilogue.hpp). Side by
// side in one run, every variant checked against a cuBLAS + exact-activation reference on fresh random inputs
// (outputs and intermediates poisoned with NaN), then timed with CUDA graphs:
//   cuBLASLt            GEMM (GELU epilogue) then GEMM, back to back; LLaMA: GEMM, SwiGLU kernel, GEMM
//   Fused               the chain in one launch, tile-synchronized
//   Fused-StreamSync    the same kernel launched twice, one GEMM per launch, ordered by the stream
// At M <= 8 also the skinny chains (skinny_mlp.cuh; the packed GEMV up to 16): weights on the wide side of mma.sync
// or, at M = 1, a GEMV on the CUDA cores (configurations skinny_32_*, gemv_32_*; --skinny-splits); for the
// launch-per-GEMM path (gemv_32_p*) also the PDL grid-sync baseline (variant PDL-GridSync: the second launch starts
// early and waits for the whole first grid).
// Torch baselines (eager, torch.compile) come from bench/mlp/torch_baselines.py in the same device call;
// bench/mlp/summarize_fused.py puts them into one table with this program's CSV.
//
// Usage: mlp_fused_example [--model gpt3|llama] [--m 1,8,...] [--pairs N] [--samples N] [--csv FILE] [--check-only]
//                          [--configs a,b] [--variants a,b] [--orders g8,row,...] [--unit-wait kblock,whole]
//                          [--splits ...] [--skinny-splits ...] [--interleave] [--warmup-ms N] [--verbose]
//                          [--reference cublaslt|direct] [--trace FILE] [--help]
// --variants names the variants above (cuBLAS, Fused, Fused-StreamSync, PDL-GridSync) and CUTLASS (the stock GEMMs
// --configs names). --reference direct computes the reference without cuBLAS (common/direct_gemm.cuh); with
// --check-only and --variants leaving cuBLAS out, no cuBLAS kernel runs (scripts/gpu_sanitize.sh's racecheck).
// --trace FILE: after timing, every variant runs once more with a per-unit trace (chain_trace.h); the records go to
// FILE as CSV (bench/mlp/summarize_trace.py reads it). Use with a few --m and --configs: one row per work unit.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "cublas_gelu_mlp_baseline.h"
#include "common/device_buffers.cuh"
#include "common/gelu_mlp_reference.cuh"
#include "cusync/cusync.cuh"
#include "cusync/fused_chain.cuh"
#include "fused_chain_registry.h"
#include "fused_mlp.h"
#include "fused_split.h"
#include "mlp_harness.h"
#include "mlp_options.h"
#include "mlp_results.h"
#include "skinny_mlp.cuh"
#include "stock_gemm_registry.h"
#include "swiglu_mlp_reference.cuh"
#include "swiglu_weight_pairing.h"
#include "tile_orders.h"
#include "two_stage_block_trace.h"
#include "gpt3_mlp_skinny.h"   // generated and proven by cusyncgen from examples/mlp/gpt3_mlp_skinny.dep
#include "llama_mlp_skinny.h"  // ... and from examples/mlp/llama_mlp_skinny.dep

using namespace cusync;
using namespace cusync::examples;

namespace {

// The tensor-parallel slice (8-way) of each model's MLP, and how many GEMM-1 columns an intermediate column takes.
struct MlpShape {
  const char* model;
  int hidden;
  int intermediate;
  int gemm1ColumnsPerIntermediate;  // 2 for SwiGLU: gate and up in one GEMM
};
constexpr MlpShape kGpt3Shape{"gpt3", 12288, 4 * 12288 / 8, 1};  // intermediate 6144
constexpr MlpShape kLlamaShape{"llama", 8192, 22016 / 8, 2};      // intermediate 2752

template <class Policy>
std::vector<const FusedChainEntryFor<Policy>*> selectedKernels(const MlpOptions& options) {
  std::vector<const FusedChainEntryFor<Policy>*> kernels;
  for (const auto& entry : fusedChainRegistry<Policy>())
    if (configSelected(options, entry.name)) kernels.push_back(&entry);
  return kernels;
}

// Per M: the floor, cuBLASLt, the best fused chain and the best stream-ordered launch of the same kernels.
void printFusedSummary(const std::vector<Result>& results, const std::vector<int>& ms,
                       const std::function<double(int)>& floorUs) {
  std::printf("\n%6s %9s %9s | %-34s %9s %6s %6s | %-34s %9s | %7s %7s %7s\n", "M", "floor_us", "cuBLAS",
              "best Fused (config)", "us", "waves1", "waves2", "best Fused-StreamSync (config)", "us", "vsSS",
              "vsBLAS", "/floor");
  for (int m : ms) {
    auto best = [&](const std::string& variant) {
      const Result* b = nullptr;
      for (const auto& r : results)
        if (r.m == m && r.correct && r.variant == variant && (!b || r.microseconds < b->microseconds)) b = &r;
      return b;
    };
    const Result* blas = best("cuBLAS");
    const Result* fused = best("Fused");
    const Result* stream = best("Fused-StreamSync");
    auto time = [](const Result* r) { return r ? r->microseconds : 0.0; };
    auto label = [](const Result* r) { return r ? r->config : std::string("-"); };
    const double floor = floorUs(m);
    std::printf("%6d %9.1f %9.1f | %-34s %9.1f %6.2f %6.2f | %-34s %9.1f | %7.3f %7.3f %7.3f\n", m, floor,
                time(blas), label(fused).c_str(), time(fused), fused ? fused->wavesProducer : 0,
                fused ? fused->wavesConsumer : 0, label(stream).c_str(), time(stream),
                fused && stream ? time(stream) / time(fused) : 0, fused && blas ? time(blas) / time(fused) : 0,
                fused && floor > 0 ? time(fused) / floor : 0);
  }
}

// What every fused variant of one M needs: its operands, the buffers it is checked on, the device, the unit waits
// to try and where results and traces go.
struct FusedRunContext {
  int m;
  MlpShape shape;
  MlpOperands operands;
  CheckedOutput checked;
  const MlpDevice* device;
  const std::vector<TileOrders>* tileOrders;
  const MlpOptions* options;
  std::FILE* traceFile;
  std::FILE* blockTraceFile;  // --block-trace: the launch-per-GEMM GEMV chains' block records; null: none
  std::vector<bool> unitWaits;  // GEMM 2's units: false = k-block by k-block, true = whole k-range first
  std::vector<FusedSplit> splits;  // the splits to run instead of fusedSplitCandidates' (--splits); empty: those
};

// What a kernel's variants run on: the intermediate size (padded for the paired SwiGLU layout where the tile needs
// it: swiglu_weight_pairing.h), the operands in that size, and the intermediate buffer checkThenTime poisons.
struct KernelOperands {
  int intermediate;
  MlpOperands operands;
  DeviceBuffer<__half>* intermediateBuffer;
};

// Every selected kernel x split candidate x tile order of the chain of `Policy`, synchronized and stream-ordered;
// `prepareWeights(kernel)` runs before a kernel's variants and returns its KernelOperands (the paired SwiGLU layout
// depends on its tile).
template <class Policy, class PrepareWeights>
void runFusedVariants(const std::vector<const FusedChainEntryFor<Policy>*>& kernels, const FusedRunContext& c,
                      PrepareWeights&& prepareWeights, MlpResults& results) {
  const int m = c.m;
  for (const FusedChainEntryFor<Policy>* kernel : kernels) {
    const int occupancy = kernel->maxActiveBlocksPerSm();
    if (occupancy == 0) continue;  // does not fit on this device (shared memory)
    const KernelOperands prepared = prepareWeights(*kernel);
    const int gemm1Columns = c.shape.gemm1ColumnsPerIntermediate * prepared.intermediate;
    // A padded intermediate size is named in the configuration.
    const std::string padding =
        prepared.intermediate == c.shape.intermediate ? "" : "_pad" + std::to_string(prepared.intermediate);
    const std::uint32_t slots = std::uint32_t(c.device->smCount()) * std::uint32_t(occupancy);
    const std::uint32_t tiles1 = kernel->tileGrid(m, gemm1Columns).tileCount();
    const std::uint32_t tiles2 = kernel->secondTileGrid(m, c.shape.hidden).tileCount();
    const auto kBlocks = [](int k, int tileK) { return std::uint32_t((k + tileK - 1) / tileK); };
    std::vector<FusedSplit> splits;
    for (const FusedSplit& split : c.splits) {  // asked for by name: each that has at least a k-block per part
      if (split.firstParts <= kBlocks(c.shape.hidden, kernel->tile.k) &&
          split.secondParts <= kBlocks(prepared.intermediate, kernel->secondTile.k))
        splits.push_back(split);
      else
        std::printf("M=%d %s: split %ux%u not run: more parts than k-blocks\n", m, kernel->name.c_str(),
                    split.firstParts, split.secondParts);
    }
    if (c.splits.empty())
      splits = fusedSplitCandidates(tiles1, kBlocks(c.shape.hidden, kernel->tile.k), tiles2,
                                    kBlocks(prepared.intermediate, kernel->secondTile.k), slots);
    for (const TileOrders& orders : *c.tileOrders)
      for (const FusedSplit& split : splits) {
        for (int run = 0; run <= int(c.unitWaits.size()); ++run) {
          // The synchronized chain once per unit wait, then the stream-ordered launches (which wait for nothing).
          const bool streamOrdered = run == int(c.unitWaits.size());
          const std::string variant = streamOrdered ? "Fused-StreamSync" : "Fused";
          if (!variantSelected(*c.options, variant)) continue;
          const bool wholeUnit = !streamOrdered && c.unitWaits[run];
          // Shared with the enqueue function, which an interleaved timing keeps until the M's end.
          const auto mlp = std::make_shared<FusedMlpChain<Policy>>(*kernel, m, c.shape.hidden, prepared.intermediate,
                                                                   split, orders, slots, streamOrdered);
          mlp->setWaitForWholeUnit(wholeUnit);
          const std::string config =
              kernel->name + padding + split.label() + orders.label() + (wholeUnit ? "_ww" : "");
          const Measurement measured = checkThenTime(
              [mlp, operands = prepared.operands](cudaStream_t s) { mlp->enqueue(operands, s); },
              {prepared.intermediateBuffer}, *c.checked.output, *c.checked.reference, c.device->stream(), *c.options,
              results.deferred());
          const bool correct = results.record(Result{m, config, variant, 0, 0, false,
                                                     double(mlp->first().workUnitsPerLaunch()) / slots,
                                                     double(mlp->second().workUnitsPerLaunch()) / slots, 0},
                                              measured, "");
          if (c.traceFile != nullptr && !c.options->checkOnly) {
            std::vector<float> launchMicroseconds;
            const auto traces = mlp->traceOnce(prepared.operands, c.device->stream(), &launchMicroseconds);
            for (std::size_t launch = 0; launch < traces.size(); ++launch)
              for (const ChainUnitTrace& t : traces[launch])
                std::fprintf(c.traceFile, "%d,%s,%s,%zu,%u,%u,%u,%u,%u,%u,%llu,%llu,%llu,%llu,%llu,%llu,%.2f\n", m,
                             config.c_str(), variant.c_str(), launch, t.stage, t.x, t.y, t.part, t.block, t.sm,
                             (unsigned long long)t.drawn, (unsigned long long)t.mathStart,
                             (unsigned long long)t.mmaDone, (unsigned long long)t.done,
                             (unsigned long long)t.mmaCycles, (unsigned long long)t.blockEntered,
                             launchMicroseconds[launch]);
          }
          if (c.options->verbose || !correct)
            std::printf("%sM=%d %s %s: %.1f us, relative error %.3g, %llu non-finite\n", correct ? "" : "FAILED: ", m,
                        config.c_str(), variant.c_str(), measured.microseconds, measured.check.relativeError,
                        measured.check.nonFinite);
        }
      }
  }
}

// The launch-per-GEMM GEMV chain's experiment axes, each a list whose entries multiply the variants.
struct GemvVariantAxes {
  std::vector<std::uint32_t> l2Prefetches{0};  // --gemv-l2-prefetch: bytes of each GEMM-2 weight row
  std::vector<PartOrder> secondPartOrders{PartOrder::PartsOfATileTogether};  // --gemv-second-order
};

// One skinny chain path (skinny_mlp.cuh), M <= its token limit: every split, synchronized, stream-ordered and, for
// the launch-per-GEMM path, the PDL grid-sync baseline; `operands` hold LLaMA's gate/up rows paired per 16 when
// `paired`.
template <class Chain>
void runSkinnyVariants(const FusedRunContext& c, const MlpOperands& operands, DeviceBuffer<__half>* intermediate,
                       bool paired, const std::vector<FusedSplit>& splits, const GemvVariantAxes& gemv,
                       MlpResults& results) {
  if (c.m > Chain::kMaxTokens || !configSelected(*c.options, Chain::configName())) return;
  // GEMM 2's L2 prefetch of its weights and its part order: the launch-per-GEMM path's axes only.
  const bool launchPerGemm = Chain::kPath == SkinnyPath::GemvPdl;  // the axes are the block-per-unit GEMV's
  const std::vector<std::uint32_t> prefetchList = launchPerGemm ? gemv.l2Prefetches : std::vector<std::uint32_t>{0};
  const std::vector<PartOrder> orderList =
      launchPerGemm ? gemv.secondPartOrders : std::vector<PartOrder>{PartOrder::PartsOfATileTogether};
  for (const PartOrder secondOrder : orderList)
  for (const std::uint32_t prefetch : prefetchList)
  for (const FusedSplit& split : splits) {
    // The order of an unsplit GEMM 2's blocks has nothing to choose between.
    if (secondOrder != PartOrder::PartsOfATileTogether && split.secondParts <= 1) continue;
    const std::string why = Chain::whyNot(c.m, c.shape.hidden, c.shape.intermediate, paired, split);
    if (!why.empty()) {
      std::printf("M=%d %s%s: not run: %s\n", c.m, Chain::configName().c_str(), split.label().c_str(), why.c_str());
      continue;
    }
    // Synchronized, stream-ordered and, for the launch-per-GEMM path, the PDL grid-sync baseline.
    for (int ordering = 0; ordering < (Chain::kLaunchPerGemm ? 3 : 2); ++ordering) {
      const std::string variant = ordering == 0 ? "Fused" : ordering == 1 ? "Fused-StreamSync" : "PDL-GridSync";
      if (!variantSelected(*c.options, variant)) continue;
      // The whole-rows GEMV synchronized is the whole-grid wait (its unsplit GEMM 2 reads every GEMM-1 output):
      // reported as Fused, what the PyTorch op runs and cusync-tune reads; PDL-GridSync would repeat it.
      if (Chain::kRows && ordering == 2) continue;
      const bool streamOrdered = ordering != 0;
      // Only the tile-synchronized chain can start a GEMM-2 block before GEMM 1 ends.
      if (secondOrder != PartOrder::PartsOfATileTogether && streamOrdered) continue;
      // Shared with the enqueue function, which an interleaved timing keeps until the M's end.
      const auto chain = std::make_shared<Chain>(c.m, c.shape.hidden, c.shape.intermediate, paired, split,
                                                 c.device->smCount(), streamOrdered);
      chain->setPdlGridSync(ordering == 2);
      chain->setConsumerL2Prefetch(prefetch);
      chain->setSecondPartOrder(secondOrder);
      chain->packWeights(operands, c.device->stream());  // the packed-weights path's copies of W1 and W2
      const std::string config = Chain::configName() + split.label() +
                                 (prefetch ? "_l2pf" + std::to_string(prefetch) : std::string()) +
                                 (secondOrder == PartOrder::KRangesInTurn ? "_kr" : "");
      const Measurement measured = checkThenTime([chain, operands](cudaStream_t s) { chain->enqueue(operands, s); },
                                                 {intermediate}, *c.checked.output, *c.checked.reference,
                                                 c.device->stream(), *c.options, results.deferred());
      const double slots = double(c.device->smCount()) * chain->occupancy();
      const bool correct = results.record(Result{c.m, config, variant, 0, 0, false, chain->blocksOfStage(0) / slots,
                                                 chain->blocksOfStage(1) / slots, 0},
                                          measured, "");
      if constexpr (Chain::kLaunchPerGemm)
        if (c.blockTraceFile != nullptr && correct && !c.options->checkOnly)
          writeTwoStageBlockTrace(
              *chain, [&](cudaStream_t stream) { chain->enqueue(operands, stream); }, variant, config,
              c.blockTraceFile, c.device->stream());
      if (c.options->verbose || !correct)
        std::printf("%sM=%d %s %s: %.1f us, relative error %.3g, %llu non-finite\n", correct ? "" : "FAILED: ", c.m,
                    config.c_str(), variant.c_str(), measured.microseconds, measured.check.relativeError,
                    measured.check.nonFinite);
    }
  }
}

template <class Policy>
void runSkinnyChains(const FusedRunContext& c, const MlpOperands& operands, DeviceBuffer<__half>* intermediate,
                     bool paired, const std::vector<FusedSplit>& splits, const GemvVariantAxes& gemv,
                     MlpResults& results) {
  forEachSkinnyPath<Policy>([&](auto chain) {
    runSkinnyVariants<typename decltype(chain)::type>(c, operands, intermediate, paired, splits, gemv, results);
  });
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // progress survives a kill by timeout
  std::string tracePath, blockTracePath;
  bool interleave = false;
  std::string model = "gpt3";
  std::vector<bool> unitWaits{false, true};
  std::vector<FusedSplit> splits;
  std::vector<FusedSplit> skinnySplits;
  GemvVariantAxes gemvAxes;
  const MlpProgram description{
      "mlp_fused_example", "The GPT-3 (or LLaMA) MLP as one persistent launch (the fused chain) against cuBLASLt and "
                           "the same kernel stream-ordered.",
      "mlp_fused.csv",
      "  --model gpt3|llama  which MLP: GPT-3's GELU MLP (default) or LLaMA-65B's SwiGLU MLP\n"
      "  --trace FILE        record every work unit of one more run per variant into FILE (CSV)\n" +
          std::string(kInterleaveUsage) +
          "  --unit-wait LIST    how GEMM 2's units wait, of kblock (k-block by k-block) and whole (for their whole\n"
      "                      k-range before loading A; configuration suffix _ww); default kblock,whole\n"
      "  --splits LIST       these split-Ks instead of the candidates fused_split.h derives, each none or AxB\n"
      "                      (GEMM 1 x GEMM 2 parts; configuration suffix _skAxB)\n"
      "  --skinny-splits LIST the split-Ks of the skinny chain (M <= 8; configurations skinny_32_r*, gemv_32_*), AxB;\n"
      "                      default 1x1,1x4,4x4,8x4 (GPT-3) and 1x1,1x2,2x2,4x4 (LLaMA)\n"
      "  --block-trace FILE  record every block of one more run of each gemv_32_p* variant into FILE (CSV, as\n"
      "                      attention_example --trace; bench/attention/summarize_block_trace.py summarizes it)\n"
      "  --gemv-l2-prefetch LIST bytes of each weight row GEMM 2's blocks of gemv_32_p* ask L2 to prefetch before they\n"
      "                      wait (multiples of 16; configuration suffix _l2pfN); default 0\n"
      "  --gemv-second-order LIST the order of a split GEMM 2's blocks in gemv_32_p*'s tile-synchronized chain, of\n"
      "                      tiles (a tile's k-ranges together, default) and kranges (every tile's first k-range\n"
      "                      first; configuration suffix _kr)\n",
      false,
      {"cuBLAS", "CUTLASS", "Fused", "Fused-StreamSync", "PDL-GridSync"}};
  // A list of split-Ks as --splits and --skinny-splits take it: none or AxB per word; anything else exits 2.
  const auto splitList = [&](const std::string& argument, const std::string& text) {
    std::vector<FusedSplit> list;
    for (const std::string& word : wordListArgument(description.name, argument, text)) {
      const std::optional<FusedSplit> split = parseFusedSplit(word);
      if (!split)
        exitWithUsageError(description.name,
                           argument + " takes none or AxB with parts from 1 to 999, not '" + word + "'");
      list.push_back(*split);
    }
    return list;
  };
  MlpOptions options = parseMlpOptions(argc, argv, description,
                                       [&](const std::string& argument, const ArgumentValue& value) {
                                         if (argument == "--trace") {
                                           tracePath = value();
                                           return true;
                                         }
                                         if (argument == "--block-trace") {
                                           blockTracePath = value();
                                           return true;
                                         }
                                         if (argument == "--interleave") {
                                           interleave = true;
                                           return true;
                                         }
                                         if (argument == "--unit-wait") {
                                           unitWaits.clear();
                                           for (const std::string& wait :
                                                wordListArgument(description.name, argument, value())) {
                                             if (wait != "kblock" && wait != "whole")
                                               exitWithUsageError(description.name,
                                                                  "--unit-wait takes kblock or whole, not '" + wait +
                                                                      "'");
                                             unitWaits.push_back(wait == "whole");
                                           }
                                           return true;
                                         }
                                         if (argument == "--skinny-splits") {
                                           const std::vector<FusedSplit> words = splitList(argument, value());
                                           skinnySplits.insert(skinnySplits.end(), words.begin(), words.end());
                                           return true;
                                         }
                                         if (argument == "--gemv-l2-prefetch") {
                                           gemvAxes.l2Prefetches.clear();
                                           for (const std::string& word :
                                                wordListArgument(description.name, argument, value())) {
                                             char* end = nullptr;
                                             const unsigned long bytes = std::strtoul(word.c_str(), &end, 10);
                                             if (word.empty() || *end != '\0' || bytes % 16 != 0 || bytes > (1ul << 24))
                                               exitWithUsageError(description.name,
                                                                  "--gemv-l2-prefetch takes multiples of 16 up to "
                                                                  "2^24, not '" + word + "'");
                                             gemvAxes.l2Prefetches.push_back(std::uint32_t(bytes));
                                           }
                                           return true;
                                         }
                                         if (argument == "--gemv-second-order") {
                                           gemvAxes.secondPartOrders.clear();
                                           for (const std::string& word :
                                                wordListArgument(description.name, argument, value())) {
                                             if (word != "tiles" && word != "kranges")
                                               exitWithUsageError(description.name,
                                                                  "--gemv-second-order takes tiles or kranges, not '" +
                                                                      word + "'");
                                             gemvAxes.secondPartOrders.push_back(
                                                 word == "tiles" ? PartOrder::PartsOfATileTogether
                                                                 : PartOrder::KRangesInTurn);
                                           }
                                           return true;
                                         }
                                         if (argument == "--splits") {
                                           splits = splitList(argument, value());
                                           return true;
                                         }
                                         if (argument == "--model") {
                                           model = value();
                                           if (model != "gpt3" && model != "llama") {
                                             std::fprintf(stderr,
                                                          "mlp_fused_example: --model takes gpt3 or llama, not '%s'\n",
                                                          model.c_str());
                                             std::exit(2);
                                           }
                                           return true;
                                         }
                                         return false;
                                       });
  const bool llama = model == "llama";
  if (skinnySplits.empty())
    skinnySplits = llama ? std::vector<FusedSplit>{{1, 1}, {1, 2}, {2, 2}, {4, 4}}
                         : std::vector<FusedSplit>{{1, 1}, {1, 4}, {4, 4}, {8, 4}};
  const MlpShape shape = llama ? kLlamaShape : kGpt3Shape;
  std::FILE* blockTraceFile = openTraceCsv(blockTracePath, kBlockTraceCsvHeader, options.program);
  std::FILE* traceFile = openTraceCsv(tracePath,
                                      "M,config,variant,launch,stage,x,y,part,block,sm,drawn,math_start,mma_done,done,"
                                      "mma_cycles,block_entered,launch_us",
                                      options.program);
  // This program's default orders: every winner of session 3 on the H100 used one of them (docs/BENCHMARKS.md).
  if (options.orders == std::vector<std::string>{"row", "g8"}) options.orders = {"g8", "g4", "g4:g8"};
  const std::vector<TileOrders> tileOrders = TileOrders::parseList(options.orders, options.program);
  const std::optional<cudaDeviceProp> properties = firstCudaDevice(options.program);
  if (!properties) return kNoCudaDevice;
  const auto geluKernels = selectedKernels<FusedMlpPolicy>(options);
  const auto swiGluKernels = selectedKernels<SwiGluMlpPolicy>(options);
  bool skinnySelected = false;
  int mostSkinnyTokens = 0;  // the most tokens a skinny chain takes (the packed GEMV's 16)
  forEachSkinnyPath<cusync::generated::gpt3_mlp_skinny::Dep_dep_g1_TileSync>([&](auto chain) {
    skinnySelected = skinnySelected || configSelected(options, decltype(chain)::type::configName());
    mostSkinnyTokens = std::max(mostSkinnyTokens, decltype(chain)::type::kMaxTokens);
  });
  if ((llama ? swiGluKernels.empty() : geluKernels.empty()) && !skinnySelected) {
    std::fprintf(stderr, "mlp_fused_example: no fused-chain configuration registered/selected for %s\n",
                 model.c_str());
    return 1;
  }
  const MlpDevice device(*properties);
  const cudaStream_t stream = device.stream();

  const std::uint64_t seed = options.seedOrClock();
  std::printf("%s; model %s (H %d, intermediate %d); seed %llu; fused configs:", device.line().c_str(), shape.model,
              shape.hidden, shape.intermediate, static_cast<unsigned long long>(seed));
  if (llama)
    for (const auto* k : swiGluKernels) std::printf(" %s (%d/SM)", k->name.c_str(), k->maxActiveBlocksPerSm());
  else
    for (const auto* k : geluKernels) std::printf(" %s (%d/SM)", k->name.c_str(), k->maxActiveBlocksPerSm());
  std::printf("\n");
  const Ceilings ceilings = device.measureCeilings(options);

  MlpResults results(options);
  if (interleave) results.interleaveTimings();
  for (int m : options.ms) {
    FusedRunContext context{m,        shape,          {},        {},       &device, &tileOrders,
                            &options, traceFile, blockTraceFile, unitWaits, splits};
    const Result cublasRow{m, "cuBLASLt", "cuBLAS", 0, 0, false, 0, 0, 0};
    if (!llama) {
      GeluMlpBuffers buffers(m, shape.hidden, shape.intermediate);
      prepareGeluMlpReference(buffers, m, shape.hidden, shape.intermediate, seed, device.referenceGemm(options),
                              stream);
      // Baseline: cuBLASLt back to back, its GELU fused in the first GEMM's epilogue.
      if (variantSelected(options, "cuBLAS"))
        results.record(cublasRow,
                       measureCublasGeluMlp(device.lt(), device.workspace(), device.workspaceBytes(), buffers, m,
                                            shape.hidden, shape.intermediate, stream, options, results.deferred()),
                       "cuBLAS baseline");
      context.operands = {buffers.x.get(), buffers.w1.get(), buffers.xw1.get(), buffers.w2.get(), buffers.y.get()};
      context.checked = {{&buffers.xw1}, &buffers.y, &buffers.yReference};
      // Reference rates: CUTLASS's stock persistent GEMMs back to back (GELU in GEMM 1's epilogue), unmodified, so
      // the summary can tell CUTLASS's own rate at a tile from what the hooks and the queue cost.
      for (const StockGemmEntry& stock : stockGemmRegistry()) {
        // --configs names the stock GEMMs to run too.
        if (!configSelected(options, stock.name) || !variantSelected(options, "CUTLASS")) continue;
        try {
          // A swapped configuration computes each layer transposed (StockGemmEntry::swapped).
          const bool swapped = stock.swapped;
          // Shared with the enqueue function, which an interleaved timing keeps until the M's end.
          std::shared_ptr<StockGemm> gemm1 = swapped ? stock.make(shape.intermediate, m, shape.hidden, Activation::Gelu)
                                          : stock.make(m, shape.intermediate, shape.hidden, Activation::Gelu);
          std::shared_ptr<StockGemm> gemm2 = swapped ? stock.make(shape.hidden, m, shape.intermediate, Activation::Identity)
                                          : stock.make(m, shape.hidden, shape.intermediate, Activation::Identity);
          results.runBaseline(
              [gemm1, gemm2, swapped, &buffers](cudaStream_t s) {
                if (swapped) {
                  gemm1->run(buffers.w1.get(), buffers.x.get(), buffers.xw1.get(), s);
                  gemm2->run(buffers.w2.get(), buffers.xw1.get(), buffers.y.get(), s);
                } else {
                  gemm1->run(buffers.x.get(), buffers.w1.get(), buffers.xw1.get(), s);
                  gemm2->run(buffers.xw1.get(), buffers.w2.get(), buffers.y.get(), s);
                }
              },
              context.checked, m, stock.name, "CUTLASS", stock.name + " stream-ordered", stream);
        } catch (const cusync::Error& e) {
          std::printf("M=%d %s: not run: %s\n", m, stock.name.c_str(), e.what());
        }
      }
      runFusedVariants(
          geluKernels, context,
          [&](const FusedChainEntry&) { return KernelOperands{shape.intermediate, context.operands, &buffers.xw1}; },
          results);
      runSkinnyChains<cusync::generated::gpt3_mlp_skinny::Dep_dep_g1_TileSync>(
          context, context.operands, &buffers.xw1, false, skinnySplits, gemvAxes, results);
      results.timeDeferred(stream);  // --interleave: while the buffers live
    } else {
      SwiGluMlpBuffers buffers(m, shape.hidden, shape.intermediate);
      prepareSwiGluMlpReference(buffers, m, shape.hidden, shape.intermediate, seed, device.referenceGemm(options),
                                stream);
      // Baseline: cuBLASLt GEMM over [gate | up], a vectorized SwiGLU kernel, cuBLASLt GEMM.
      if (variantSelected(options, "cuBLAS"))
        results.record(cublasRow,
                       measureCublasSwiGluMlp(device.lt(), device.workspace(), device.workspaceBytes(), buffers, m,
                                              shape.hidden, shape.intermediate, device.smCount(), stream, options,
                                              results.deferred()),
                       "cuBLAS baseline");
      // W1 per kernel: its tile width's paired copy (pairedFor below).
      context.operands = {buffers.x.get(), nullptr, buffers.s.get(), buffers.w2.get(), buffers.y.get()};
      context.checked = {{&buffers.s}, &buffers.y, &buffers.yReference};
      // Tiles whose half does not divide the intermediate size run on zero-padded copies (swiglu_weight_pairing.h),
      // made once per padded size; the output is checked against the same unpadded reference.
      struct PaddedOperands {
        PaddedOperands(int m, int hidden, int intermediate)
            : w2(std::size_t(hidden) * intermediate), s(std::size_t(m) * intermediate) {}
        DeviceBuffer<__half> w2, s;
      };
      std::map<int, std::unique_ptr<PaddedOperands>> padded;
      // [gate | up] paired once per (intermediate size, tile width), kept for the whole M: an interleaved timing
      // (--interleave) replays kernels of different tile widths after all of them were prepared, so they cannot
      // share one paired copy re-paired per kernel.
      std::map<std::pair<int, int>, std::unique_ptr<DeviceBuffer<__half>>> pairedWeights;
      const auto pairedFor = [&](int intermediate, int tileColumns) {
        std::unique_ptr<DeviceBuffer<__half>>& paired = pairedWeights[{intermediate, tileColumns}];
        if (!paired) {
          paired = std::make_unique<DeviceBuffer<__half>>(std::size_t(2) * intermediate * shape.hidden);
          pairGateUpRowsPadded(buffers.gateUp.get(), paired->get(), shape.intermediate, intermediate, shape.hidden,
                               tileColumns, stream);
          CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
        }
        return paired->get();
      };
      const auto pairWeights = [&](const SwiGluChainEntry& kernel) {
        const int intermediate = pairedIntermediate(shape.intermediate, kernel.tile.n);
        KernelOperands prepared{intermediate, context.operands, &buffers.s};
        prepared.operands.w1 = pairedFor(intermediate, kernel.tile.n);
        if (intermediate != shape.intermediate) {
          std::unique_ptr<PaddedOperands>& p = padded[intermediate];
          if (!p) {
            p = std::make_unique<PaddedOperands>(m, shape.hidden, intermediate);
            padWeightColumns(buffers.w2.get(), p->w2.get(), shape.hidden, shape.intermediate, intermediate, stream);
            CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
          }
          prepared.operands = {buffers.x.get(), prepared.operands.w1, p->s.get(), p->w2.get(), buffers.y.get()};
          prepared.intermediateBuffer = &p->s;
        }
        return prepared;
      };
      runFusedVariants(swiGluKernels, context, pairWeights, results);
      if (m <= mostSkinnyTokens) {  // the skinny chains' paired layout: gate and up rows paired per 16
        MlpOperands skinnyOperands = context.operands;
        skinnyOperands.w1 = pairedFor(shape.intermediate, 32);
        runSkinnyChains<cusync::generated::llama_mlp_skinny::Dep_dep_g1_TileSync>(
            context, skinnyOperands, &buffers.s, true, skinnySplits, gemvAxes, results);
      }
      results.timeDeferred(stream);  // --interleave: while the buffers live
    }
    results.finishM(m);
  }
  // The floor per M, in the CSV too (variant "floor"), so that the summary beside the torch baselines has it.
  auto floorUs = [&](int m) {
    const double gemm1Columns = double(shape.gemm1ColumnsPerIntermediate) * shape.intermediate;
    const double flops = 2.0 * m * double(shape.hidden) * (gemm1Columns + shape.intermediate);
    // Both weights once, X read and Y written, the intermediate written and read.
    const double bytes = 2.0 * (double(shape.hidden) * (gemm1Columns + shape.intermediate) +
                                double(m) * shape.hidden * 2 + 2.0 * m * shape.intermediate);
    return options.checkOnly ? 0 : floorMicroseconds(flops, bytes, ceilings);
  };
  for (int m : options.ms) results.add({m, "floor", "floor", floorUs(m), 0, true, 0, 0, 0});
  if (traceFile != nullptr) std::fclose(traceFile);
  if (blockTraceFile != nullptr) std::fclose(blockTraceFile);
  results.writeCsv();
  printFusedSummary(results.rows(), options.ms, floorUs);
  return results.finish();
}
