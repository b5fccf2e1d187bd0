// Every variant of the MLP examples, the baselines included, goes through checkThenTime: intermediates and output
// poisoned with NaN, one run checked against the reference (a stage that read an intermediate tile before its
// producer posted it would read NaN), then timed with CUDA graphs and the output of the last replay checked again.
// Host header.
#pragma once

#include <functional>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/device_buffers.cuh"
#include "common/graph_timer.cuh"
#include "mlp_options.h"

namespace cusync::examples {

// fp16 operands and intermediates, fp32 accumulation, K = 2752..12288.
constexpr double kRelativeErrorBound = 2e-2;

struct Measurement {
  double microseconds;  // 0 when only checking
  Comparison check;
};

// `intermediates` are poisoned before the checked run, `output` before the checked run and before timing.
inline Measurement checkThenTime(const std::function<void(cudaStream_t)>& enqueue,
                                 const std::vector<DeviceBuffer<__half>*>& intermediates, DeviceBuffer<__half>& output,
                                 const DeviceBuffer<__half>& reference, cudaStream_t stream,
                                 const MlpOptions& options) {
  for (DeviceBuffer<__half>* buffer : intermediates) poison(*buffer, stream);
  poison(output, stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  enqueue(stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  CUSYNC_CUDA_CHECK(cudaGetLastError());
  Measurement result{0, compareToReference(output, reference)};
  if (options.checkOnly) return result;
  poison(output, stream);
  result.microseconds =
      timeWithGraph(enqueue, stream, options.pairsPerGraph, 3, options.samples, options.warmupMilliseconds)
          .medianMicroseconds;
  const auto after = compareToReference(output, reference);
  if (!after.passes(kRelativeErrorBound)) result.check = after;
  return result;
}

}  // namespace cusync::examples
