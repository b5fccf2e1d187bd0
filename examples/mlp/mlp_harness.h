// What the MLP example mains (mlp_example, mlp_llama_example, mlp_fused_example) do around their own variants, once:
// open the device, hold the stream, cuBLASLt handle and workspace, print the device line, measure the ceilings;
// check, time and record every variant into the result rows (CSV and summary); wire a hooked GEMM stage (split-K,
// persistent grid, launch arguments, the wait for its producer); pick the tuned runs per M and the split-K search.
// Host header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/ceilings.cuh"
#include "check_then_time.h"
#include "common/cublas_gemm.cuh"
#include "common/device_buffers.cuh"
#include "common/no_cuda_device.h"
#include "common/reference_gemm.cuh"
#include "cusync/error.h"
#include "cusync/stage.cuh"
#include "gemm_registry.h"
#include "mlp_options.h"
#include "mlp_results.h"
#include "mlp_variants.h"
#include "persistent_grid.h"
#include "split_k.h"
#include "split_state.h"
#include "tuned_runs.h"

namespace cusync::examples {

// The properties of device 0, or nullopt after "<program>: no CUDA device" on stderr.
inline std::optional<cudaDeviceProp> firstCudaDevice(const std::string& program) {
  if (missingCudaDevice(stderr, program + ": no CUDA device")) return std::nullopt;
  cudaDeviceProp properties{};
  CUSYNC_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  return properties;
}

// The CUDA objects every variant of a run uses: the stream it is checked and timed on, and cuBLASLt's handle and
// workspace (references and baselines).
class MlpDevice {
 public:
  static constexpr std::size_t kWorkspaceBytes = 64ull << 20;

  explicit MlpDevice(const cudaDeviceProp& properties) : properties_(properties), workspace_(kWorkspaceBytes) {
    // Blocking: the helpers that fill and compare buffers run on the legacy default stream.
    CUSYNC_CUDA_CHECK(cudaStreamCreate(&stream_));
    checkCublas(cublasLtCreate(&lt_), "create");
  }
  ~MlpDevice() {
    cublasLtDestroy(lt_);
    cudaStreamDestroy(stream_);
  }
  MlpDevice(const MlpDevice&) = delete;
  MlpDevice& operator=(const MlpDevice&) = delete;

  const cudaDeviceProp& properties() const { return properties_; }
  const char* name() const { return properties_.name; }
  int smCount() const { return properties_.multiProcessorCount; }
  cudaStream_t stream() const { return stream_; }
  cublasLtHandle_t lt() const { return lt_; }
  void* workspace() const { return workspace_.get(); }
  std::size_t workspaceBytes() const { return kWorkspaceBytes; }
  // The GEMMs of the references, as --reference chose them.
  ReferenceGemm referenceGemm(const MlpOptions& options) const {
    return options.reference == ReferenceGemms::Direct ? ReferenceGemm::direct()
                                                       : ReferenceGemm(lt_, workspace(), kWorkspaceBytes);
  }

  // "device: NAME, N SMs": how every main's first line starts (python/cusync/tune.py reads it).
  std::string line() const {
    return "device: " + std::string(properties_.name) + ", " + std::to_string(properties_.multiProcessorCount) +
           " SMs";
  }

  // The measured ceilings, printed; all zero with --check-only (nothing is timed, so no floor either).
  Ceilings measureCeilings(const MlpOptions& options) const {
    if (options.checkOnly) return Ceilings{};
    const Ceilings ceilings = examples::measureCeilings(lt_, workspace(), kWorkspaceBytes, stream_);
    std::printf("measured ceilings: %.0f TFLOP/s fp16 GEMM (cuBLAS 8192^3), %.0f GB/s one-pass read (floor), "
                "%.0f GB/s copy\n",
                ceilings.tflops, ceilings.readGBs, ceilings.copyGBs);
    return ceilings;
  }

 private:
  cudaDeviceProp properties_;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer<char> workspace_;
};

// What a variant's run is checked on: the buffers poisoned before it, its output and the output's reference.
struct CheckedOutput {
  std::vector<DeviceBuffer<__half>*> intermediates;
  DeviceBuffer<__half>* output = nullptr;
  const DeviceBuffer<__half>* reference = nullptr;
};

// The result rows of a run and whether every one was correct.
class MlpResults {
 public:
  // `middleStageColumn`: the CSV's extra column (writeResultsCsv), "" for none.
  explicit MlpResults(const MlpOptions& options, std::string middleStageColumn = "")
      : options_(options), middleStageColumn_(std::move(middleStageColumn)) {}

