// Every variant of the MLP examples, the baselines included, goes through checkThenTime: intermediates and output
// poisoned with NaN, one run checked against the reference (a stage that read an intermediate tile before its
// producer posted it would read NaN), then timed with CUDA graphs and the output of the last replay checked again.
// Host header.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/checked_interleaved_timings.h"
#include "common/device_buffers.cuh"
#include "common/graph_timer.cuh"
#include "mlp_options.h"

namespace cusync::examples {

// fp16 operands and intermediates, fp32 accumulation, K = 2752..12288.
constexpr double kRelativeErrorBound = 2e-2;

struct Measurement {
  double microseconds;  // 0 when only checking, or until DeferredTimings has timed it
  Comparison check;
  std::optional<std::size_t> deferredSlot;  // checked, to be timed by DeferredTimings::timeAll under this index
};

// Variants checked one by one and timed together afterwards, in rounds that interleave them
// (CheckedInterleavedTimings, which says why): the MLP examples' --interleave. Unlike there, a variant is captured
// only when timeAll is called, after every variant of the M was checked.
class DeferredTimings {
 public:
  // `enqueue` must own what it launches (or what it uses must outlive timeAll): it is captured only at timeAll.
  std::size_t add(std::function<void(cudaStream_t)> enqueue, DeviceBuffer<__half>& output,
                  const DeviceBuffer<__half>& reference) {
    pending_.push_back(Pending{std::move(enqueue), &output, &reference});
    return pending_.size() - 1;
  }
  bool empty() const { return pending_.empty(); }

  // Captures every pending variant, replays them all for the options' warm-up, times `samples` interleaved rounds,
  // then checks each variant's output once more after a replay of its own graph (outputs poisoned first); returns
  // one Measurement per slot and forgets them.
  std::vector<Measurement> timeAll(cudaStream_t stream, const MlpOptions& options) {
    std::vector<Measurement> measured;
    {
      CheckedInterleavedTimings timings(stream, options.pairsPerGraph, kRelativeErrorBound);
      for (std::size_t v = 0; v < pending_.size(); ++v)
        timings.add(v, pending_[v].enqueue, checkOutputAfterReplay(*pending_[v].output, *pending_[v].reference));
      for (const CheckedTiming& t : timings.timeAndCheck(options.warmupMilliseconds, options.samples))
        measured.push_back(Measurement{t.timing.medianMicroseconds, t.after, t.id});
    }  // the graphs go before what they launch
    pending_.clear();
    return measured;
  }

 private:
  struct Pending {
    std::function<void(cudaStream_t)> enqueue;
    DeviceBuffer<__half>* output;
    const DeviceBuffer<__half>* reference;
  };
  std::vector<Pending> pending_;
};

// `intermediates` are poisoned before the checked run, `output` before the checked run and before timing. With
// `deferred`, the checked variant is handed to it instead of being timed now (see DeferredTimings::add).
inline Measurement checkThenTime(const std::function<void(cudaStream_t)>& enqueue,
                                 const std::vector<DeviceBuffer<__half>*>& intermediates, DeviceBuffer<__half>& output,
                                 const DeviceBuffer<__half>& reference, cudaStream_t stream,
                                 const MlpOptions& options, DeferredTimings* deferred = nullptr) {
  for (DeviceBuffer<__half>* buffer : intermediates) poison(*buffer, stream);
  poison(output, stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  enqueue(stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  CUSYNC_CUDA_CHECK(cudaGetLastError());
  Measurement result{0, compareToReference(output, reference), std::nullopt};
  if (options.checkOnly) return result;
  if (deferred != nullptr) {
    result.deferredSlot = deferred->add(enqueue, output, reference);
    return result;
  }
  poison(output, stream);
  result.microseconds =
      timeWithGraph(enqueue, stream, options.pairsPerGraph, 3, options.samples, options.warmupMilliseconds)
          .medianMicroseconds;
  const auto after = compareToReference(output, reference);
  if (!after.passes(kRelativeErrorBound)) result.check = after;
  return result;
}

}  // namespace cusync::examples
