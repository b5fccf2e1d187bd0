// conv2d_chain_example: chains of dependent convolutions (conv_models.h: the cuSync paper's Table II layers of
// ResNet-38 and VGG-19, ResNet's bottleneck and stride-2 blocks) on the hooked CUTLASS sm90 implicit-GEMM
// convolutions and, as a baseline, CUTLASS's stock sm90 convolution of the same tile configurations, batch 1..32,
// every built tile configuration, each variant of conv_variants.h. Every chain is checked against direct
// convolutions (fresh random inputs; every stage's output poisoned with NaN first, so a tile read before it was
// written fails), then timed with CUDA graphs (median of the replays) and its outputs checked again; with
// --interleave, every chain of a layer and batch is checked first, then they are timed together in interleaved
// rounds and each is checked again from its own graph's replay (timeInterleaved).
// CSV with --csv, a row per result as it finishes (bench/conv2d/summarize_conv.py reads it); a table last: per
// layer and batch, each variant's best configuration. Exit 0 when every check passed, 1 otherwise, 2 for a bad
// command line, 77 without an sm_90 GPU.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/ceilings.cuh"
#include "common/checked_interleaved_timings.h"
#include "common/cublas_gemm.cuh"
#include "common/device_buffers.cuh"
#include "common/graph_timer.cuh"
#include "common/no_cuda_device.h"
#include "conv_chain.cuh"
#include "conv_options.h"

using namespace cusync;
using namespace cusync::examples;