  // Appends `row` with the measured time, error and correctness; returns whether it was correct. On a wrong
  // result prints "FAILED: M=<m> <failureName>: relative error ..., N non-finite" unless `failureName` is empty
  // (the caller reports it its own way).
  bool record(Result row, const Measurement& measured, const std::string& failureName) {
    row.microseconds = measured.microseconds;
    row.relativeError = measured.check.relativeError;
    row.correct = measured.check.passes(kRelativeErrorBound);
    allCorrect_ = allCorrect_ && row.correct;
    if (measured.deferredSlot) deferredRows_.push_back({*measured.deferredSlot, rows_.size()});
    rows_.push_back(row);
    if (!row.correct && !failureName.empty())
      std::printf("FAILED: M=%d %s: relative error %.3g, %llu non-finite\n", row.m, failureName.c_str(),
                  measured.check.relativeError, measured.check.nonFinite);
    return row.correct;
  }

  // Checks then times `enqueue` (checkThenTime) and records it as `row` (config, variant and waves filled in by the
  // caller). A wrong result prints the FAILED line naming the row's configuration and variant.
  Measurement run(const std::function<void(cudaStream_t)>& enqueue, const CheckedOutput& checked, Result row,
                  cudaStream_t stream) {
    const Measurement measured = checkThenTime(enqueue, checked.intermediates, *checked.output, *checked.reference,
                                               stream, options_, deferred());
    record(row, measured, row.config + " " + row.variant);
    return measured;
  }

  // A baseline: the row (M, `config`, `variant`) with no waves.
  Measurement runBaseline(const std::function<void(cudaStream_t)>& enqueue, const CheckedOutput& checked, int m,
                          const std::string& config, const std::string& variant, const std::string& failureName,
                          cudaStream_t stream) {
    const Measurement measured = checkThenTime(enqueue, checked.intermediates, *checked.output, *checked.reference,
                                               stream, options_, deferred());
    record(Result{m, config, variant, 0, 0, false, 0, 0, 0}, measured, failureName);
    return measured;
  }

  // CUTLASS's stock Stream-K GEMMs (the caller's `enqueue`): recorded and always reported on one line.
  void runStreamKBaseline(const std::function<void(cudaStream_t)>& enqueue, const CheckedOutput& checked, int m,
                          cudaStream_t stream) {
    const Measurement measured = runBaseline(enqueue, checked, m, "CUTLASS-StreamK-128x128", "StreamK", "", stream);
    std::printf("M=%d CUTLASS Stream-K: %.1f us, relative error %.2g%s\n", m, measured.microseconds,
                measured.check.relativeError, measured.check.passes(kRelativeErrorBound) ? "" : " FAILED");
  }

  // From now on, variants are checked as they are recorded and timed together by timeDeferred (--interleave):
  // their enqueue functions must then own what they launch.
  void interleaveTimings() { deferred_.emplace(); }
  // Where checkThenTime hands checked variants when interleaving; nullptr: time each at once.
  DeferredTimings* deferred() { return deferred_ ? &*deferred_ : nullptr; }

  // Times the variants recorded since the last call in interleaved rounds and fills in their rows; a variant whose
  // output after its timed graph is wrong is marked wrong. Call while what they read and write is still alive.
  void timeDeferred(cudaStream_t stream) {
    if (!deferred_ || deferred_->empty()) return;
    const std::vector<Measurement> measured = deferred_->timeAll(stream, options_);
    for (const auto& [slot, index] : deferredRows_) {
      Result& row = rows_[index];
      row.microseconds = measured[slot].microseconds;
      if (row.correct && !measured[slot].check.passes(kRelativeErrorBound)) {
        row.correct = false;
        row.relativeError = measured[slot].check.relativeError;
        allCorrect_ = false;
        std::printf("FAILED after timing: M=%d %s %s: relative error %.3g, %llu non-finite\n", row.m,
                    row.config.c_str(), row.variant.c_str(), measured[slot].check.relativeError,
                    measured[slot].check.nonFinite);
      }
    }
    deferredRows_.clear();
  }

  // After every M: the CSV so far and a progress line, so that a run stopped by a time limit keeps what it
  // measured.
  void finishM(int m) {
    writeCsv();
    std::printf("M=%d done: %zu results so far\n", m, rows_.size());
    std::fflush(stdout);
  }

  void writeCsv() const { writeResultsCsv(options_.csvPath, rows_, middleStageColumn_); }

  // The last line of every main; returns the exit status (0 all correct, 1 not).
  int finish() const {
    std::printf("\nall results checked against the reference (bound %.0e): %s; CSV: %s\n", kRelativeErrorBound,
                allCorrect_ ? "all correct" : "FAILURES", options_.csvPath.c_str());
    return allCorrect_ ? 0 : 1;
  }

  void add(Result row) { rows_.push_back(std::move(row)); }  // a row that is not a measurement (the floor)
  const std::vector<Result>& rows() const { return rows_; }
  bool allCorrect() const { return allCorrect_; }

