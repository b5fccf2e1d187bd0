// Times several variants of GPU work side by side, in rounds that interleave them, so that clock and thermal drift
// fall on all of them alike. Host code.
//
// Why: graph_timer.cuh times one variant at a time. A probe that times ten kernels one after the other gives the
// first ones the clocks of a GPU that was idle and the last ones those of a GPU that has been busy for a while; on
// the H100 that alone moves a 10 ms burst by up to 17% (docs/BENCHMARKS.md, session 11); gemm_shape_probe, timing in
// sequence, put the hooked QKV GEMM at 1.11x CUTLASS stock where interleaved it is 1.02x (session 19). Here every
// round replays each variant's graph once, in an order rotated each round, and each variant's median is over its
// rounds.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

#include <cuda_runtime.h>

#include "common/graph_timer.cuh"
#include "cusync/error.h"

namespace cusync::examples {

class InterleavedGraphTimer {
 public:
  // Each variant is `repetitions` calls of its enqueue function captured into one graph (launch gaps as in
  // production).
  InterleavedGraphTimer(cudaStream_t stream, int repetitions) : stream_(stream), repetitions_(repetitions) {
    CUSYNC_CUDA_CHECK(cudaEventCreate(&start_));
    CUSYNC_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  InterleavedGraphTimer(const InterleavedGraphTimer&) = delete;
  InterleavedGraphTimer& operator=(const InterleavedGraphTimer&) = delete;
  ~InterleavedGraphTimer() {
    for (cudaGraphExec_t exec : execs_) cudaGraphExecDestroy(exec);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }

  // Captures a variant now; whatever its kernels read (buffers, stage state) must outlive the timer's last replay.
  // Returns the variant's index.
  std::size_t add(const std::function<void(cudaStream_t)>& enqueue) {
    execs_.push_back(captureRepetitions(enqueue, stream_, repetitions_));
    return execs_.size() - 1;
  }

  // Replays variant `v`'s graph once and waits for it (e.g. to check its result).
  void replay(std::size_t v) {
    CUSYNC_CUDA_CHECK(cudaGraphLaunch(execs_.at(v), stream_));
    CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // `warmupRounds` untimed rounds, continued until `warmupMilliseconds` have passed, then `samples` timed rounds.
  // Returns one timing per variant, per repetition of its enqueued work.
  std::vector<GraphTiming> run(int warmupRounds, int warmupMilliseconds, int samples) {
    const auto warmEnd = std::chrono::steady_clock::now() + std::chrono::milliseconds(warmupMilliseconds);
    for (int round = 0; round < warmupRounds || std::chrono::steady_clock::now() < warmEnd; ++round) {
      for (cudaGraphExec_t exec : execs_) CUSYNC_CUDA_CHECK(cudaGraphLaunch(exec, stream_));
      CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    std::vector<std::vector<double>> times(execs_.size());
    for (int round = 0; round < samples; ++round)
      for (std::size_t i = 0; i < execs_.size(); ++i) {
        const std::size_t v = (i + std::size_t(round)) % execs_.size();
        holdStream(stream_);  // the start event fires after the graph's launch is enqueued too
        CUSYNC_CUDA_CHECK(cudaEventRecord(start_, stream_));
        CUSYNC_CUDA_CHECK(cudaGraphLaunch(execs_[v], stream_));
        CUSYNC_CUDA_CHECK(cudaEventRecord(stop_, stream_));
        CUSYNC_CUDA_CHECK(cudaEventSynchronize(stop_));
        float ms = 0;
        CUSYNC_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
        times[v].push_back(1000.0 * ms / repetitions_);
      }
    CUSYNC_CUDA_CHECK(cudaGetLastError());
    std::vector<GraphTiming> timings;
    for (std::vector<double>& t : times) {
      std::sort(t.begin(), t.end());
      timings.push_back(t.empty() ? GraphTiming{0, 0, 0} : GraphTiming{t[t.size() / 2], t.front(), t.back()});
    }
    return timings;
  }

 private:
  cudaStream_t stream_;
  int repetitions_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::vector<cudaGraphExec_t> execs_;
};

}  // namespace cusync::examples
