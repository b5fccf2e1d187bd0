// The attention block's prompt GEMMs one at a time, side by side: cuBLASLt, CUTLASS's stock sm90 kernels
// (examples/gemm/stock_gemm_registry.h: persistent, with clusters) and the attention chain's hooked GEMMs
// (examples/attention/attention_gemms.h) run unsynchronized. Why: the chain's QKV GEMM trails cuBLAS's by 9-63%
// (docs/BENCHMARKS.md, issue 14, session 13); a stock CUTLASS kernel of the same tile and cluster splits that gap
// into "the tile shape and schedule" (stock as slow as hooked) and "what the hooks cost" (stock faster).
//
//   gemm_shape_probe [--phase prompt|decode] [--m 512,2048] [--group-rows 1,8] [--splits] [--parts 3,11]
//                    [--units static,ticket] [--kernels a,b] [--shapes a,b] [--samples N] [--warmup-ms N]
//                    [--csv FILE]
//
// --phase: the chain's GEMM configurations of prompt processing (default) or of token generation (the hooked GEMV
// stages among them; give --m 1,4), split as that phase's chain splits them (decode: a tile's parts in k-range turns).
// --parts: also time each hooked GEMM with every tile split into each of these numbers of parts.
// --group-rows: the hooked GEMMs' tile orders to time, rows of tiles taken that many at a time, column by column
// (grouped_order.h; 1: row-major, the chain's order for the output GEMM). Kernels in clusters take their clusters
// so, each cluster's rows back to back.
// --splits: also time each hooked GEMM at every split-K choice the chain would try (attention_gemm_split.h: every
// tile split, or only the last wave's), named _sk<parts> or _sk<parts>w<whole tiles>. The chain splits; a probe
// that compares tile shapes unsplit misjudges them (session 15).
// --units: the persistent hooked GEMMs' unit schedules to time (StageView::staticUnits): static (default, the
// chain's), ticket (one atomic ticket per unit, as until session 16; named _ticket).
// --kernels: only the CUTLASS kernels (stock and hooked) whose names contain one of the words, e.g. streamk, so
// that a profiler's first launch of a kernel family is the one wanted (cuBLASLt always runs: it is the reference);
// --shapes: only the GEMMs whose names (gpt3_qkv_512, llama_out_2048, ...) contain one of the words.
//
// Each GEMM is D[M,N] = A[M,K] W^T (A row-major, W stored N x K, D row-major, fp16, fp32 accumulation), the QKV
// (N = 3H/8, K = H) and output (N = H, K = H/8) GEMMs of GPT-3 and LLaMA-65B under 8-way tensor parallelism. Inputs
// are fresh random; every kernel's D is poisoned, then compared with cuBLASLt's (relative error 1e-2, NaN fails)
// after the timing; timing is examples/common/interleaved_graph_timer.cuh's: each kernel a CUDA graph of 10 GEMMs,
// all of a shape's kernels replayed in interleaved rounds (3 warm-up rounds, continued for --warmup-ms, then --samples
// timed rounds), median. Until session 19 each kernel ran its burst after the previous ones, so later kernels ran on
// a hotter GPU. Floor: max(2MNK / GEMM rate, bytes / one-pass read bandwidth), both measured by examples/common/
// ceilings.cuh in this run. Exit status: 0 all correct, 1 a kernel wrong, 2 bad command line, 77 no GPU.
#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "attention_gemm_split.h"
#include "attention_gemms.h"
#include "common/ceilings.cuh"
#include "common/command_line_numbers.h"
#include "common/cublas_gemm.cuh"
#include "common/device_buffers.cuh"
#include "common/interleaved_graph_timer.cuh"
#include "common/no_cuda_device.h"
#include "cusync/packed_gemv_pack.cuh"
#include "cusync/stage.cuh"
#include "phase_argument.h"
#include "stock_gemm_registry.h"
#include "streamk_gemm.h"

