// The MLP examples' results: one row per (M, configuration, variant), written as CSV (bench/mlp/ reads it) and
// summarized per M as the best of each family next to the floor. Host header.
#pragma once

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace cusync::examples {

struct Result {
  int m;
  std::string config, variant;
  double microseconds;
  double relativeError;
  bool correct;
  double wavesProducer, wavesConsumer;  // waves of the first and of the last GEMM
  int avoidedWaitKernels;               // wait-kernels left out ("avoid wait-kernel", paper IV-C)
  double wavesMiddle = 0;               // waves of the stage between the GEMMs (LLaMA: SwiGLU), if any
};

// Columns: M,config,variant,us,relative_error,correct,waves_gemm1,waves_gemm2,avoided_wait_kernel and, when
// `middleStageColumn` is not empty, one more column with that name holding `wavesMiddle` (LLaMA: waves_swiglu).
// avoided_wait_kernel counts the wait-kernels left out (0 or 1 for two stages, up to 2 for three).
inline void writeResultsCsv(const std::string& path, const std::vector<Result>& results,
                            const std::string& middleStageColumn = "") {
  std::ofstream csv(path);
  csv << "M,config,variant,us,relative_error,correct,waves_gemm1,waves_gemm2,avoided_wait_kernel";
  if (!middleStageColumn.empty()) csv << "," << middleStageColumn;
  csv << "\n";
  for (const auto& r : results) {
    csv << r.m << "," << r.config << "," << r.variant << "," << r.microseconds << "," << r.relativeError << ","
        << r.correct << "," << r.wavesProducer << "," << r.wavesConsumer << "," << r.avoidedWaitKernels;
    if (!middleStageColumn.empty()) csv << "," << r.wavesMiddle;
    csv << "\n";
  }
}

// Per M, the best correct result of each family (cuBLAS, Stream-K, StreamSync, PDL grid sync, cusync) and the floor
// (`floorUs(m)`; 0 when not measured).
inline void printSummary(const std::vector<Result>& results, const std::vector<int>& ms,
                         const std::function<double(int)>& floorUs) {
  std::printf("\n%6s %10s %9s %9s | %-52s %9s %7s %7s | %-52s %9s | %-52s %9s %7s %7s\n", "M", "floor_us", "cuBLAS",
              "StreamK",
              "best StreamSync (config)", "us", "waves1", "waves2", "best PDL-GridSync", "us", "best cusync", "us",
              "vsSS", "vsBLAS");
  for (int m : ms) {
    auto best = [&](auto predicate) {
      const Result* b = nullptr;
      for (const auto& r : results)
        if (r.m == m && r.correct && predicate(r) && (!b || r.microseconds < b->microseconds)) b = &r;
      return b;
    };
    const Result* blas = best([](const Result& r) { return r.variant == "cuBLAS"; });
    const Result* streamK = best([](const Result& r) { return r.variant == "StreamK"; });
    const Result* stream = best([](const Result& r) { return r.variant == "StreamSync"; });
    const Result* grid = best([](const Result& r) { return r.variant.rfind("PDL-GridSync", 0) == 0; });
    const Result* cus = best([](const Result& r) {
      return r.variant.find("TileSync+") == 0 || r.variant.find("RowSync+") == 0;
    });
    auto label = [](const Result* r) { return r ? r->variant + " (" + r->config + ")" : std::string("-"); };
    auto time = [](const Result* r) { return r ? r->microseconds : 0.0; };
    std::printf("%6d %10.1f %9.1f %9.1f | %-52s %9.1f %7.2f %7.2f | %-52s %9.1f | %-52s %9.1f %7.3f %7.3f\n", m,
                floorUs(m), time(blas), time(streamK), label(stream).c_str(), time(stream),
                stream ? stream->wavesProducer : 0, stream ? stream->wavesConsumer : 0, label(grid).c_str(),
                time(grid), label(cus).c_str(), time(cus), stream && cus ? time(stream) / time(cus) : 0,
                blas && cus ? time(blas) / time(cus) : 0);
  }
}

}  // namespace cusync::examples
