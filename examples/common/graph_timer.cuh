// Times GPU work the way docs/METHOD says: captured into a CUDA graph (launch gaps as in production), warmed up,
// replayed several times, median reported. Host code.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include <cuda_runtime.h>

#include "cusync/error.h"

namespace cusync::examples {

struct GraphTiming {
  double medianMicroseconds;  // per repetition of the enqueued work
  double minMicroseconds;
  double maxMicroseconds;
};

// Captures `repetitions` calls of `enqueue(stream)` into one graph, replays it `warmups` + `samples` times, and
// returns the per-repetition time of the median replay. With `warmupMilliseconds` > 0 the warm-up goes on for at least
// that long first: at large M the H100 runs the MLP at its 700 W cap once the power limiter has caught up (about
// 1.37 GHz), while a short burst after idle time runs faster (docs/BENCHMARKS.md, session 11: torch's cuBLAS MLP at
// M = 1024 took 465 us sustained against 416-427 us in the bursts of the default timing). `enqueue` may fork work onto other streams through events;
// it must join them back into `stream`.
inline GraphTiming timeWithGraph(const std::function<void(cudaStream_t)>& enqueue, cudaStream_t stream,
                                 int repetitions, int warmups, int samples, int warmupMilliseconds = 0) {
  cudaGraph_t graph = nullptr;
  CUSYNC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < repetitions; ++i) enqueue(stream);
  CUSYNC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  CUSYNC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t start, stop;
  CUSYNC_CUDA_CHECK(cudaEventCreate(&start));
  CUSYNC_CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < warmups; ++i) CUSYNC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  const auto warmEnd = std::chrono::steady_clock::now() + std::chrono::milliseconds(warmupMilliseconds);
  while (std::chrono::steady_clock::now() < warmEnd) {
    // Two replays in flight at a time: the GPU never idles, and the host never queues more than it waits for.
    CUSYNC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUSYNC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  std::vector<double> times;
  for (int i = 0; i < samples; ++i) {
    CUSYNC_CUDA_CHECK(cudaEventRecord(start, stream));
    CUSYNC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUSYNC_CUDA_CHECK(cudaEventRecord(stop, stream));
    CUSYNC_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUSYNC_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(1000.0 * ms / repetitions);
  }
  CUSYNC_CUDA_CHECK(cudaGetLastError());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  std::sort(times.begin(), times.end());
  return GraphTiming{times[times.size() / 2], times.front(), times.back()};
}

}  // namespace cusync::examples