namespace {
using namespace cusync;
using namespace cusync::examples;
using namespace cusync::examples::attention;

struct ProbeShape {
  std::string name;
  Model model;
  GemmRole role;
  int m, n, k;
};

struct Row {
  std::string shape, kernel;
  int m, n, k;
  double microseconds, floor;
  bool correct;
};

// The hooked GEMM's stage as a stream-ordered chain has it: no semaphores, its order (clusters paired), its split-K
// (the last wave's tiles only, or every tile), persistent blocks for a persistent kernel.
struct ProbeStage {
  std::unique_ptr<Stage> stage;
  std::unique_ptr<GemmSplit> split;
};
ProbeStage unsynchronizedStage(const AttentionGemm& gemm, int m, int n, int multiprocessors, std::uint32_t groupRows,
                               SplitChoice splitChoice, bool staticUnits, PartOrder partOrder) {
  auto stage = std::make_unique<Stage>("probe", gemm.tileGrid(m, n));
  if (gemm.clusterRows > 1)
    // Clusters of rows taken groupRows rows (groupRows / clusterRows clusters) at a time, column by column, as the
    // chain's --qkv-group-rows and --out-group-rows order them.
    stage->setClusterTileOrderBy(std::uint32_t(gemm.clusterRows),
                                 [groupClusters = std::max(1u, groupRows / std::uint32_t(gemm.clusterRows))](
                                     TileCoord cluster, GridShape clusters) {
                                   return groupedColumnMajorIndex(cluster, clusters, groupClusters);
                                 });
  else
    stage->setGroupedTileOrder(groupRows);
  auto split = std::make_unique<GemmSplit>(*stage, gemm.tile, splitChoice, partOrder);
  stage->setPersistentBlocks(persistentBlocksFor(gemm, stage->workUnitsPerLaunch(), multiprocessors));
  stage->useStaticUnits(staticUnits);
  return {std::move(stage), std::move(split)};
}

// _sk<parts> (every tile split) or _sk<parts>w<whole tiles> (only the tiles after the first <whole>); "" unsplit;
// _streamk<chunks>w<whole tiles>g<groups> for stream-K; _sum when the parts are summed in L2.
std::string splitSuffix(SplitChoice split) {
  if (split.isStreamK())
    return "_streamk" + std::to_string(split.streamKChunks) + "w" + std::to_string(split.wholeTiles) + "g" +
           std::to_string(split.streamKGroups);
  if (split.parts <= 1) return "";
  return "_sk" + std::to_string(split.parts) + (split.wholeTiles != 0 ? "w" + std::to_string(split.wholeTiles) : "") +
         (split.accumulate ? "_sum" : "");
}

constexpr const char* kProgram = "gemm_shape_probe";

int run(int argc, char** argv) {
  std::vector<int> ms{512, 2048};
  std::vector<int> groupRowsList{1};
  std::vector<bool> unitSchedules{true};  // static units
  bool withSplits = false;
  Phase phase = Phase::Prompt;
  std::vector<int> extraParts;
  // --kernels: only the CUTLASS kernels whose names contain one of these (cuBLASLt always runs: it is the
  // reference). So that a profiler's first launch of a kernel family is the one wanted.
  // --shapes: likewise, only the GEMMs whose names (gpt3_qkv_512, ...) contain one of these.
  std::vector<std::string> kernelFilter, shapeFilter;
  auto matches = [](const std::vector<std::string>& filter, const std::string& name) {
    if (filter.empty()) return true;
    for (const std::string& part : filter)
      if (name.find(part) != std::string::npos) return true;
    return false;
  };
  auto selected = [&](const std::string& name) { return matches(kernelFilter, name); };
  int samples = 15;
  int warmupMilliseconds = 0;  // interleaved warm-up rounds go on this long: the timed rounds start sustained
  std::string csvPath;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) exitWithUsageError(kProgram, arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--m") {
      ms = positiveIntListArgument(kProgram, arg, value());
    } else if (arg == "--phase") {
      phase = phaseArgument(kProgram, arg, value());
    } else if (arg == "--parts") {
      extraParts = positiveIntListArgument(kProgram, arg, value());
    } else if (arg == "--group-rows") {
      groupRowsList = positiveIntListArgument(kProgram, arg, value());
    } else if (arg == "--splits") {
      withSplits = true;
    } else if (arg == "--units") {
      unitSchedules = twoWordListArgument(kProgram, arg, value(), "unit schedule", "static", "ticket");
    } else if (arg == "--kernels") {
      kernelFilter = wordListArgument(kProgram, arg, value());
    } else if (arg == "--shapes") {
      shapeFilter = wordListArgument(kProgram, arg, value());
    } else if (arg == "--samples") {
      samples = positiveIntArgument(kProgram, arg, value());
    } else if (arg == "--warmup-ms") {
      warmupMilliseconds = warmupMillisecondsArgument(kProgram, arg, value());
    } else if (arg == "--csv") {
      csvPath = value();
    } else {
      exitWithUsageError(kProgram, "unknown argument '" + arg + "'; usage: gemm_shape_probe [--phase prompt|decode] "
                                   "[--m 512,2048] [--group-rows 1,8] [--splits] [--parts 3,11] "
                                   "[--units static,ticket] [--kernels a,b] "
                                   "[--shapes a,b] [--samples N] [--warmup-ms N] [--csv FILE]");
    }
  }
  std::ofstream csv;
  if (!csvPath.empty()) {
    csv.open(csvPath);
    if (!csv) {
      std::fprintf(stderr, "gemm_shape_probe: cannot write %s\n", csvPath.c_str());
      return 2;
    }
  }
  if (missingCudaDevice(stdout, "gemm_shape_probe: no GPU, skipped")) return kNoCudaDevice;
  cudaDeviceProp properties{};
  CUSYNC_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  const int sms = properties.multiProcessorCount;

  std::vector<ProbeShape> shapes;
  for (int m : ms) {
    shapes.push_back({"gpt3_qkv_" + std::to_string(m), Model::Gpt3, GemmRole::Qkv, m, 4608, 12288});
    shapes.push_back({"gpt3_out_" + std::to_string(m), Model::Gpt3, GemmRole::Output, m, 12288, 1536});
    shapes.push_back({"llama_qkv_" + std::to_string(m), Model::Llama, GemmRole::Qkv, m, 3072, 8192});
    shapes.push_back({"llama_out_" + std::to_string(m), Model::Llama, GemmRole::Output, m, 8192, 1024});
  }
  cublasLtHandle_t lt = nullptr;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) throw Error("gemm_shape_probe: cublasLtCreate failed");
  const std::size_t workspaceBytes = std::size_t(32) << 20;
  DeviceBuffer<unsigned char> workspace(workspaceBytes);
  cudaStream_t stream = nullptr;
  CUSYNC_CUDA_CHECK(cudaStreamCreate(&stream));
  const Ceilings ceilings = measureCeilings(lt, workspace.get(), workspaceBytes, stream);
  std::printf("device: %s, %d SMs; ceilings: GEMM %.0f TFLOP/s, one-pass read %.0f GB/s\n", properties.name, sms,
              ceilings.tflops, ceilings.readGBs);

  // The decode chain takes a tile's parts in k-range turns (attention_example's default); the prompt rows of this
  // probe have always run a tile's parts together.
  const PartOrder partOrder = phase == Phase::Decode ? PartOrder::KRangesInTurn : PartOrder::PartsOfATileTogether;
  std::vector<Row> rows;
  bool allCorrect = true;
  std::uint64_t seed = 1;
  for (const ProbeShape& s : shapes) {
    if (!matches(shapeFilter, s.name)) continue;
    DeviceBuffer<__half> a(std::size_t(s.m) * s.k), w(std::size_t(s.n) * s.k), d(std::size_t(s.m) * s.n),
        reference(std::size_t(s.m) * s.n);
    fillRandom(a, ++seed, 1.0f, stream);
    fillRandom(w, ++seed, 1.0f / std::sqrt(float(s.k)), stream);
    // The packed GEMV stage reads W packed at 16 rows (where the shape is whole 16-row blocks; else it refuses it).
    const bool packable = s.n % 16 == 0 && s.k % 8 == 0;
    DeviceBuffer<uint4> wPacked(packable ? packedGemvVectors(s.n, s.k, 16) : 1);
    if (packable) packGemvWeights(w.get(), wPacked.get(), s.n, s.k, 0, stream, 16);
    const double flops = 2.0 * s.m * s.n * double(s.k);
    const double bytes = 2.0 * (double(s.m) * s.k + double(s.n) * s.k + double(s.m) * s.n);
    const double floor = floorMicroseconds(flops, bytes, ceilings);
    CublasLtGemm cublas(lt, s.m, s.n, s.k, false, workspace.get(), workspaceBytes);
    cublas.run(a.get(), w.get(), reference.get(), stream);
    CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));

    // Each kernel is captured now and timed below with the shape's others; what its graph reads lives until then.
    InterleavedGraphTimer timer(stream, 10);
    std::vector<std::string> kernels;
    std::vector<std::unique_ptr<StockGemm>> stockGemms;
    std::unique_ptr<StreamKGemm> streamK;
    std::vector<ProbeStage> hookedStages;
    auto measure = [&](const std::string& kernel, const std::function<void(cudaStream_t)>& enqueue) {
      timer.add(enqueue);
      kernels.push_back(kernel);
    };
    measure("cuBLASLt", [&](cudaStream_t st) { cublas.run(a.get(), w.get(), d.get(), st); });
    for (const StockGemmEntry& entry : stockGemmRegistry()) {
      if (entry.swapped || !selected(entry.name)) continue;
      std::unique_ptr<StockGemm> gemm;
      try {
        gemm = entry.make(s.m, s.n, s.k, Activation::Identity);
      } catch (const Error& error) {
        std::printf("%s %s: %s\n", s.name.c_str(), entry.name.c_str(), error.what());
        continue;
      }
      measure(entry.name, [&](cudaStream_t st) { gemm->run(a.get(), w.get(), d.get(), st); });
      stockGemms.push_back(std::move(gemm));
    }
    if (selected("cutlass_128x128x64_streamk")) {
      // CUTLASS's own Stream-K (128x128 cooperative, 1x1): what the hooked persistent GEMM's stream-K should reach
      streamK = std::make_unique<StreamKGemm>(s.m, s.n, s.k, Activation::Identity);
      measure("cutlass_128x128x64_streamk", [&](cudaStream_t st) { streamK->run(a.get(), w.get(), d.get(), st); });
    }
    for (const AttentionGemm* gemm : findAttentionGemms(s.model, phase, s.role, TPolicyKind::TileSync)) {
      if (gemm->maxActiveBlocksPerSm() == 0) continue;
      // A whole-rows GEMV runs only as its tiles' column groups (splitCandidates' one choice).
      std::vector<SplitChoice> splits{SplitChoice{1, 0}};
      if (gemm->columnGroups > 1) splits = splitCandidates(*gemm, phase, s.m, s.n, s.k, sms);
      else if (withSplits)
        for (const SplitChoice& choice : splitCandidates(*gemm, phase, s.m, s.n, s.k, sms))
          if (choice.parts > 1 || choice.isStreamK()) splits.push_back(choice);
      for (int parts : extraParts) {
        const auto sameSplit = [&](const SplitChoice& c) {
          return c.parts == std::uint32_t(parts) && c.wholeTiles == 0 && !c.isStreamK() && !c.accumulate;
        };
        if (parts > 1 && gemm->columnGroups <= 1 && std::none_of(splits.begin(), splits.end(), sameSplit))
          splits.push_back(SplitChoice{std::uint32_t(parts), 0});
      }
      for (int groupRows : groupRowsList) {
        for (const SplitChoice& split : splits) {
          for (const bool staticUnits : unitSchedules) {
            // Only persistent GEMMs have a unit schedule: the others run once.
            if (!gemm->persistent && staticUnits != unitSchedules.front()) continue;
            if (gemm->lean && !staticUnits) continue;  // the lean persistent kernel takes static units only
            ProbeStage probe =
                unsynchronizedStage(*gemm, s.m, s.n, sms, std::uint32_t(groupRows), split, staticUnits, partOrder);
            const std::string name = "hooked_" + gemm->configuration +
                                     (groupRows > 1 ? "_g" + std::to_string(groupRows) : "") +
                                     splitSuffix(split) + (gemm->persistent && !staticUnits ? "_ticket" : "");
            if (!selected(name)) continue;
            GemmLaunchArgs args;
            args.m = s.m;
            args.n = s.n;
            args.k = s.k;
            args.a = a.get();
            args.b = gemm->packedWeights ? reinterpret_cast<const __half*>(wPacked.get()) : w.get();
            args.d = d.get();
            args.stage = probe.stage->view();
            args.stage.semaphores = nullptr;
            probe.split->applyTo(args);
            try {  // once outside the graph capture: a kernel that refuses the shape throws before it launches
              gemm->launch(args, stream);
            } catch (const Error& error) {
              std::printf("%s %s: %s\n", s.name.c_str(), name.c_str(), error.what());
              continue;
            }
            measure(name, [&](cudaStream_t st) { gemm->launch(args, st); });
            hookedStages.push_back(std::move(probe));
          }
        }
      }
    }

    const std::vector<GraphTiming> timings = timer.run(3, warmupMilliseconds, samples);
    for (std::size_t v = 0; v < kernels.size(); ++v) {
      poison(d, stream);
      timer.replay(v);
      const Comparison c = compareToReference(d, reference);
      const bool correct = c.nonFinite == 0 && c.relativeError < 1e-2;
      allCorrect = allCorrect && correct;
      rows.push_back({s.name, kernels[v], s.m, s.n, s.k, timings[v].medianMicroseconds, floor, correct});
    }
  }

  if (csv) csv << "shape,m,n,k,kernel,us,tflops,floor_us,correct\n";
  std::string shape;
  double cublasUs = 0;
  for (const Row& r : rows) {
    if (r.shape != shape) {
      shape = r.shape;
      cublasUs = r.microseconds;
      std::printf("\n%s: M %d N %d K %d, floor %.1f us\n  %-44s %9s %9s %9s %9s\n", r.shape.c_str(), r.m, r.n, r.k,
                  r.floor, "kernel", "us", "TFLOP/s", "/ floor", "cuBLAS /");
    }
    const double tflops = 2.0 * r.m * r.n * double(r.k) / (r.microseconds * 1e6);
    std::printf("  %-44s %9.1f %9.0f %9.2f %9.3f%s\n", r.kernel.c_str(), r.microseconds, tflops,
                r.microseconds / r.floor, cublasUs / r.microseconds, r.correct ? "" : "  WRONG");
    if (csv)
      csv << r.shape << ',' << r.m << ',' << r.n << ',' << r.k << ',' << r.kernel << ',' << r.microseconds << ','
          << tflops << ',' << r.floor << ',' << (r.correct ? 1 : 0) << '\n';
  }
  cublasLtDestroy(lt);
  cudaStreamDestroy(stream);
  std::printf("\n%s\n", allCorrect ? "every kernel matched cuBLASLt" : "a kernel did not match cuBLASLt (WRONG)");
  return allCorrect ? 0 : 1;
}
}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gemm_shape_probe: %s\n", error.what());
    return 1;
  }
}