 private:
  const MlpOptions& options_;
  std::string middleStageColumn_;
  std::vector<Result> rows_;
  bool allCorrect_ = true;
  std::optional<DeferredTimings> deferred_;
  std::vector<std::pair<std::size_t, std::size_t>> deferredRows_;  // (DeferredTimings slot, index in rows_)
};

// One hooked-GEMM stage of an MLP chain: the stage on `kernel`'s tile grid for an [m, n] output, its tiles split
// into `splitParts` along K (split_state.h: the buffers the fused chains use too), and a persistent kernel's block
// count.
class GemmStage {
 public:
  GemmStage(const char* name, const GemmKernelEntry& kernel, int m, int n, std::uint32_t splitParts)
      : kernel_(&kernel), stage_(std::make_unique<Stage>(name, kernel.tileGrid(m, n))),
        split_(*stage_, kernel.tile, splitParts) {
    setPersistentGrid(*stage_, kernel);  // after the split: a persistent grid is sized by work units
  }

  Stage& stage() { return *stage_; }
  const Stage& stage() const { return *stage_; }
  const GemmKernelEntry& kernel() const { return *kernel_; }
  int occupancy() const { return kernel_->maxActiveBlocksPerSm(); }

  // D[m, n] = act(A[m, k] B[n, k]^T) on this stage, posting its tiles when `posts`.
  GemmLaunchArgs launchArgs(int m, int n, int k, const __half* a, const __half* b, __half* d, bool posts) const {
    GemmLaunchArgs args;
    args.m = m;
    args.n = n;
    args.k = k;
    args.a = a;
    args.b = b;
    args.d = d;
    args.stage = stage_->view();
    if (!posts) args.stage.semaphores = nullptr;
    args.splitPartials = split_.partialsPointer();
    args.splitArrivals = split_.arrivalsPointer();
    return args;
  }

 private:
  const GemmKernelEntry* kernel_;
  std::unique_ptr<Stage> stage_;
  SplitState split_;
};

// Makes the GEMM of `consumer` wait, before each k-block of A, for the tiles of `producer` (tileRows x tileColumns
// elements each) that hold it.
inline void waitForProducer(GemmLaunchArgs& consumer, const Stage& producer, std::uint32_t tileRows,
                            std::uint32_t tileColumns) {
  consumer.producerSemaphores = producer.view().semaphores;
  consumer.producerGrid = producer.grid();
  consumer.producerTileRows = tileRows;
  consumer.producerTileColumns = tileColumns;
}

// Whether `gemm`'s clusters (GemmKernelEntry::clusterRows) divide the tile rows of an [m, n] output: a 2x1 cluster's
// two blocks take two tile rows, and the stage's cluster order refuses a grid with a row left over.
inline bool clustersFitRows(const GemmKernelEntry& gemm, int m, int n) {
  return gemm.clusterRows <= 1 || gemm.tileGrid(m, n).y % std::uint32_t(gemm.clusterRows) == 0;
}

// Split-K settings the search tries for two GEMMs, [m, n1] over k1 on `first` and [m, n2] over k2 on `second`
// (split_k.h's candidates, each GEMM's slots at its own occupancy). Unsplit only where a GEMM is the pingpong
// kernel, which refuses split stages (tile_sync_pingpong_gemm_kernel.hpp), or runs in clusters (unsplit only).
inline std::vector<SplitK> gemmSplitCandidates(const GemmKernelEntry& first, int n1, int k1,
                                               const GemmKernelEntry& second, int n2, int k2, int m, int smCount) {
  if (first.pingpong || second.pingpong || first.clusterRows > 1 || second.clusterRows > 1) return {SplitK{1, 1}};
  return splitKCandidates(
      SplitKGemm{first.tileGrid(m, n1).tileCount(), k1 / first.tile.k, smCount * first.maxActiveBlocksPerSm()},
      SplitKGemm{second.tileGrid(m, n2).tileCount(), k2 / second.tile.k, smCount * second.maxActiveBlocksPerSm()});
}

// Per M of --m: the tuning table's runs, or nullopt to search that M (tunedRuns says which on stdout).
inline std::vector<std::optional<std::vector<TunedRun>>> tunedRunsPerM(const TuningSetup& tuning,
                                                                       const MlpOptions& options,
                                                                       const cudaDeviceProp& device,
                                                                       const std::string& model, int hidden,
                                                                       int intermediate,
                                                                       const std::vector<TileConfig>& configs) {
  std::vector<std::optional<std::vector<TunedRun>>> runs;
  for (int m : options.ms)
    runs.push_back(tunedRuns(tuning, options.program, device.name, device.multiProcessorCount, model, hidden,
                             intermediate, m, configs));
  return runs;
}

}  // namespace cusync::examples
