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

namespace detail {
// Spins one thread on the GPU's global timer for `nanoseconds` (see holdStream). A template, so that every
// translation unit including this header may define it.
template <class = void>
__global__ void holdStreamKernel(unsigned long long nanoseconds) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}
}  // namespace detail

// Enqueued before a timing's start event, so that the event fires only after the host has also enqueued the timed
// work. Why: a timer records its start event and then launches the graph; when the host is slow to launch (other
// processes on every core, such as a build), the GPU reaches the event first and idles until the launch arrives,
// and that idle time is counted. Session 20's torch baselines, timed while nvcc ran on all 16 cores, put torch's
// cuBLAS GPT-3 MLP at M = 256 at 165 us, against 133 us for the same kernels in a quiet process (docs/BENCHMARKS.md).
// 50 us covers the launch of an event and a graph (about 10 us); the device scripts no longer time during builds.
inline void holdStream(cudaStream_t stream, unsigned long long nanoseconds = 50000) {
  detail::holdStreamKernel<><<<1, 1, 0, stream>>>(nanoseconds);
}

struct GraphTiming {
  double medianMicroseconds;  // per repetition of the enqueued work
  double minMicroseconds;
  double maxMicroseconds;
};

// `repetitions` calls of `enqueue(stream)` captured into one graph, instantiated; the graph itself is destroyed.
inline cudaGraphExec_t captureRepetitions(const std::function<void(cudaStream_t)>& enqueue, cudaStream_t stream,
                                          int repetitions) {
  cudaGraph_t graph = nullptr;
  CUSYNC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < repetitions; ++i) enqueue(stream);
  CUSYNC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  CUSYNC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUSYNC_CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

// Captures `repetitions` calls of `enqueue(stream)` into one graph, replays it `warmups` + `samples` times, and
// returns the per-repetition time of the median replay. `enqueue` may fork work onto other streams through events;
// it must join them back into `stream`.
// With `warmupMilliseconds` > 0 the warm-up goes on for at least that long, so that the work is timed in the power
// and thermal state of sustained work. A short burst after idle time runs faster: on the H100, torch's cuBLAS GPT-3
// MLP at M = 1024 took 419-427 us right after idle, 452-491 after 50-500 ms of warm-up and 503-534 after 1-2 s
// (docs/BENCHMARKS.md, session 11), where the GPU runs at its 700 W cap.
inline GraphTiming timeWithGraph(const std::function<void(cudaStream_t)>& enqueue, cudaStream_t stream,
                                 int repetitions, int warmups, int samples, int warmupMilliseconds = 0) {
  cudaGraphExec_t exec = captureRepetitions(enqueue, stream, repetitions);
  cudaEvent_t start, stop;
  CUSYNC_CUDA_CHECK(cudaEventCreate(&start));
  CUSYNC_CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < warmups; ++i) CUSYNC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  const auto warmEnd = std::chrono::steady_clock::now() + std::chrono::milliseconds(warmupMilliseconds);
  while (std::chrono::steady_clock::now() < warmEnd) {
    // Two replays per host round trip: the GPU idles only for a launch, and the host queues no more than it waits for.
    CUSYNC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUSYNC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  std::vector<double> times;
  for (int i = 0; i < samples; ++i) {
    holdStream(stream);
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
  std::sort(times.begin(), times.end());
  return GraphTiming{times[times.size() / 2], times.front(), times.back()};
}

}  // namespace cusync::examples
