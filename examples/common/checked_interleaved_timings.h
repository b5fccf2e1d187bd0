// The examples' --interleave: variants of one problem, each already checked on its own, timed together in rounds
// that interleave them (InterleavedGraphTimer: one warm-up over all of them, then rounds that replay every variant's
// graph once in an order rotated per round), then checked again from a replay of their own graph. Host header.
//
// Why: timed one after the other, each variant meets the clocks and temperature the previous ones left; on the H100
// that moved a burst by up to 17% (docs/BENCHMARKS.md, session 11), and a probe timing ten kernels in sequence put
// one at 1.11x another where interleaved rounds gave 1.02x (session 19). Why the check after the timing: a race
// that the one checked run escaped may still show in a replay, and the replay checked is the timed graph itself.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/device_buffers.cuh"
#include "common/graph_timer.cuh"
#include "common/interleaved_graph_timer.cuh"
#include "cusync/error.h"

namespace cusync::examples {

// How a variant is checked after the timing: `poison` what one replay of its graph must rewrite (NaN, so that an
// element it leaves unwritten fails), then `compare` that with the reference once the replay is done.
struct CheckAfterReplay {
  std::function<void(cudaStream_t)> poison;
  std::function<Comparison()> compare;
};

// The common case: one output against its reference. Both must outlive the timings.
inline CheckAfterReplay checkOutputAfterReplay(DeviceBuffer<__half>& output, const DeviceBuffer<__half>& reference) {
  return {[&output](cudaStream_t stream) { poison(output, stream); },
          [&output, &reference] { return compareToReference(output, reference); }};
}

// One variant's share of a timing.
struct CheckedTiming {
  std::size_t id;      // the caller's name for the variant (CheckedInterleavedTimings::add)
  GraphTiming timing;  // over the timed rounds, per repetition of the variant's enqueued work
  Comparison after;    // after a replay of the variant's own graph
  bool passed;         // `after` within the timings' error bound
};

class CheckedInterleavedTimings {
 public:
  // Each variant's graph holds `repetitions` calls of its enqueue function; `relativeErrorBound` decides
  // CheckedTiming::passed.
  CheckedInterleavedTimings(cudaStream_t stream, int repetitions, double relativeErrorBound)
      : stream_(stream), bound_(relativeErrorBound), timer_(stream, repetitions) {}

  // Captures the variant's graph now. Whatever the graph's kernels read or write (buffers, stage state, side streams
  // and events) must outlive these timings: `owner`, when given, is kept until they are destroyed (after the
  // graphs), for what only the variant holds. Variants may be added after a timing; the next timing times them all.
  void add(std::size_t id, const std::function<void(cudaStream_t)>& enqueue, CheckAfterReplay check,
           std::shared_ptr<const void> owner = nullptr) {
    timer_.add(enqueue);
    variants_.push_back(Variant{id, std::move(check)});
    owners_.push_back(std::move(owner));
  }
  std::size_t size() const { return variants_.size(); }

  // Every variant added so far: `warmupRounds` rounds, continued for `warmupMilliseconds`, then `samples` timed
  // rounds; then, variant by variant in the order added, its check's poison, a replay of its graph alone and its
  // check's comparison. One CheckedTiming per variant, in that order.
  std::vector<CheckedTiming> timeAndCheck(int warmupMilliseconds, int samples, int warmupRounds = 3) {
    const std::vector<GraphTiming> timings = timer_.run(warmupRounds, warmupMilliseconds, samples);
    std::vector<CheckedTiming> measured;
    for (std::size_t v = 0; v < variants_.size(); ++v) {
      variants_[v].check.poison(stream_);
      CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream_));
      timer_.replay(v);
      const Comparison after = variants_[v].check.compare();
      measured.push_back(CheckedTiming{variants_[v].id, timings[v], after, after.passes(bound_)});
    }
    return measured;
  }

 private:
  struct Variant {
    std::size_t id;
    CheckAfterReplay check;
  };
  cudaStream_t stream_;
  double bound_;
  std::vector<Variant> variants_;
  std::vector<std::shared_ptr<const void>> owners_;  // declared before timer_: its graphs go before what they use
  InterleavedGraphTimer timer_;
};

}  // namespace cusync::examples