namespace {

// fp16 activations and outputs, fp32 accumulation over K = 9*C = 576..4608, up to four layers deep.
constexpr double kRelativeErrorBound = 2e-2;

struct Result {
  const ConvChainSpec* chain;  // an element of ConvOptions::chains
  int batch;
  std::string config, variant;
  double relativeError = 0;         // the largest of the stages'
  unsigned long long nonFinite = 0;  // over every stage
  double microseconds = 0;          // 0: not timed
  std::string skipped;              // why the chain was not run, or empty
  std::string notApplicable;        // a W variant whose blocks do not all fit at once: not run, not failed
  std::vector<std::uint32_t> tiles; // per stage
  int blocksPerSm = 0, multiprocessors = 0;
  double flops = 0, bytes = 0, floorMicroseconds = 0;
  // A chain the kernel refuses fails too: every layer of this example is meant to run.
  bool passed() const {
    return !notApplicable.empty() || (skipped.empty() && nonFinite == 0 && relativeError <= kRelativeErrorBound);
  }
  double waves(std::size_t s) const { return double(tiles[s]) / (double(multiprocessors) * blocksPerSm); }
};

// Multiply-adds times two, and the fp16 bytes a chain must move at least once: the input, every filter and bias,
// every stage's output written, and each stage's input read (its producer's output, once per reader).
void countWork(const ConvChainSpec& spec, int batch, Result& r) {
  double elements = double(batch) * spec.stages.front().height * spec.stages.front().width *
                    spec.stages.front().inChannels;
  for (const ConvStageSpec& s : spec.stages) {
    const double outputs = double(batch) * s.outHeight() * s.outWidth() * s.outChannels;
    r.flops += 2.0 * outputs * s.filter * s.filter * s.inChannels;
    elements += double(s.outChannels) * s.filter * s.filter * s.inChannels + s.outChannels + outputs;
    if (s.producer >= 0) elements += double(batch) * s.height * s.width * s.inChannels;
  }
  r.bytes = 2.0 * elements;
}

// Every stage's output against its reference: the largest relative error, and the non-finite elements of all.
Comparison compareStages(const ConvChainBuffers& buffers) {
  Comparison all{0, 0};
  for (std::size_t s = 0; s < buffers.stageCount(); ++s) {
    const Comparison c = compareToReference(buffers.stage(s).output, buffers.stage(s).reference);
    all.relativeError = std::max(all.relativeError, c.relativeError);
    all.nonFinite += c.nonFinite;
  }
  return all;
}

void record(const Comparison& check, Result& r) {
  r.relativeError = check.relativeError;
  r.nonFinite = check.nonFinite;
}

// Checks one chain, then, unless --check-only or it failed or does not apply, times it: alone with CUDA graphs and
// checked again after the last replay, or, with `interleaved` (--interleave), later, together with the layer and
// batch's other chains (timeInterleaved), under `id`. `interleaved` then keeps the chain until it is destroyed.
Result runChain(const ConvChainSpec& spec, const ConvKernelEntry& kernel, ConvVariant variant,
                ConvChainBuffers& buffers, cudaStream_t stream, const ConvOptions& options,
                const std::vector<std::uint32_t>& parts, std::uint32_t slots, bool hardwareOrder, bool sumParts,
                CheckedInterleavedTimings* interleaved, std::size_t id) {
  Result r{&spec, buffers.batch(),
           convConfigOf(kernel) + convSplitLabel(parts) + (sumParts ? "_sum" : "") + (hardwareOrder ? "" : "_ticket"),
           convVariantName(variant)};
  // On the heap: the executor holds its stages' addresses, and an interleaved timing keeps the chain.
  const auto chain = std::make_shared<const ConvChain>(kernel, variant, buffers, parts, slots, hardwareOrder, sumParts);
  // Work units per stage (tiles x parts): what fills the waves.
  for (std::size_t s = 0; s < buffers.stageCount(); ++s)
    r.tiles.push_back(chain->grid(s).tileCount() * (parts.empty() ? 1u : parts[s]));
  r.blocksPerSm = kernel.blocksPerSm();
  r.notApplicable = chain->notApplicable();
  if (!r.notApplicable.empty()) return r;
  r.skipped = chain->whyNotImplementable();
  if (!r.skipped.empty()) return r;
  buffers.poisonOutputs(stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  chain->enqueue(stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  CUSYNC_CUDA_CHECK(cudaGetLastError());
  record(compareStages(buffers), r);
  if (options.checkOnly || !r.passed()) return r;
  const auto enqueue = [&chain = *chain](cudaStream_t s) { chain.enqueue(s); };
  if (interleaved != nullptr) {
    const CheckAfterReplay check{[&buffers](cudaStream_t s) { buffers.poisonOutputs(s); },
                                 [&buffers] { return compareStages(buffers); }};
    interleaved->add(id, enqueue, check, chain);
    return r;
  }
  buffers.poisonOutputs(stream);
  r.microseconds =
      timeWithGraph(enqueue, stream, options.repetitions, 3, options.samples, options.warmupMilliseconds)
          .medianMicroseconds;
  record(compareStages(buffers), r);  // after every replay: a late race fails too
  return r;
}

// --interleave: every chain of a layer and batch that `timings` holds (the checked ones that apply), timed together
// and checked again from its own graph's replay (CheckedInterleavedTimings); their rows in `results` get the time
// and the comparison after the replay, which decides whether they passed, as the comparison after the last replay
// does for a chain timed alone.
void timeInterleaved(CheckedInterleavedTimings& timings, const ConvOptions& options, std::vector<Result>& results) {
  if (timings.size() == 0) return;
  std::printf("timing %zu chains together: %d ms of warm-up over all, then %d interleaved rounds\n", timings.size(),
              options.warmupMilliseconds, options.samples);
  for (const CheckedTiming& t : timings.timeAndCheck(options.warmupMilliseconds, options.samples)) {
    Result& r = results[t.id];
    r.microseconds = t.timing.medianMicroseconds;
    record(t.after, r);
  }
}

std::string joined(const Result& r, bool waves) {
  std::string text;
  char cell[32];
  for (std::size_t s = 0; s < r.tiles.size(); ++s) {
    if (waves) std::snprintf(cell, sizeof(cell), "%.2f", r.waves(s));
    else std::snprintf(cell, sizeof(cell), "%u", r.tiles[s]);
    text += (s ? "+" : "") + std::string(cell);
  }
  return text;
}

// One result's line: its check, why it did not run, its waves and, once timed, its time.
void printResult(const Result& r) {
  std::printf("%-10s %-10s B=%-2d %-16s %-13s %s", r.chain->model.c_str(), r.chain->label().c_str(), r.batch,
              r.config.c_str(), r.variant.c_str(), r.passed() ? "ok" : "FAILED");
  if (!r.notApplicable.empty()) std::printf(" (n/a: %s)", r.notApplicable.c_str());
  else if (!r.skipped.empty()) std::printf(" (refused: %s)", r.skipped.c_str());
  else std::printf(" err %.2e nonfinite %llu waves %s", r.relativeError, r.nonFinite, joined(r, true).c_str());
  if (r.microseconds > 0) std::printf(" %.1f us", r.microseconds);
  std::printf("\n");
  std::fflush(stdout);
}

// The CSV, one row per result as it comes (--interleave: a layer and batch's rows once they are timed), flushed: a
// run stopped by a time limit (device calls have one) leaves every row it finished. Only the last layer and batch
// may then lack configurations or variants (summarize_conv.py --partial leaves that group out).
class CsvRows {
 public:
  CsvRows(const std::string& path, const Ceilings& ceilings) : csv_(path), ceilings_(ceilings) {
    if (!csv_) throw Error("cannot write " + path);
    csv_ << "model,layer,size,channels,stages,batch,config,variant,passed,skipped,max_rel_err,nonfinite,median_us,"
            "tiles,waves,blocks_per_sm,sms,flops,bytes,floor_us,gemm_tflops,read_gbs\n";
    csv_.flush();
  }

  void write(const Result& r) {
    std::string skipped = r.notApplicable.empty() ? r.skipped : "not applicable: " + r.notApplicable;
    for (char& c : skipped)
      if (c == '"' || c == ',') c = ';';
    csv_ << r.chain->model << "," << r.chain->label() << "," << r.chain->width << "," << r.chain->channels << ","
         << r.chain->stages.size() << "," << r.batch << "," << r.config << "," << r.variant << "," << r.passed()
         << ",\"" << skipped << "\"," << r.relativeError << "," << r.nonFinite << "," << r.microseconds << ","
         << joined(r, false) << "," << joined(r, true) << "," << r.blocksPerSm << "," << r.multiprocessors << ","
         << r.flops << "," << r.bytes << "," << r.floorMicroseconds << "," << ceilings_.tflops << ","
         << ceilings_.readGBs << "\n";
    csv_.flush();
  }

 private:
  std::ofstream csv_;
  Ceilings ceilings_;
};

// Per model, layer and batch: each variant's best time over the configurations (and which), its speed-up over the
// best StreamSync, and the floor.
bool printTable(const std::vector<Result>& results, const ConvOptions& options) {
  bool allPassed = true;
  for (const Result& r : results) allPassed = allPassed && r.passed();
  std::printf("\n%-11s %-10s %-2s %-3s %8s", "model", "layer", "N", "B", "floor");
  for (ConvVariant v : options.variants) std::printf(" %-27s", convVariantName(v).c_str());
  std::printf("\n");
  for (std::size_t i = 0; i < results.size();) {
    std::size_t end = i;
    while (end < results.size() && results[end].chain == results[i].chain && results[end].batch == results[i].batch)
      ++end;
    const Result& head = results[i];
    std::printf("%-11s %-10s %-2zu %-3d %8.1f", head.chain->model.c_str(), head.chain->label().c_str(),
                head.chain->stages.size(), head.batch, head.floorMicroseconds);
    auto best = [&](const std::string& variant) {
      const Result* b = nullptr;
      for (std::size_t j = i; j < end; ++j)
        if (results[j].variant == variant && results[j].passed() && results[j].microseconds > 0 &&
            (!b || results[j].microseconds < b->microseconds))
          b = &results[j];
      return b;
    };
    const Result* base = best("StreamSync");
    for (ConvVariant v : options.variants) {
      const std::string name = convVariantName(v);
      bool failed = false, refused = false, ok = false, inapplicable = false;
      for (std::size_t j = i; j < end; ++j)
        if (results[j].variant == name) {
          failed = failed || (results[j].skipped.empty() && !results[j].passed());
          refused = refused || !results[j].skipped.empty();
          inapplicable = inapplicable || !results[j].notApplicable.empty();
          ok = ok || (results[j].passed() && results[j].notApplicable.empty());
        }
      char cell[64];
      const Result* b = best(name);
      if (failed) std::snprintf(cell, sizeof(cell), "FAILED");
      else if (b && base) std::snprintf(cell, sizeof(cell), "%.1f %.2fx %s", b->microseconds,
                                        base->microseconds / b->microseconds, b->config.c_str());
      else if (b) std::snprintf(cell, sizeof(cell), "%.1f %s", b->microseconds, b->config.c_str());
      else if (ok) std::snprintf(cell, sizeof(cell), "ok");
      else if (inapplicable && !refused) std::snprintf(cell, sizeof(cell), "n/a");
      else std::snprintf(cell, sizeof(cell), refused ? "refused" : "-");
      std::printf(" %-27s", cell);
    }
    std::printf("\n");
    i = end;
  }
  std::printf("%s\n", allPassed ? "all checks passed" : "SOME CHECKS FAILED");
  return allPassed;
}

// The distinct parts-per-stage plans of the split targets asked for, on `config` (the hooked TileSync entry's tiles
// and occupancy; every policy of a configuration has the same): unsplit first when asked for, a target that splits
// nothing or repeats an earlier plan left out.
std::vector<std::vector<std::uint32_t>> splitPlans(const ConvChainBuffers& buffers, const std::string& config,
                                                   const ConvOptions& options, const cudaDeviceProp& properties) {
  const ConvKernelEntry& kernel = *findConvEntry(config, ConvPolicyKind::TileSync);
  const std::uint32_t slots = std::uint32_t(properties.multiProcessorCount * kernel.blocksPerSm());
  std::vector<std::vector<std::uint32_t>> plans;
  for (ConvSplitTarget target : options.splits) {
    const std::vector<std::uint32_t> parts = convSplitPlan(buffers, kernel, slots, target);
    if (target != ConvSplitTarget::None && convSplitLabel(parts).empty()) continue;
    bool seen = false;
    for (const auto& plan : plans) seen = seen || plan == parts;
    if (!seen) plans.push_back(parts);
  }
  if (plans.empty()) plans.push_back(std::vector<std::uint32_t>(buffers.stageCount(), 1u));  // nothing to split
  return plans;
}

}  // namespace

int main(int argc, char** argv) {
  const ConvOptions options = parseConvOptions(argc, argv);
  // The registry is filled at static initialization: the configurations are checked before any CUDA call.
  std::vector<std::string> configs = options.configs.empty() ? builtConvConfigs() : options.configs;
  for (const std::string& config : configs)
    if (!findConvEntry(config, ConvPolicyKind::TileSync) || !findConvEntry(config, ConvPolicyKind::RowSync) ||
        !findConvEntry(config, std::nullopt)) {
      std::string built;
      for (const std::string& c : builtConvConfigs()) built += " " + c;
      exitWithUsageError(kConvProgram, "--configs: '" + config + "' is not built (built:" + built + ")");
    }
  for (const ConvChainSpec& chain : options.chains)
    if (const std::string why = whyMalformed(chain); !why.empty()) throw Error("conv_models.h: " + why);

  if (missingCudaDevice(stderr, std::string(kConvProgram) + ": no GPU; skipped")) return kNoCudaDevice;
  cudaDeviceProp properties{};
  CUSYNC_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  if (properties.major != 9) {
    std::fprintf(stderr, "%s: the hooked convolutions need sm_90 (found sm_%d%d); skipped\n", kConvProgram,
                 properties.major, properties.minor);
    return 77;
  }

  cudaStream_t stream;
  CUSYNC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Ceilings ceilings;  // zero (no floor) unless measured
  if (!options.checkOnly && options.measureCeilings) {
    cublasLtHandle_t lt;
    checkCublas(cublasLtCreate(&lt), "Create");
    const std::size_t workspaceBytes = std::size_t(32) << 20;
    DeviceBuffer<char> workspace(workspaceBytes);
    ceilings = measureCeilings(lt, workspace.get(), workspaceBytes, stream);
    cublasLtDestroy(lt);
    std::printf("ceilings: %.0f TFLOP/s dense fp16 GEMM (cuBLASLt 8192^3), %.0f GB/s one-pass read\n",
                ceilings.tflops, ceilings.readGBs);
  }
  std::printf("%s, %d SMs, seed %lld\n", properties.name, properties.multiProcessorCount, options.seed);

  std::optional<CsvRows> csv;
  if (!options.csv.empty()) csv.emplace(options.csv, ceilings);
  std::vector<Result> results;
  std::uint64_t seed = std::uint64_t(options.seed) * 1000003u;
  for (const ConvChainSpec& chain : options.chains)
    for (int batch : options.batches) {
      ConvChainBuffers buffers(chain, batch, seed, stream);
      // --interleave: the layer and batch's chains, timed together once all are checked. Declared after the
      // buffers, so that the chains it keeps, and their graphs, go before them.
      std::optional<CheckedInterleavedTimings> interleaved;
      if (options.interleave && !options.checkOnly)
        interleaved.emplace(stream, options.repetitions, kRelativeErrorBound);
      const std::size_t problemBegin = results.size();
      for (const std::string& config : configs)
        for (const std::vector<std::uint32_t>& parts : splitPlans(buffers, config, options, properties))
          for (bool hardwareOrder : options.hardwareOrders)
          for (bool sumParts : options.splitSums)
          for (ConvVariant variant : options.variants) {
            const bool split = !convSplitLabel(parts).empty();
            if (split && cutlassStock(variant)) continue;  // CUTLASS's stock kernel runs unsplit only
            // An unsplit chain has no parts to sum: it runs once, with the first reduction listed.
            if (!split && sumParts != options.splitSums.front()) continue;
            // CUTLASS's stock kernel has its own order: it runs once, with the first tile order listed.
            if (cutlassStock(variant) && hardwareOrder != options.hardwareOrders.front()) continue;
            const ConvKernelEntry& kernel = *findConvEntry(config, convKernelPolicyOf(variant));
            const std::uint32_t slots = std::uint32_t(properties.multiProcessorCount * kernel.blocksPerSm());
            Result r = runChain(chain, kernel, variant, buffers, stream, options, parts, slots,
                                hardwareOrder || cutlassStock(variant), split && sumParts,
                                interleaved ? &*interleaved : nullptr, results.size());
            r.multiprocessors = properties.multiProcessorCount;
            countWork(chain, batch, r);
            r.floorMicroseconds = floorMicroseconds(r.flops, r.bytes, ceilings);
            printResult(r);
            if (csv && !interleaved) csv->write(r);
            results.push_back(r);
          }
      if (interleaved) {
        timeInterleaved(*interleaved, options, results);
        for (std::size_t i = problemBegin; i < results.size(); ++i) {
          printResult(results[i]);
          if (csv) csv->write(results[i]);
        }
      }
    }

  const bool allPassed = printTable(results, options);
  cudaStreamDestroy(stream);
  return allPassed ? 0 : 1;
}
